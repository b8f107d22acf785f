"""Small phrasing and predicates several rules share (the questions they ask of the model
live in model/readings/)."""

from __future__ import annotations

from typing import Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from streamlint.checked_file import CheckedFile
from streamlint.fixes.idioms import WAIT_LINES, fresh_name, import_alias
from streamlint.model.api import torch_api

# A sync that times or measures every step of a training loop (SL103, SL502).
STEP_TIMING_HELP = ("time a window of steps instead: read a host timer (or record events) every N steps and "
                    "synchronize once per log window")


# The words the model gives an operation that is no call: prose, never code.
OPERATION_WORDS = frozenset({"arithmetic", "in-place arithmetic", "a comparison", "an elementwise operation",
                             "an f-string", "string formatting",
                             "truth value", torch_api.SLICE_BOUND, torch_api.INTEGER_ARGUMENT, torch_api.MASK_INDEX,
                             torch_api.MASK_STORE, torch_api.HOST_STORE})


def hot_entry_name(entry: str, function: str) -> str:
    """The entry as a message names it: `forward` for the entry itself, `Block.forward` for a helper's."""
    return entry.rsplit(".", 1)[-1] if entry == function else entry


def calling_loop_named(analysis, loops: list) -> Optional[str]:
    """The first loop of another function that calls a helper on every pass (hot_paths.calling_loops), in words:
    "iteration of the loop in `train` that calls it at line 13" (a caller of another module: "... at line 13 of
    model.py", named after the checked file's own callers); None when there is none."""
    if not loops:
        return None
    first = min(loops, key=lambda c: (bool(c.module), _line_in(analysis, c)))
    where = f" of {first.module.rsplit('.', 1)[-1]}.py" if first.module else ""
    loop = "the top-level loop" if first.top_level else f"the loop in `{first.function}`"  # (a script's)
    return f"iteration of {loop} that calls it at line {_line_in(analysis, first)}{where}"


def _line_in(analysis, calling) -> int:
    """The line of a calling loop's call, in the checked file or in its caller's module."""
    if not calling.module:
        return analysis.line_of(calling.call)
    unit = analysis.v3.solver.program.unit(calling.module)
    placed = MetadataWrapper(unit.tree, unsafe_skip_copy=True).resolve(PositionProvider).get(calling.call) \
        if unit is not None else None
    return placed.start.line if placed is not None else 0


def api_named(api: str) -> str:
    """An operation as a message names it: its call as code (`cp.asarray`), an operator
    in words ("this arithmetic")."""
    if api in OPERATION_WORDS:
        return "this " + api.removeprefix("a ").removeprefix("an ")
    return f"`{api}`"


# How each framework spells "make stream B wait for stream A" (SL401/SL402 fixes).
_DEFAULT_SPELLING = {
    "torch": "torch.cuda.current_stream()",
    "cupy": "cupy.cuda.Stream.null",
    "numba": "cuda.default_stream()",
    "cuda-python": "0",
}
# The per-thread default stream, where a framework names it (PyTorch has no object for it).
_PER_THREAD_SPELLING = {"cupy": "cupy.cuda.Stream.ptds", "numba": "cuda.per_thread_default_stream()"}
# The idioms the SL401 fix inserts (one table for messages and fixes), spelled with the
# usual module names; cuda-python has no fix, only the message.
_WAIT_IDIOM = {
    framework: "`" + "; ".join(lines).replace("{m}", "cuda").replace("{e}", "e") + "`"
    for framework, lines in WAIT_LINES.items()
}
_WAIT_IDIOM["cuda-python"] = "`cudaEventRecord(e, {a})` then `cudaStreamWaitEvent({b}, e, 0)`"


# How a label starts that describes a stream the code has no name for where the advice goes (an object's stream
# of an object the code never names): no default stream, no code.
DESCRIBED_STREAM = "the stream "


def stream_code(label: str, framework: str, analysis: Optional[CheckedFile] = None, legacy: bool = False) -> str:
    """A stream label as code the user can paste (the default streams have no name),
    spelled with what the file has (`get_accelerator()` where torch is not imported).
    `legacy`: the label is the code's (`Words.stream_for_code`), where "the legacy default
    stream" is that stream, never a script's current one: PyTorch spells it `default_stream()`."""
    if label.startswith(DESCRIBED_STREAM):
        return label  # (a side stream the code cannot name here: advice says it in words)
    if not label or label.startswith("the ") or " " in label:
        # (a framework without a spelling keeps the words, which advice then says as prose)
        spelled = _DEFAULT_SPELLING.get(framework, label if label.startswith("the ") else "the default stream")
        if legacy and framework == "torch" and label == "the legacy default stream":
            spelled = "torch.cuda.default_stream()"
        spelled = _PER_THREAD_SPELLING.get(framework, spelled) if label == "the per-thread default stream" else spelled
        if framework == "torch" and analysis is not None:
            spelled = spelled.replace("torch.cuda", analysis.torch_namespace, 1)
        if framework == "cupy" and analysis is not None:
            spelled = spelled.replace("cupy", analysis.cupy_namespace, 1)
        return spelled
    return label


