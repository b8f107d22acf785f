"""What a parameter is, from the code's own evidence (not from a guess).

A parameter's value is unknown when a body is walked, but the body often says
what it must be: a method that exists on one kind of object only
(`d.copy_to_host()` is a Numba device array, `t.record_stream(s)` a CUDA tensor),
an annotation (`a: cp.ndarray`), or a default (`device=torch.device("cuda")`).
The tables below are the evidence; `param_kinds` reads a function for it.
A parameter with no evidence stays unknown.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, fields
from enum import Enum
from typing import Callable, Optional

import libcst as cst

from streamlint.model.values import UNKNOWN, Buffer, Const, Device, Mem, Stream, StreamKind, Value
from streamlint.model.walk_common import dotted_name


class Kind(Enum):
    TORCH_CUDA = "torch CUDA tensor"
    CUPY = "CuPy array"
    NUMBA_DEVICE = "Numba device array"
    CUDA_DEVICE = "CUDA device"
    STREAM = "stream"  # a parameter whose default is a stream (`stream=cupy.cuda.Stream.null`)
    # A stream the code waits for the legacy default stream by hand for, when it is not
    # that stream (`if stream != Stream.null: Stream.null.synchronize()`): it does not
    # wait by itself, so it is a non-blocking stream.
    SIDE_STREAM = "non-blocking stream"


@dataclass(frozen=True)
class MethodEvidence:
    kind: Kind
    needs_import: str  # the framework the file must import for the method to mean this
    min_args: int = 0  # positional arguments the call must have (`a.set(x)`, not `ev.set()`)
    keyword: str = ""  # a keyword whose constant value must be True (`non_blocking=True`)
    first_arg: str = ""  # the first argument's constant string value (`"cpu"`)


# Methods that exist on one kind of object only, or whose arguments say so.
METHOD_EVIDENCE: dict[str, tuple[MethodEvidence, ...]] = {
    "record_stream": (MethodEvidence(Kind.TORCH_CUDA, "torch", min_args=1),),
    "copy_to_host": (MethodEvidence(Kind.NUMBA_DEVICE, "numba"),),
    "set": (MethodEvidence(Kind.CUPY, "cupy", min_args=1),),
    # A non-blocking copy to the host only makes sense from the GPU.
    "to": (MethodEvidence(Kind.TORCH_CUDA, "torch", keyword="non_blocking", first_arg="cpu"),),
}

# Functions whose tensor arguments must be CUDA tensors (NCCL collectives), by the
# last part of their name when called on a `dist`/`torch.distributed` module.
# name -> the positional arguments that are tensors (`broadcast(t, src, group)`: only `t`).
COLLECTIVE_TENSOR_ARGS: dict[str, tuple[int, ...]] = {
    "all_reduce": (0,), "broadcast": (0,), "reduce": (0,), "send": (0,), "recv": (0,), "isend": (0,),
    "irecv": (0,), "all_gather_into_tensor": (0, 1), "_all_gather_base": (0, 1),
    "reduce_scatter_tensor": (0, 1), "_reduce_scatter_base": (0, 1), "all_to_all_single": (0, 1),
}
# The same tensors given by keyword (`all_to_all_single(output=out, input=inp, ...)`).
COLLECTIVE_TENSOR_KEYWORDS = frozenset({"tensor", "output", "input", "output_tensor", "input_tensor"})
DISTRIBUTED_MODULES = frozenset({"dist", "torch.distributed", "distributed"})

# Annotations (dotted, as resolved through the file's imports) naming device arrays.
ANNOTATION_EVIDENCE: dict[str, Kind] = {
    "cupy.ndarray": Kind.CUPY,
    "cupy._core.core.ndarray": Kind.CUPY,
    "numba.cuda.cudadrv.devicearray.DeviceNDArray": Kind.NUMBA_DEVICE,
    "numba.cuda.devicearray.DeviceNDArray": Kind.NUMBA_DEVICE,
}

# Methods that exist on streams only: `self.x.wait_stream(...)` makes `self.x` a stream,
# whatever placeholder (`self.x = None`) `__init__` gave it.
STREAM_ONLY_METHODS = frozenset({"wait_stream", "wait_event", "record_event"})

# A CUDA device value seen as a default makes the parameter that device.
DEVICE_DEFAULTS = frozenset({"cuda"})


def value_for(kind: Kind, name: str) -> Value:
    """The abstract value a parameter of this kind starts with."""
    if kind is Kind.CUDA_DEVICE:
        return Device(cuda=True)
    framework = {Kind.TORCH_CUDA: "torch", Kind.CUPY: "cupy", Kind.NUMBA_DEVICE: "numba"}[kind]
    return Buffer(framework, Mem.DEVICE, label=name, param=name)


TEXT_SAYS_NONE = "text says none"  # a memo key (see _first_kinds)


def param_kinds(
    node: cst.FunctionDef,
    params: list[str],
    imported: frozenset[str],
    resolve: Callable[[cst.BaseExpression], Optional[str]],
    default_value: Callable[[cst.BaseExpression], Value],
    memo: Optional[dict] = None,
    syncs: bool = True,
) -> dict[str, Kind]:
    """Parameters of `node` whose kind the body, annotations or defaults show
    (`syncs`: whether the module's text synchronizes anything at all).

    `resolve` spells an annotation as a qualified name (None when it cannot);
    `default_value` evaluates a default expression in the module's environment."""
    found: dict[str, Kind] = {}
    wanted = set(params)
    all_params = (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
    for param in all_params:
        name = param.name.value
        if name not in wanted:
            continue
        if param.annotation is not None:
            qualname = resolve(param.annotation.annotation)
            kind = ANNOTATION_EVIDENCE.get(qualname or "")
            if kind is not None:
                found[name] = kind
                continue
        default = default_value(param.default) if param.default is not None else None
        if default is not None and _is_cuda_default(default):
            found[name] = Kind.CUDA_DEVICE
        elif isinstance(default, Stream):
            found[name] = Kind.STREAM  # the caller's choice of stream, the default one if none
        elif _is_none(param.default) and isinstance(_default_in_body(node, name, default_value), Stream):
            found[name] = Kind.STREAM  # `stream=None` and `if stream is None: stream = Stream.null`
    if syncs:
        for name in _waits_for_legacy_by_hand(node, default_value) & wanted:
            if found.get(name) in (None, Kind.STREAM):
                found[name] = Kind.SIDE_STREAM
    found.update(_first_kinds(node, imported, wanted - set(found), memo))
    return found


def _is_none(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _default_in_body(node: cst.FunctionDef, name: str, default_value: Callable[[cst.BaseExpression], Value]) -> Value:
    """What a parameter defaulting to None is given when None, by a statement of the
    function's top level: `if stream is None: stream = cupy.cuda.Stream.null`."""
    if not isinstance(node.body, cst.IndentedBlock):
        return UNKNOWN
    for stmt in node.body.body:
        if not (isinstance(stmt, cst.If) and stmt.orelse is None and isinstance(stmt.test, cst.Comparison)):
            continue
        test = stmt.test
        if not (len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Is)
                and isinstance(test.left, cst.Name) and test.left.value == name
                and _is_none(test.comparisons[0].comparator)):
            continue
        body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else []
        if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1:
            assign = body[0].body[0]
            if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and \
                    isinstance(assign.targets[0].target, cst.Name) and assign.targets[0].target.value == name:
                return default_value(assign.value)
        return UNKNOWN
    return UNKNOWN


def _waits_for_legacy_by_hand(node: cst.FunctionDef, default_value: Callable[[cst.BaseExpression], Value]) -> set[str]:
    """Names an `if` of the function's top level tests for not being the legacy default
    stream and then synchronizes that stream in its body (`if stream != Stream.null and
    grew: Stream.null.synchronize()`)."""
    found: set[str] = set()
    if not isinstance(node.body, cst.IndentedBlock):
        return found
    for stmt in node.body.body:
        if not isinstance(stmt, cst.If) or not isinstance(stmt.body, cst.IndentedBlock):
            continue
        names = [name for name in _not_legacy_tests(stmt.test, default_value)]
        if names and any(_syncs_legacy(line, default_value) for line in stmt.body.body):
            found.update(names)
    return found


def _not_legacy_tests(test: cst.BaseExpression, default_value: Callable[[cst.BaseExpression], Value]):
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        yield from _not_legacy_tests(test.left, default_value)
        yield from _not_legacy_tests(test.right, default_value)
        return
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name)):
        return
    comparison = test.comparisons[0]
    if isinstance(comparison.operator, (cst.NotEqual, cst.IsNot)) and isinstance(comparison.comparator, cst.Attribute):
        value = default_value(comparison.comparator)
        if isinstance(value, Stream) and value.kind is StreamKind.LEGACY:
            yield test.left.value


