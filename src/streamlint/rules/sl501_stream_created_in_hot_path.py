"""SL501 stream-created-in-hot-path: a CUDA stream or event created in a loop body or forward()."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional

import libcst as cst

from streamlint.fixes.edits import FixBuilder, binding_pattern, make_fix
from streamlint.fixes.idioms import fresh_name
from streamlint.fixes.model import Applicability, Edit
from streamlint.model import api
from streamlint.model.readings.hot_paths import (
    Work,
    calling_loops,
    guarded_in,
    own_operations,
    repeating_loops,
    work_in,
)
from streamlint.model.readings.operations import OperationAt
from streamlint.model.syntax.ancestry import Ancestry, comprehension_of
from streamlint.model.syntax.purpose import event_on_purpose, made_to_time
from streamlint.rules._shared import calling_loop_named, hot_entry_name
from streamlint.rules.base import Finding, Rule

_STREAM, _EVENT = "stream creation", "event creation"  # Operation.op of a creation (the fact tables' kinds)
_CREATIONS = (_STREAM, _EVENT)
_EVENT_WHY = "each one is created and destroyed again with a driver call; an event can be re-recorded"
_WHY = {
    "torch": "torch hands out 32 pool streams per priority round-robin, so the 33rd aliases the 1st",
    "cupy": "each one is a new CUDA stream whose memory-pool arena is not freed automatically",
    "numba": "each one is a driver call, and its deferred destruction can synchronize the device",
    "cuda-python": "each one is a driver call and must be destroyed again",
}


class StreamCreatedInHotPath(Rule):
    """
    ## What it does
    Flags the creation of a CUDA stream or event in a hot path: a loop body, or
    the `forward` method of an `nn.Module` subclass (or a function stored as a
    module's `forward`: `UNet.forward = patched_forward`), the `__getitem__`
    of a `torch.utils.data.Dataset` subclass (once per sample), or a method a
    framework calls once per step (a custom autograd function's `forward` and
    `backward`, Lightning's `training_step` and batch hooks, a Hugging Face
    trainer's `training_step`, a Gym environment's `step`, an iterator's
    `__next__`).
    - PyTorch: `torch.cuda.Stream()`, `torch.cuda.Event()`
    - CuPy: `cp.cuda.Stream()`, `cp.cuda.Event()`
    - Numba-CUDA: `cuda.stream()`, `cuda.event()`
    - cuda-python: `cudaStreamCreate*`, `cudaEventCreate*`, `cuStreamCreate*`,
      `cuEventCreate`

    Which loops make a hot path is the same for SL103, SL201, SL501 and SL502
    (SL501 also reports a creation under a test that runs only sometimes):
    {loop_policy}
    - an outer loop, whose every pass runs a nested loop (its own, or in a
      function it calls) that already waits for the GPU on every pass, or
      its own nested loop of training steps (a backward pass and an update
      every pass), is an epoch around its steps: no hot path for what it
      does outside that nested loop (one wait more per epoch is spread over
      the epoch's steps).

    A comprehension that builds a set of streams or events once at set-up
    (`streams = [torch.cuda.Stream() for _ in range(4)]`) is not a hot path.
    Nor are timing marks: events made in a loop that reads the elapsed time,
    when the body only records them, waits for them and reads the time
    (`start.record()`, `end.synchronize()`,
    `cp.cuda.get_elapsed_time(start, end)`), in a benchmark, per step of a
    training loop or per chunk of a pipeline alike. Nor is a PyTorch event
    asked for timing (`torch.cuda.Event(enable_timing=True)`), wherever it is
    made (a hook that times every call): each measurement needs a pair of its
    own. Making one costs
    microseconds, outside the timed region; the wait that reads the time is the
    cost, and SL103 and SL502 judge that wait where it happens. An event that
    orders streams (`wait_event`) is no timing mark and is reported.

    The creations of one iteration (or of one `forward` call) are one problem:
    a loop that creates four events yields one finding, at the first,
    naming all of them. Creations in an outer and an inner loop are two.

    ## Why is this bad?
    Streams and events are long-lived resources; what they cost or do when made
    anew on every call depends on the framework, and none of it is useful:
    - PyTorch hands out streams from a fixed pool: 32 per priority level per
      device, round-robin, never destroyed. A "new" stream per call is just the
      next pool slot, and after 32 requests it is the same CUDA stream as one
      handed out earlier, for instance a copy stream kept elsewhere, so work
      meant to run side by side silently serializes.
    - CuPy creates a CUDA stream per `Stream()` (`cudaStreamCreateWithPriority`)
      and destroys it when the object is collected. Its memory pool keeps free
      blocks in arenas per stream, and the arenas of destroyed streams are not
      freed automatically, so memory allocated under each short-lived stream
      stays cached.
    - Numba creates a stream with `cuStreamCreate` each time and queues its
      destruction (and that of events) for deferred deallocation; flushing that
      queue can synchronize the device at an unpredictable point.
    - cuda-python makes a driver call for each stream or event created, and each
      one must later be destroyed (`cudaStreamDestroy`, `cudaEventDestroy`).

    Events can be recorded again and again: create them once and record them
    on each iteration.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class BranchModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, kernel_size=3, padding=1)
            self.conv2 = nn.Conv2d(3, 64, kernel_size=3, padding=1)

        def forward(self, x):
            s1 = torch.cuda.Stream()  # a pool slot per call
            s2 = torch.cuda.Stream()
            s1.wait_stream(torch.cuda.current_stream())
            s2.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s1):
                out1 = self.conv1(x)
            with torch.cuda.stream(s2):
                out2 = self.conv2(x)
            torch.cuda.current_stream().wait_stream(s1)
            torch.cuda.current_stream().wait_stream(s2)
            return out1, out2
    ```
    ```python
    import cupy as cp

    for chunk in chunks:
        s = cp.cuda.Stream()  # a new CUDA stream every iteration
        done = cp.cuda.Event()
        with s:
            out = cp.fft.fft(chunk)
            done.record()
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class BranchModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, kernel_size=3, padding=1)
            self.conv2 = nn.Conv2d(3, 64, kernel_size=3, padding=1)
            self.s1 = torch.cuda.Stream()
            self.s2 = torch.cuda.Stream()

        def forward(self, x):
            self.s1.wait_stream(torch.cuda.current_stream())
            self.s2.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.s1):
                out1 = self.conv1(x)
            with torch.cuda.stream(self.s2):
                out2 = self.conv2(x)
            torch.cuda.current_stream().wait_stream(self.s1)
            torch.cuda.current_stream().wait_stream(self.s2)
            return out1, out2
    ```
    ```python
    import cupy as cp

    s = cp.cuda.Stream()
    done = cp.cuda.Event()
    for chunk in chunks:
        with s:
            out = cp.fft.fft(chunk)
            done.record()
    ```

    ## Fix safety
    For `s = Stream(...)` in a loop, the fix moves the line before the outermost
    loop when its arguments do not change in the loop; in `forward`, it creates the
    stream in `__init__` as `self._s` (when `__init__` exists and the arguments name
    no variables) and uses the attribute. Events made in the loop are moved the same
    way (an event kept per item is not reported). A finding that names several
    creations gets one fix for all of them, or none when one of them cannot be moved.
    A trailing comment that speaks of a new one each time ("a new stream every
    chunk") is dropped, as the move makes it false. It is **unsafe**: every iteration
    or call then queues on one stream, so their work is ordered where it was not, and
    a stream made in `__init__` belongs to the device current at construction.

    ## Known limits
    - `forward` is recognized only in classes whose base is visibly an
      `nn.Module` in the same module; a base class defined elsewhere is unknown.
    - Creation inside a helper function called from a hot path is reported only
      where `forward` (or a registered hook) of the same module calls the helper
      on every call (outside its loops): in the helper, naming that function.
      A public method is also hot when the `forward` of an `nn.Module` in another
      module of the same directory calls it on every call through an attribute
      set to an instance of its class (`self.cache = RowCache(...)`, then
      `self.cache.prepare(ids)`). Helpers called from loops, or from modules
      elsewhere, are not followed for this rule.
    - Streams and events received as parameters or made by unknown calls are
      not creations the rule can see.

    ## References
    - PyTorch: `c10/cuda/CUDAStream.cpp` (stream pool), `torch/cuda/streams.py`.
    - CuPy: `cupy/cuda/stream.pyx`, `cupy/cuda/memory.pyx` (per-stream arenas).
    - Numba-CUDA documentation: *Memory management*, deallocation behavior
      (`NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT`, `cuda.defer_cleanup()`).
    - [API facts](../api-facts.md) (the fact base behind the tables in `src/streamlint/model/api/`): §2.1, §2.5, §3.1, §3.4, §4.1, §5.1.
    """

    code = "SL501"
    name = "stream-created-in-hot-path"
    summary = "CUDA stream or event created in a loop body or an nn.Module forward()"
    fix_availability = "sometimes"

    def check(self, analysis):
        builder = FixBuilder(analysis)
        model = analysis.v3
        ancestry = Ancestry(analysis.module)
        # One finding per loop (or hot function) and body: the creations of one iteration are one problem.
        groups: dict[tuple, list] = {}
        for own in own_operations(model):
            if own.operation.op not in _CREATIONS:
                continue
            node = model.node_of(own.site)
            if not isinstance(node, cst.Call) or comprehension_of(node, ancestry) is not None:
                continue
            creation = _Creation(own, node, ancestry.loops_around(node))
            where = _where(analysis, model, ancestry, creation)
            if where is None:
                continue
            key = (own.function, id(creation.loops[-1]) if creation.loops else None)
            groups.setdefault(key, []).append((creation, where))
        for members in groups.values():
            creation, where = members[0]
            made = [m[0] for m in members]
            streams = [c for c in made if c.own.operation.op == _STREAM]
            events = [c for c in made if c.own.operation.op == _EVENT]
            framework = api.framework_of(creation.own.operation.api) or ""
            if len(made) == 1:
                thing = "stream" if streams else "event"
                yield Finding(
                    creation.node,
                    f"`{analysis.code(creation.node.func)}()` creates a{'n' if thing == 'event' else ''} {thing} {where}",
                    fix=_fix(builder, creation),
                    help=f"{_EVENT_WHY if events else _WHY.get(framework, 'creation is not free')}; "
                         f"create it once ({_once_at(creation, ancestry)}) and reuse it",
                )
                continue
            counted = " and ".join(
                (f"{len(group)} {kind}s" if len(group) > 1 else f"a{'n' if kind == 'event' else ''} {kind}")
                for group, kind in ((streams, "stream"), (events, "event")) if group
            )
            apis = ", ".join(dict.fromkeys(f"`{analysis.code(c.node.func)}()`" for c in made))
            yield Finding(
                creation.node,
                f"{apis} create{'s' if ', ' not in apis else ''} {counted} ({_names(analysis, ancestry, made)}) {where}",
                fix=_group_fix([_fix(builder, c) for c in made]),
                help=f"{_WHY.get(framework, 'creation is not free') if streams else _EVENT_WHY}; "
                     f"create them once ({_once_at(creation, ancestry)}) and reuse them",
            )


def _once_at(creation: "_Creation", ancestry: Ancestry) -> str:
    """Where one creation serves every pass or call, in words that name only what exists there."""
    if creation.loops:
        return "before the loop"
    function = next((a for a in ancestry.ancestors(creation.node) if isinstance(a, cst.FunctionDef)), None)
    owner = ancestry.parent(ancestry.parent(function)) if function is not None else None
    if isinstance(owner, cst.ClassDef) and not _has_no_object(function):
        return "in `__init__`"  # (a method: kept on the object)
    return f"outside `{function.name.value}`" if function is not None else "outside the hot path"


def _has_no_object(function: cst.FunctionDef) -> bool:
    """A static or class method (a custom autograd function's `forward`): no `__init__` runs for its calls."""
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
               for d in function.decorators)


@dataclass(frozen=True)
class _Creation:
    own: OperationAt
    node: cst.Call
    loops: list  # the loop statements around it in its function, outermost first

    @property
    def hot_call(self) -> bool:
        """Made on every call of a hot entry (not in a loop of its own)."""
        return not self.loops


def _where(analysis, model, ancestry: Ancestry, creation: _Creation) -> Optional[str]:
    """What makes the creation hot, in words; None when it is not."""
    own = creation.own
    if own.operation.op == _EVENT and api.framework_of(own.operation.api) == "torch" and made_to_time(creation.node):
        return None  # a timing mark wherever it is made: each measurement needs its own pair
    if creation.loops:
        function = next((a for a in ancestry.ancestors(creation.node) if isinstance(a, cst.FunctionDef)), None)
        if own.operation.op == _EVENT and function is not None and event_on_purpose(
                creation.node, creation.loops[-1], function, ancestry):
            return None  # made to be kept, or a timing mark
        hot = [loop for loop in repeating_loops(model, own.function, creation.node, ancestry)
               if not (own.operation.conditional and guarded_in(creation.node, loop, ancestry))]
        if any(work_in(model, own.function, loop, ancestry, Work.ANY) for loop in hot):
            return "on every iteration of a loop that queues GPU work"
        return None
    if own.entry and not own.operation.conditional:
        return f"on every call of `{hot_entry_name(own.entry, own.function)}`"
    named = calling_loop_named(analysis, calling_loops(model, own, ancestry, Work.ANY))
    return f"on every {named}" if named else None


def _group_fix(fixes):
    """The creations' fixes as one (all or none: a fix that moved the streams but left
    the events would leave the finding); insertions at one point are joined in order."""
    if not fixes or any(f is None for f in fixes):
        return None
    if len(fixes) == 1:
        return fixes[0]
    merged: dict[tuple, Edit] = {}
    for fix in fixes:
        for edit in fix.edits:
            key = (edit.row, edit.column, edit.end_row, edit.end_column)
            old = merged.get(key)
            if old is not None and edit.row == edit.end_row and edit.column == edit.end_column:
                merged[key] = replace(old, content=old.content + edit.content)
            elif old is not None:
                return None  # two edits of one range: cannot combine
            else:
                merged[key] = edit
    things = [f.message.split("Create the ", 1)[1].split(" once", 1)[0] for f in fixes]
    kinds = " and ".join(f"{kind}s" for kind in dict.fromkeys(things))
    where = fixes[0].message.split(" once", 1)[1].split(" as `")[0]
    return make_fix(f"Create the {kinds} once{where}", Applicability.UNSAFE, list(merged.values()))