def is_placeholder(label: str) -> bool:
    """A stream or value the model could not name in code ("the default stream")."""
    return label.startswith("the ")


def sync_idiom(stream: str) -> str:
    """`s.synchronize()`, or in words where the stream has no spelling in code."""
    return f"synchronize {stream}" if is_placeholder(stream) else f"`{stream}.synchronize()`"


def wait_idiom(first: str, second: str, framework: str, analysis: Optional[CheckedFile] = None,
               legacy: bool = False) -> str:
    a, b = stream_code(first, framework, analysis, legacy), stream_code(second, framework, analysis, legacy)
    if is_placeholder(a) or is_placeholder(b):  # no code to paste: say it in words
        return f"make {named(b)} wait for {named(a)} (an event recorded on one, waited on by the other)"
    if a == b:  # (spelled alike here, `x.wait_stream(x)` would order nothing: say it in words)
        return ("make the reading stream wait for the writing one where each can be named (an event recorded "
                "after the write, waited on before the read)")
    idiom = _cuda_python_wait(analysis) if framework == "cuda-python" and analysis is not None else None
    return over_elements((idiom or _WAIT_IDIOM.get(framework, _WAIT_IDIOM["cupy"])).format(a=a, b=b), (a, b))


def _cuda_python_wait(analysis: CheckedFile) -> Optional[str]:
    """cuda-python's wait as the file can write it: cuda.core's `b.wait(a)`; else an event made, recorded
    and waited on through the runtime (or driver) module under the name the file imports it as."""
    module = analysis.module
    for dotted, (create, record, wait) in _CUDA_PYTHON_EVENTS.items():
        alias = import_alias(module, dotted)
        if alias:
            event = fresh_name(analysis.source, "ready")
            return (f"`err, {event} = {alias}.{create}; {alias}.{record}({event}, {{a}}); "
                    f"{alias}.{wait}({{b}}, {event}, 0)`")
    core = any(import_alias(module, f"cuda.core{suffix}.{name}") for suffix in ("", ".experimental")
               for name in ("Device", "launch"))
    return "`{b}.wait({a})`" if core else None


# The runtime's and the driver's event calls, by the module a file imports (newest first).
_CUDA_PYTHON_EVENTS = {
    "cuda.bindings.runtime": ("cudaEventCreate()", "cudaEventRecord", "cudaStreamWaitEvent"),
    "cuda.cudart": ("cudaEventCreate()", "cudaEventRecord", "cudaStreamWaitEvent"),
    "cuda.bindings.driver": ("cuEventCreate(0)", "cuEventRecord", "cuStreamWaitEvent"),
    "cuda.cuda": ("cuEventCreate(0)", "cuEventRecord", "cuStreamWaitEvent"),
}


def over_elements(code: str, labels) -> str:
    """Advice naming a stream drawn from a collection by an index the analysis does not
    know (`streams[...]`): the code the user can paste loops over the collection."""
    if code.count("`") != 2 or not code.startswith("`") or not code.endswith("`"):
        return code
    body = code[1:-1]
    loops = []
    for label, var in zip(dict.fromkeys(lb for lb in labels if lb.count(_ELEMENT) == 1), ("s", "t")):
        # `self.stages[...].stream`: loop over the stages, name the stream of each
        collection, _, rest = label.partition(_ELEMENT)
        loops.append(f"for {var} in {collection}: ")
        body = body.replace(label, var + rest)
    return f"`{''.join(loops)}{body}`" if loops else code


_ELEMENT = "[...]"


def named(label: str) -> str:
    """A name as code (`s1`, `self.buf`); a placeholder the model gives for something
    without a name ("the current stream", "the returned value") as prose."""
    return label if label.startswith(("the ", "a ", "an ", "another ")) else f"`{label}`"