def _syncs_legacy(line: cst.CSTNode, default_value: Callable[[cst.BaseExpression], Value]) -> bool:
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Expr)):
        return False
    call = line.body[0].value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "synchronize"):
        return False
    value = default_value(call.func.value)
    return isinstance(value, Stream) and value.kind is StreamKind.LEGACY


def local_kinds(node: cst.FunctionDef, imported: frozenset[str], memo: Optional[dict] = None) -> dict[str, Kind]:
    """Names bound in a body that its own uses show to be device arrays (a name given
    to an NCCL collective is a CUDA tensor, whatever call made it)."""
    return _first_kinds(node, imported, None, memo)


def text_may_show(text: str, imported: frozenset[str]) -> bool:
    """Whether a module's text can hold any body evidence at all: each kind needs its
    method's name (and its keyword and argument) or a collective's name in the text.
    Most modules have none, and their bodies need no walk (~5% of a cold run)."""
    for method, evidences in METHOD_EVIDENCE.items():
        for evidence in evidences:
            if evidence.needs_import in imported and f".{method}(" in text and evidence.keyword in text \
                    and evidence.first_arg in text:
                return True
    return "torch" in imported and any(f"{name}(" in text for name in COLLECTIVE_TENSOR_ARGS)


def _first_kinds(node: cst.FunctionDef, imported: frozenset[str], names: Optional[set[str]],
                 memo: Optional[dict]) -> dict[str, Kind]:
    """The first evidence for each name (of `names`; None: any) in the body, in the
    order of the text. The body's evidence is gathered once per function and imports
    (`memo`, the analysis's): functions are analysed more than once. A memo whose
    `TEXT_SAYS_NONE` key is set (the module's text cannot show any) skips the walk."""
    if memo is not None and memo.get(TEXT_SAYS_NONE):
        return {}
    key = id(node)
    entry = memo.get(key) if memo is not None else None
    if entry is None or entry[0] is not node or entry[1] != imported:
        entry = (node, imported, _evidence_in(node, imported))
        if memo is not None:
            memo[key] = entry
    found: dict[str, Kind] = {}
    for name, kind in entry[2]:
        if (names is None or name in names) and name not in found:
            found[name] = kind
    return found