def _names(analysis, ancestry: Ancestry, made) -> str:
    """`start`, `end`: the names the creations were bound to (`err, s = cudaStreamCreate()`
    names `s`), else the calls."""
    names = []
    for creation in made:
        label = ""
        assign = ancestry.parent(creation.node)
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
            target = assign.targets[0].target
            elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
            kept = [analysis.code(e) for e in elements if not (isinstance(e, cst.Name) and e.value in ("err", "_", "status"))]
            label = kept[-1] if kept else ""
        names.append(f"`{label or analysis.code(creation.node.func) + '()'}`")
    return ", ".join(dict.fromkeys(names))


def _fix(builder: FixBuilder, creation: "_Creation"):
    """Create the stream (or event) once. In a loop: move `s = Stream(...)` before the
    outermost loop (when its arguments do not change in the loop). In `forward`: create
    it in `__init__` as an attribute and use the attribute. A trailing comment that
    speaks of a new one each time is dropped: after the move it would be false. Unsafe:
    work of every iteration (or call) then shares one stream, so it is ordered where it
    was not."""
    thing = "stream" if creation.own.operation.op == _STREAM else "event"
    node = creation.node
    statement = builder.statement_of(node)
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not (isinstance(assign, cst.Assign) and assign.value is node and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)):
        return None
    comment = statement.trailing_whitespace.comment
    false_comment = comment is not None and _speaks_of_repetition(comment.value)
    if creation.hot_call:
        function = next((a for a in builder.ancestors(node) if isinstance(a, cst.FunctionDef)), None)
        cls = builder.parent(builder.parent(function)) if function is not None else None
        if not isinstance(cls, cst.ClassDef) or _has_no_object(function):
            return None  # a hook nested in a method, a function, a static method: no `self` to keep it on
        return _into_init(builder, cls, statement, node, assign.targets[0].target.value, thing, false_comment)
    loop = creation.loops[0]
    if _uses_names_bound_in(builder, node, loop):
        return None
    line = builder.code(assign).strip()
    if comment is not None and not false_comment:
        line += f"  {comment.value}"
    return make_fix(
        f"Create the {thing} once, before the loop",
        Applicability.UNSAFE,
        [builder.insert_before(loop, [line]), builder.delete_statement(statement)],
    )