def joined(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def calls_of(analysis: CheckedFile, node: cst.CSTNode, class_name: str) -> list[int]:
    """`call_lines` for the function `node` (a method of `class_name` when given)."""
    short = node.name.value if isinstance(node, cst.FunctionDef) else ""
    method = bool(class_name)
    if _is_property_node(node):
        return []
    calls: list[cst.Call] = []
    instances: set[str] = {"self"}

    class Calls(cst.CSTVisitor):
        def visit_Assign(self, assign: cst.Assign) -> None:
            value = assign.value
            if isinstance(value, cst.Call) and class_name and _decorator_name(value.func) == class_name:
                instances.update(t.target.value for t in assign.targets if isinstance(t.target, cst.Name))

        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if method and isinstance(func, cst.Attribute) and func.attr.value == short and isinstance(func.value, cst.Name):
                calls.append(call)
            elif not method and isinstance(func, cst.Name) and func.value == short:
                calls.append(call)

        def visit_FunctionDef(self, function: cst.FunctionDef) -> bool:
            return function is not node  # (its own recursive calls are not callers)

    analysis.module.visit(Calls())
    found = (c for c in calls if not method or c.func.value.value in instances)
    return sorted({line for line in (analysis.line_of(c) for c in found) if line})


_PROPERTIES = frozenset({"property", "cached_property"})


def _is_property_node(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.FunctionDef) and any(_decorator_name(d.decorator) in _PROPERTIES
                                                     for d in node.decorators)


def _decorator_name(expr: cst.BaseExpression) -> str:
    """The last name of `name`, `a.b.name` (a decorator, a called class)."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return ""


def lines_named(lines: list[int]) -> str:
    """"line 16", "lines 16 and 19"."""
    return f"line{'s' if len(lines) > 1 else ''} {joined([str(n) for n in lines])}"


def handed_to_callers_of(analysis: CheckedFile, node: cst.CSTNode, class_name: str, what_they_do: str,
                         yielded: bool = False) -> str:
    """What the function `node` (a method of `class_name` when given) hands its callers (`yielded`: the consumers of
    the generator), and where they call it."""
    short = node.name.value if isinstance(node, cst.FunctionDef) else ""
    if _is_property_node(node):
        return f"handed to the readers of the property `{short}`, which {what_they_do}"
    lines = calls_of(analysis, node, class_name)
    where = f" ({lines_named(lines)})" if lines else ""
    who = "the consumers of the generator" if yielded else "the callers of"
    return f"handed to {who} `{short}()`, which {what_they_do}{where}"


def may_be_none_in(analysis: CheckedFile, function: cst.CSTNode, label: str) -> bool:
    """`may_be_none` where the function is `function` (its syntax node)."""
    scope: cst.CSTNode = analysis.module if "." in label else function
    if "." not in label and isinstance(function, cst.FunctionDef):
        params = function.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value == label and param.default is not None and _maybe_none(param.default):
                return True
    stack = [scope]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            targets = [node.target]
        else:
            continue
        if any(analysis.code(t) == label for t in targets) and _maybe_none(node.value):
            return True
    return False


def _maybe_none(expr: Optional[cst.BaseExpression]) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value == "None"
    if isinstance(expr, cst.IfExp):
        return _maybe_none(expr.body) or _maybe_none(expr.orelse)
    if isinstance(expr, cst.BooleanOperation):
        return _maybe_none(expr.right)
    if not isinstance(expr, cst.Call):
        return False
    func, args = expr.func, expr.args
    if isinstance(func, cst.Name) and func.value in ("getattr", "next"):
        default_at = 2 if func.value == "getattr" else 1
        return len(args) > default_at and _maybe_none(args[default_at].value)
    if isinstance(func, cst.Attribute) and func.attr.value == "get":
        return len(args) == 1 or (len(args) > 1 and _maybe_none(args[1].value))
    return False


def wait_line(builder, node: cst.CSTNode, written: Optional[cst.CSTNode], writer: str, framework: str) -> int:
    """The line before which a stream waits for `writer` (a label) before the read at `node`: the read's
    statement; but where the wait names the writer as the current stream, before the outermost `with`
    around the read and not around the write (`written`, None: the caller's): inside it another stream
    is current (`with torch.cuda.stream(side):` makes `side` wait on itself)."""
    at = builder.analysis.line_of(node)
    if stream_code(writer, framework, builder.analysis, legacy=True) != stream_code("the current stream", framework,
                                                                                    builder.analysis):
        return at
    outer = _withs_around(builder, node, written)
    return builder.analysis.line_of(outer[-1]) if outer else at


def join_place(builder, work: cst.CSTNode, fork: cst.CSTNode) -> str:
    """Where the current stream joins a side stream forked at `fork` and given `work`: after the work's
    statement, outside every `with` around it and not around the fork (where the side stream or another
    is current): "after line N", or "after the `with` block that ends at line N"."""
    outer = _withs_around(builder, work, fork)
    statement = outer[-1] if outer else builder.statement_of(work) or work
    placed = builder.analysis.position(statement)
    end = placed.end.line if placed else builder.analysis.line_of(work)
    return f"after the `with` block that ends at line {end}" if outer else f"after line {end}"


def _withs_around(builder, node: cst.CSTNode, other: Optional[cst.CSTNode]) -> list:
    """The `with` statements of `node`'s function around it and not around `other`, innermost first."""
    around_other = {id(a) for a in builder.ancestors(other)} if other is not None else set()
    found = []
    for ancestor in builder.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(ancestor, cst.With) and id(ancestor) not in around_other:
            found.append(ancestor)
    return found


def start_of(analysis):
    """Where a node starts in the checked file, (line, column), or None: the order of two nodes of one function."""
    def start(node: cst.CSTNode) -> Optional[tuple[int, int]]:
        placed = analysis.position(node)
        return (placed.start.line, placed.start.column) if placed is not None else None
    return start