def _evidence_in(node: cst.FunctionDef, imported: frozenset[str]) -> list[tuple[str, Kind]]:
    """(name, kind) for every piece of evidence in the body, in the text's order.

    A walk over the nodes' fields finds the calls about five times faster than a
    libcst visitor, but fields do not always come in the text's order (`a if b else
    c`); that matters only when one name meets evidence of two kinds, and then the
    visitor, which keeps the text's order, decides."""
    events = _collect(node.body, imported)
    kinds: dict[str, Kind] = {}
    for name, kind in events:
        if kinds.setdefault(name, kind) is not kind:
            finder = _UsageFinder(None, imported, events=True)
            node.body.visit(finder)
            return finder.events
    return events


_FIELDS: dict[type, tuple[str, ...]] = {}
# Per type: walked (a node that can hold a call), or not (another scope, as in
# _UsageFinder; whitespace, operators, names and literals: no call inside).
_WALKED: dict[type, bool] = {}
_LEAVES = (cst.FunctionDef, cst.Lambda, cst.Name, cst.BaseNumber, cst.SimpleString, cst.BaseParenthesizableWhitespace,
           cst.TrailingWhitespace, cst.EmptyLine, cst.Newline, cst.Comment, cst.LeftParen, cst.RightParen, cst.Comma,
           cst.Dot, cst.Semicolon, cst.Colon, cst.AssignEqual, cst.BaseUnaryOp, cst.BaseBinaryOp,
           cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseAugOp, cst.AssignEqual, cst.ImportStar, cst.Pass)


def _walked(tp: type) -> bool:
    walked = _WALKED.get(tp)
    if walked is None:
        walked = _WALKED[tp] = issubclass(tp, cst.CSTNode) and not issubclass(tp, _LEAVES)
    return walked