# Words of a comment that describes making a new one each time round ("a new stream
# every chunk", "one per iteration"): false once the creation is moved out.
_REPETITION = re.compile(r"\b(new|fresh|every|each|per|iteration|again|anew)\b", re.IGNORECASE)


def _speaks_of_repetition(comment: str) -> bool:
    return bool(_REPETITION.search(comment))


def _into_init(builder: FixBuilder, cls: cst.ClassDef, statement, call, target: str, thing: str, false_comment: bool):
    if not isinstance(cls.body, cst.IndentedBlock):
        return None
    init = next((f for f in cls.body.body if isinstance(f, cst.FunctionDef) and f.name.value == "__init__"), None)
    if init is None or not isinstance(init.body, cst.IndentedBlock) or not init.body.body:
        return None
    params = init.params.params
    if not params or params[0].name.value != "self" or _uses_any_name(builder, call):
        return None  # arguments computed in forward() are not available in __init__
    attribute = "self." + fresh_name(builder.analysis.source, f"_{target}")
    last = init.body.body[-1]
    edits = [builder.insert_after(last, [f"{attribute} = {builder.code(call)}"]),
             builder.replace(call, cst.parse_expression(attribute))]
    if false_comment:
        edits.append(_drop_comment(builder, statement))
    return make_fix(f"Create the {thing} once in `__init__` as `{attribute}`", Applicability.UNSAFE, edits)


def _drop_comment(builder: FixBuilder, statement: cst.SimpleStatementLine):
    """Remove the trailing comment (and the spaces before it) of a one-line statement."""
    rng = builder.analysis.position(statement.body[0])
    if rng is None or rng.start.line != rng.end.line:
        return None
    line = builder.line(rng.end.line)
    rest = line[rng.end.column:]
    if not rest.lstrip().startswith("#"):
        return None
    return Edit(rng.end.line, rng.end.column + 1, rng.end.line, len(line) + 1, "")


def _names_in(builder: FixBuilder, node) -> set[str]:
    return set(re.findall(r"(?<![.\w])[A-Za-z_]\w*", builder.code(node)))


def _uses_any_name(builder: FixBuilder, call: cst.Call) -> bool:
    """Arguments that name variables (module-level constants aside, `Stream(device=d)`)."""
    return any(_names_in(builder, arg.value) for arg in call.args)


def _uses_names_bound_in(builder: FixBuilder, call: cst.Call, loop) -> bool:
    used = set().union(*(_names_in(builder, arg.value) for arg in call.args)) if call.args else set()
    if not used:
        return False
    text = builder.code(loop)
    return any(binding_pattern(name).search(line) for name in used for line in text.splitlines())