def _collect(body: cst.CSTNode, imported: frozenset[str]) -> list[tuple[str, Kind]]:
    events: list[tuple[str, Kind]] = []
    stack: list[cst.CSTNode] = [body]
    walked = _WALKED
    while stack:
        n = stack.pop()
        tp = type(n)
        if tp is cst.Call:
            _call_evidence(n, imported, events)  # type: ignore[arg-type]
        names = _FIELDS.get(tp)
        if names is None:
            names = _FIELDS[tp] = tuple(f.name for f in fields(tp))
        children: list[cst.CSTNode] = []
        for name in names:
            value = getattr(n, name)
            tv = type(value)
            if tv is tuple or tv is list:
                for v in value:
                    w = walked.get(type(v))
                    if w or (w is None and _walked(type(v))):
                        children.append(v)
            else:
                w = walked.get(tv)
                if w or (w is None and _walked(tv)):
                    children.append(value)
        if children:
            children.reverse()
            stack.extend(children)
    return events


def _call_evidence(call: cst.Call, imported: frozenset[str], events: list[tuple[str, Kind]]) -> None:
    func = call.func
    if "torch" in imported and isinstance(func, cst.Attribute) and func.attr.value in COLLECTIVE_TENSOR_ARGS \
            and dotted_name(func.value) in DISTRIBUTED_MODULES:
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        given = [positional[i] for i in COLLECTIVE_TENSOR_ARGS[func.attr.value] if i < len(positional)]
        given += [a.value for a in call.args if a.keyword is not None and a.keyword.value in COLLECTIVE_TENSOR_KEYWORDS]
        for arg in given:
            if isinstance(arg, cst.Name):
                events.append((arg.value, Kind.TORCH_CUDA))
            elif isinstance(arg, cst.Attribute) and dotted_name(arg):
                events.append((dotted_name(arg), Kind.TORCH_CUDA))  # `self.grad_data`, `bucket.grad_data`
        return
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
        return
    for evidence in METHOD_EVIDENCE.get(func.attr.value, ()):
        if evidence.needs_import in imported and _matches(evidence, call):
            events.append((func.value.value, evidence.kind))
            return


def _is_cuda_default(value: Value) -> bool:
    if isinstance(value, Device):
        return value.cuda
    return isinstance(value, Const) and isinstance(value.value, str) and value.value.split(":")[0] in DEVICE_DEFAULTS


class _UsageFinder(cst.CSTVisitor):
    """`param.method(...)` calls in a body (nested functions excluded: other scopes)."""

    def __init__(self, names: Optional[set[str]], imported: frozenset[str], events: bool = False) -> None:
        self.names = names  # None: any name
        self.imported = imported
        self.found: dict[str, Kind] = {}
        self.events: Optional[list[tuple[str, Kind]]] = [] if events else None

    def visit_Call(self, call: cst.Call) -> None:
        if self.events is not None:
            _call_evidence(call, self.imported, self.events)
            return
        self._visit_call(call)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def wants(self, name: str) -> bool:
        return (self.names is None or name in self.names) and name not in self.found

    def _visit_call(self, call: cst.Call) -> None:
        func = call.func
        if "torch" in self.imported and isinstance(func, cst.Attribute) and func.attr.value in COLLECTIVE_TENSOR_ARGS \
                and dotted_name(func.value) in DISTRIBUTED_MODULES:
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            given = [positional[i] for i in COLLECTIVE_TENSOR_ARGS[func.attr.value] if i < len(positional)]
            given += [a.value for a in call.args
                      if a.keyword is not None and a.keyword.value in COLLECTIVE_TENSOR_KEYWORDS]
            for arg in given:
                if isinstance(arg, cst.Name) and self.wants(arg.value):
                    self.found[arg.value] = Kind.TORCH_CUDA
            return
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return
        name = func.value.value
        if not self.wants(name):
            return
        for evidence in METHOD_EVIDENCE.get(func.attr.value, ()):
            if evidence.needs_import in self.imported and _matches(evidence, call):
                self.found[name] = evidence.kind
                return


def _matches(evidence: MethodEvidence, call: cst.Call) -> bool:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if len(positional) < evidence.min_args:
        return False
    if evidence.keyword:
        given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == evidence.keyword), None)
        if not (isinstance(given, cst.Name) and given.value == "True"):
            return False
    if evidence.first_arg:
        first = positional[0].value if positional else None
        if not (isinstance(first, cst.SimpleString) and first.evaluated_value == evidence.first_arg):
            return False
    return True


_STREAM_ONLY_CALL = re.compile(
    r"\bself[\s\\]*\.[\s\\]*(\w+)[\s\\]*\.[\s\\]*(?:" + "|".join(sorted(STREAM_ONLY_METHODS)) + r")[\s\\]*\("
)


def stream_attributes(cls: cst.ClassDef, text: str = "", body: Optional[str] = None) -> frozenset[str]:
    """`self.<attr>` names a class's methods call stream-only methods on. `text`, the
    source around it, lets most classes (no stream method named at all) skip the walk;
    `body`, the class body's own text (class_text.py), answers without one (a visitor
    over a large class cost ~4% of a cold run; comments may add a name, never drop one)."""
    if text and not any(method in text for method in STREAM_ONLY_METHODS):
        return frozenset()
    if body is not None:
        return frozenset(_STREAM_ONLY_CALL.findall(body))
    found: set[str] = set()

    class _Finder(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in STREAM_ONLY_METHODS:
                recv = func.value
                if isinstance(recv, cst.Attribute) and isinstance(recv.value, cst.Name) and recv.value.value == "self":
                    found.add(recv.attr.value)

    cls.body.visit(_Finder())
    return frozenset(found)


_CUDA_ONLY_WORDS = tuple(
    (f".{m}(", e.keyword, e.first_arg) for m, evs in METHOD_EVIDENCE.items() for e in evs if e.kind is Kind.TORCH_CUDA
)


def may_call_cuda_only(text: str) -> bool:
    """Whether a text can call a method that exists on CUDA tensors only (METHOD_EVIDENCE)."""
    return any(call in text and keyword in text and first in text for call, keyword, first in _CUDA_ONLY_WORDS)


def device_attributes(imported: frozenset[str], body: Optional[str]) -> frozenset[str]:
    """`self.<attr>` names a class's methods call a method on that exists on CUDA tensors
    only (`self.values.record_stream(s)`, `self.x.to("cpu", non_blocking=True)`, or the
    same through a local the method binds once, to the attribute: `lengths = self._lengths`
    then `lengths.record_stream(s)`): the class keeps a CUDA tensor there, whichever method
    reads it. Read from `body`, the class body's text (class_text.py), in one pass per
    method; no text (two classes of one name): nothing. A comment or a string may add a
    name, as for `stream_attributes`."""
    if body is None or "torch" not in imported or not may_call_cuda_only(body):
        return frozenset()
    found: set[str] = set()
    for method in _METHOD_START.split(body):
        receivers = _CUDA_ONLY_CALL.findall(method)
        if not receivers:
            continue
        assigned: dict[str, int] = {}
        for name in _BINDING.findall(method):
            assigned[name] = assigned.get(name, 0) + 1
        aliases = {name: attr for name, attr in _ALIAS.findall(method) if assigned.get(name) == 1}
        for recv in receivers:
            recv = re.sub(r"\s+", "", recv)
            if recv.startswith("self."):
                found.add(recv[5:])
            elif recv in aliases:
                found.add(aliases[recv])
    return frozenset(found)


_METHOD_START = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]", re.MULTILINE)
# The receiver of a CUDA-only call (METHOD_EVIDENCE's TORCH_CUDA kinds, with their
# arguments): `x.record_stream(s)` (one argument at least), `x.to("cpu", non_blocking=True)`.
_CUDA_ONLY_CALL = re.compile(
    r"((?:\bself\s*\.\s*)?\b\w+)\s*\.\s*(?:record_stream\s*\(\s*[^)\s]"
    r"|to\s*\(\s*[\"']cpu[\"']\s*,[^)]*\bnon_blocking\s*=\s*True\b)"
)
_BINDING = re.compile(r"^[ \t]*(\w+)[ \t]*(?::[^=\n]+)?=(?!=)", re.MULTILINE)
_ALIAS = re.compile(r"^[ \t]*(\w+)[ \t]*(?::[^=\n]+)?=[ \t]*self[ \t]*\.[ \t]*(\w+)[ \t]*(?:#.*)?$", re.MULTILINE)
