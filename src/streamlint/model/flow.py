"""The flow walk: one pass over a body in program order, producing its GpuOp record.

It tracks what each name holds (values.py), the current stream of each framework,
loops, branches and `self.` attributes, and turns calls into operations using the API
tables (api/). Whatever the text does not show stays UNKNOWN.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

import libcst as cst

from streamlint.deadline import tick
from streamlint.model import api, switches
from streamlint.model.api import chainer as chainer_api
from streamlint.model.api import cuda_python, nccl, torch_api
from streamlint.model.api import cupy as cupy_api
from streamlint.model.hazards import AMBIENT, DEVICE, HB, LEGACY, Hazard, stream_key
from streamlint.model.ops import (
    DEVICE_WORK,
    FunctionRecord,
    GpuOp,
    LoopInfo,
    OpKind,
)
from streamlint.model.values import (
    DictOf,
    Graph,
    UNKNOWN,
    Buffer,
    HostOrDevice,
    Const,
    Device,
    Event,
    Instance,
    Kernel,
    Launch,
    Loader,
    Mem,
    QualRef,
    Seq,
    Stream,
    StreamContext,
    StreamKind,
    Value,
    OWN_AMBIENT_SITE,
    ambient_stream,
    join,
    join_paths,
    join_returns,
    legacy_stream,
    plain,
)

if TYPE_CHECKING:
    from streamlint.model.analysis import FileAnalyzer
    from streamlint.model.peers import Peer

# Frameworks that keep a per-thread current stream.
from streamlint.model.calls import CallsMixin
from streamlint.model import toggles
from streamlint.model.ordering import OrderingMixin, _affine
from streamlint.model.walk_common import (
    _OPERATOR_LABELS,
    _POINTER_ATTRS,
    CURRENT_FRAMEWORKS,
    Args,
    _AutoSync,
    _Batch,
    _Capture,
    _is_cpu_target,
    periodic_test,
    rare_test,
    _is_cuda_target,
    _Pinned,
    dotted_name,
)


def _none_branch(expr: cst.BaseExpression) -> bool:
    """`a if c else None` (or `None if c else a`)."""
    return isinstance(expr, cst.IfExp) and any(
        isinstance(side, cst.Name) and side.value == "None" for side in (expr.body, expr.orelse))


def _is_none(value: Value) -> bool:
    return isinstance(value, Const) and value.value is None


class State:
    __slots__ = ("vars", "current", "hb", "nones")

    def __init__(self, vars: dict[str, Value], current: dict[str, Stream], hb: Optional[HB] = None) -> None:
        self.vars = vars
        self.current = current
        self.hb = hb  # ordering state; only in the hazard walk
        # Local names that hold None on some path and a value the walk does not know on
        # another (`buf = self.bufs[i] if reuse else None`): `join` keeps neither.
        self.nones: frozenset[str] = frozenset()

    def copy(self) -> "State":
        state = State(dict(self.vars), dict(self.current), self.hb.copy() if self.hb is not None else None)
        state.nones = self.nones
        return state

    def merge(self, other: "State", must: bool = False) -> None:
        """Join another path's state into this one (branches meeting)."""
        nones = set(self.nones | other.nones)
        for key in set(self.vars) | set(other.vars):
            if key not in self.vars or key not in other.vars:
                # Bound on one path only: a later use can only see that binding (the
                # other path would raise NameError/AttributeError first).
                self.vars[key] = self.vars.get(key, other.vars.get(key, UNKNOWN))
                continue
            a, b = self.vars[key], other.vars[key]
            self.vars[key] = join_paths(a, b)
            if self.vars[key] is UNKNOWN and "." not in key and (_is_none(a) or _is_none(b)):
                nones.add(key)
        self.nones = frozenset(nones)
        for fw in set(self.current) | set(other.current):
            a, b = self.current.get(fw), other.current.get(fw)
            own = any(x is not None and x.site == OWN_AMBIENT_SITE for x in (a, b))
            self.current[fw] = a if a == b else ambient_stream(fw, own_key=own)
        if self.hb is not None and other.hb is not None:
            self.hb.meet(other.hb, must=must)


class Walker(CallsMixin, OrderingMixin):
    """Walks one body; names it does not bind are looked up in the module's environment."""

    def __init__(
        self,
        analyzer: "FileAnalyzer",
        record: FunctionRecord,
        params: Sequence[str] = (),
        seed: Optional[dict[str, Value]] = None,
        hazard_mode: bool = False,
        top: Optional[cst.CSTNode] = None,
    ) -> None:
        self.an = analyzer
        self.record = record
        self.params = frozenset(params)
        at_module = record.kind == "module"
        own = analyzer.torch_only
        self.state = State(dict(seed or {}), {
            fw: self.default_stream(fw) if at_module else ambient_stream(fw, own_key=own and fw == "torch")
            for fw in CURRENT_FRAMEWORKS
        })
        self.loop_stack: list[int] = []
        self.comprehension_depth = 0
        self.comprehension_stack: list[int] = []  # ids of the comprehensions being evaluated
        self.returns: Value = None  # type: ignore[assignment]
        # The hazard walk (a second walk of bodies that use streams) carries the
        # happens-before state and collects cross-stream hazards.
        self.hazard_mode = hazard_mode
        self.top = top  # the top-level statement being walked (for cheap positions)
        self.view_depth = 0
        self.capturing: frozenset = frozenset()  # streams capturing: their work is recorded into a graph, not run
        self.captured: list = []  # the operations recorded by the open capture, replayed at each launch
        self.event_streams: dict[int, tuple[str, str]] = {}  # event site -> (stream key, label) it was recorded on
        self.joins: list = []  # waits of the current stream that leave other side-stream writes unordered
        # stream key -> (node, HelperRef or None) of its last wait for the caller's stream (a fork)
        self.forks: dict[str, tuple] = {}
        self.element_holders: set[str] = set()  # `self.x` lists whose elements `self.x[self.i]` named (toggles.py)
        self.flipped: list[str] = []  # the index flips walked so far (`self.i = 1 - self.i`), in order
        self.facts: dict[str, object] = {}  # name -> the one value this walk follows (selector walks)
        # Option worlds (switches.py): `self.<option>` -> the one value this walk follows; the
        # option sides open here (GpuOp.options; an early `return` under a test leaves the
        # other side open for the rest of the body)
        self.options: dict[str, bool] = {}
        self.open_options: list[tuple[str, Optional[bool]]] = []
        self.origins: dict[str, Optional[cst.BaseExpression]] = {}  # local -> the attribute it was read from, if unknown
        self.attr_sites: dict[str, set] = {}  # `self.x` -> every buffer bound to it (paths that join lose the site)
        self.caller_streams: set[str] = set()  # keys of streams this call's caller chose (parameters)
        self.branch_depth: list[int] = []  # per enclosing loop: how many `if` branches deep
        self.rare_depth = 0  # how many `if`s under a rare test (flag, periodic, one-off) deep
        self.switch_depth = 0  # ... of them, tests of an option the class sets once (switches.py)
        self.branch_calls: list[set] = []  # per open rare `if` branch: the helpers it called (steady if all do)
        self.init_depth = 0  # how many `if`s deep that set what they test (`if self.x is None: self.x = ...`)
        self.none_tests: list[tuple[str, bool]] = []  # enclosing `if param is None:` tests (GpuOp.when_none)
        self.incarnations = 0
        self.hazards: dict[tuple, Hazard] = {}
        self.synced_copies: set[int] = set()  # helpers' copies (their nodes) read here after a wait
        self.escaped: set[int] = set()  # buffer sites returned or stored beyond the body
        self.yield_current: Optional[dict[str, Stream]] = None  # current streams at the first `yield`
        self.evident_tensors: frozenset = frozenset()  # local names the body shows are CUDA tensors
        self.fresh_sites = False  # a helper walked for one call: what it makes is new each call
        self.scalar_names: frozenset = frozenset()  # parameters typed as scalars (never buffers)
        self.host_number_names: Optional[frozenset] = None  # names holding host numbers, when first asked
        self.outer: Optional[tuple] = None  # (caller's walker, param -> caller's argument) in that case
        self.versions: dict[str, int] = {}  # how often each name was bound (index identity)
        # (name, its binding) -> (loop name, that name's binding, offset, modulus): `slot = k % 2`
        self.index_aliases: dict[tuple[str, int], tuple[str, int, int, int]] = {}
        self.first_reads: dict[str, cst.CSTNode] = {}  # `self.x` -> where this body first read it
        # Holder attributes another function left together with one this body records on
        # its stream (peers.py): path -> the peer, and the tensor the walk binds for it.
        self.peers: dict[str, "Peer"] = {}
        self.peer_values: dict[str, Buffer] = {}
        # The caller's current stream: PyTorch's own key in code that uses only PyTorch.
        self.entry_key = AMBIENT if analyzer.torch_only else LEGACY
        self.entry_clock = 0  # the caller's work before the call, on `entry_key`
        if hazard_mode:
            self.state.hb = HB()
            entry = self.state.hb.tick(self.entry_key, True)
            self.entry_clock = entry
            for name in params:
                self.state.hb.produced_before_entry(("n", name, ""), record.node, entry, self.entry_key)

    # ------------------------------------------------------------------ helpers
    def code(self, node: cst.CSTNode) -> str:
        return self.an.code(node)

    def lookup(self, name: str, raw: bool = False) -> Value:
        """What a name holds; `raw`: also a tensor that is CUDA on some paths only."""
        if name in self.state.vars:
            value = self.state.vars[name]
            return value if raw else plain(value)
        if self.record.kind != "module":
            module_vars = self.an.module_vars()
            if name in module_vars:
                return module_vars[name]
        return UNKNOWN

    def is_bound(self, name: str) -> bool:
        return name in self.state.vars or (self.record.kind != "module" and name in self.an.module_vars())

    def emit(self, kind: OpKind, api_label: str, node: cst.CSTNode, framework: str, **kw) -> GpuOp:
        loops = tuple(self.loop_stack)
        op = GpuOp(
            kind=kind, api=api_label, node=node, framework=framework, index=len(self.record.ops),
            loops=loops, in_forward=self.record.is_forward,
            in_comprehension=self.comprehension_depth > 0,
            comprehension=self.comprehension_stack[-1] if self.comprehension_stack else 0,
            conditional=bool(self.branch_depth and self.branch_depth[-1]) or (not self.loop_stack and self.init_depth > 0),
            rare=self.rare_depth > self.switch_depth,
            **kw,
        )
        if self.none_tests:
            op.when_none = tuple(self.none_tests) + op.when_none
        if self.open_options:
            op.options = tuple(self.open_options) + op.options
        self.record.ops.append(op)
        if self.top is not None:
            self.an.result.tops[id(node)] = self.top
        if kind in DEVICE_WORK and op.stream is not None and op.stream.explicit:
            self.record.passes_stream = True
        if self.state.hb is not None:
            self.order(op)
        return op

    # ------------------------------------------------------------------ happens-before
    def site(self, node: cst.CSTNode) -> int:
        """Identity of what a call makes. In the hazard walk every evaluation makes a new
        one, so the tensor of one loop iteration is not the next iteration's tensor."""
        if self.state.hb is None and not self.fresh_sites:
            return id(node)
        self.incarnations += 1
        return hash((id(node), self.incarnations))

    def param_stream(self, expr: cst.BaseExpression, framework: str) -> Stream:
        """A stream we cannot see the creation of (a parameter, an unknown attribute)."""
        if self.outer is not None and isinstance(expr, cst.Name) and expr.value in self.outer[1]:
            # A helper walked for one call: its parameter is the caller's argument.
            caller, exprs = self.outer
            return caller.param_stream(exprs[expr.value], framework)
        if isinstance(expr, cst.Name) and isinstance(self.origins.get(expr.value), cst.Attribute):
            return self.param_stream(self.origins[expr.value], framework)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
                and isinstance(self.origins.get(expr.value.value), cst.Subscript):
            # `stage = self._stages[i]` ... `stage.stream`: the stream of one of the elements
            # of a list the object keeps (one of several streams, each named by the object).
            label = f"{self.code(self.origins[expr.value.value])}.{expr.attr.value}"
            return Stream(framework, StreamKind.EXPLICIT, False if framework == "torch" else None, label,
                          site=hash(("stream", self.record.name, label)), one_of=True)
        label = self.code(expr)
        # PyTorch hands out only non-blocking pool streams (ExternalStream aside).
        blocking = False if framework == "torch" else None
        # A parameter or a `self` attribute names one stream; a local the walk could not
        # follow (`s = a if flag else b`, `s = pick()`) may be any stream: unsure.
        named = (isinstance(expr, cst.Name) and (expr.value in self.params or not self.is_bound(expr.value))) or (
            label.startswith("self.") and label.count(".") == 1) or (
            # `exchanger.stream1` of a parameter: one stream, whichever the caller's object holds
            isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value in self.params)
        stream = Stream(framework, StreamKind.EXPLICIT, blocking, label, site=hash(("stream", self.record.name, label)),
                        uncertain=not named)
        if not label.startswith("self."):
            self.caller_streams.add(stream_key(stream))
        return stream

    # ------------------------------------------------------------------ statements
    def walk(self, body: Iterable[cst.CSTNode]) -> None:
        at_top = self.record.kind == "module" and body is self.an.module.body
        for stmt in body:
            tick()  # the per-file time bound (a no-op unless the engine set one)
            if at_top:
                self.top = stmt
            self.stmt(stmt)

    def stmt(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                self.small(small)
        elif isinstance(node, cst.If):
            self.if_(node)
        elif isinstance(node, (cst.For, cst.While)):
            self.loop(node)
        elif isinstance(node, cst.With):
            self.with_(node)
        elif isinstance(node, (cst.Try, cst.TryStar)):
            self.try_(node)
        elif isinstance(node, cst.FunctionDef):
            self.an.define_function(node, self)
        elif isinstance(node, cst.ClassDef):
            self.an.define_class(node, self)
        elif isinstance(node, cst.Match):
            self.eval(node.subject)
            base = self.state
            merged: Optional[State] = None
            for case in node.cases:
                self.state = base.copy()
                self.walk(case.body.body)
                merged = self.state if merged is None else (merged.merge(self.state) or merged)
            self.state = base
            if merged is not None:
                base.merge(merged)
        elif isinstance(node, cst.IndentedBlock):
            self.walk(node.body)

    def small(self, node: cst.BaseSmallStatement) -> None:
        if isinstance(node, cst.Expr):
            if not self.discarded_module_call(node.value):  # `model.to(device)` for its effect
                self.eval(node.value)
        elif isinstance(node, cst.Assign):
            target = node.targets[-1].target
            label = self.code(target) if isinstance(target, (cst.Name, cst.Attribute)) else ""
            value = self.eval(node.value, label, raw=True)
            value = self.evident_tensor(node.targets[0].target, node.value, value)
            for target in node.targets:
                self.bind(target.target, value)
                self.note_index_alias(target.target, node.value)
                if isinstance(target.target, cst.Name) and plain(value) is UNKNOWN and _none_branch(node.value):
                    self.state.nones = self.state.nones | {target.target.value}  # `b = bufs[i] if reuse else None`
                self.note_index_flip(target.target, node.value)
                if isinstance(target.target, cst.Name):
                    # `stream1 = exchanger.stream1`: a value we cannot see, named by where it came from.
                    # (`stage = self._stages[i]`: one element of a list the object keeps)
                    named_origin = plain(value) is UNKNOWN and (
                        isinstance(node.value, cst.Attribute) or _self_element(node.value, self.code))
                    self.origins[target.target.value] = node.value if named_origin else None
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.bind(node.target, self.eval(node.value, self.code(node.target), raw=True))
        elif isinstance(node, cst.AugAssign):
            left = self.eval(node.target)
            right = self.eval(node.value)
            self.bind(node.target, self.arith(left, right, node, inplace=True, exprs=(node.target, node.value)))
            self.note_index_flip(node.target, None)
        elif isinstance(node, cst.Return):
            if node.value is not None:
                value = self.eval(node.value)
                self.handed_out(value, node)
                self.escape(value)
                self.returns = value if self.returns is None else join_returns(self.returns, value)
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            for name, value in self.an.import_bindings(node):
                self.state.vars[name] = value
        elif isinstance(node, cst.Del):
            self.delete(node.target)
        elif isinstance(node, cst.Assert):
            self.truth(node.test)
        elif isinstance(node, cst.Raise):
            if node.exc is not None:
                self.eval(node.exc)

    def may_be_none(self, expr: cst.BaseExpression) -> bool:
        """A local name that holds None on some path, something unknown on another, or
        `a if c else None` (asked where the walk does not know the other side)."""
        if _none_branch(expr):
            return True
        return isinstance(expr, cst.Name) and expr.value in self.state.nones \
            and self.state.vars.get(expr.value) is UNKNOWN

    def bind(self, target: cst.BaseExpression, value: Value) -> None:
        if not isinstance(target, cst.Name):
            value = plain(value)  # (only names keep a tensor that is CUDA on some paths)
        if isinstance(target, cst.Name):
            self.versions[target.value] = self.versions.get(target.value, 0) + 1
            if target.value in self.state.nones:
                self.state.nones = self.state.nones - {target.value}
            old = self.state.vars.get(target.value)
            self.state.vars[target.value] = self.labelled(value, target.value)
            if self.state.hb is not None and old is not None and old != value:
                self.release(old, target, target.value)
                if not isinstance(value, Buffer):
                    self.state.hb.forget(("n", target.value, ""))
        elif isinstance(target, cst.Attribute):
            key = self.code(target)
            if key.startswith("self."):
                self.bind_self_attr(key, value)
            else:
                self.eval(target.value)
                self.escape(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            for i, element in enumerate(elements):
                if isinstance(element, cst.StarredElement):
                    self.bind(element.value, UNKNOWN)
                    continue
                if isinstance(value, (Seq, _Batch)):
                    item = value.item(i)
                elif isinstance(value, Buffer) and value.loader_site:
                    item = value  # a batch unpacks into tensors of the same memory kind
                else:
                    item = UNKNOWN
                self.bind(element, item)
        elif isinstance(target, cst.Subscript):
            self.keep([value])
            self.kept_for_caller(target, value)
            self.escape(value)
            base = self.eval(target.value)
            if isinstance(base, Buffer) and base.mem is Mem.DEVICE and base.framework in ("torch", "cupy"):
                # `x[i] = v` on a device array: a copy/fill kernel on the current stream.
                fw = base.framework
                self.emit(OpKind.KERNEL, self.code(target)[:40], target, fw, stream=self.state.current[fw],
                          accesses=self.accesses([(target, base)], write=True, space=DEVICE))
            else:
                self.host_touch(target, base, write=True)
            if isinstance(base, DictOf):
                self.rebind_dict(target.value, base.stored(value))
            elif isinstance(base, Seq) and plain(value) is not UNKNOWN:
                # `slots[i] = v` on a list the walk knows: one of its elements is `v` now.
                self.rebind_dict(target.value, base.stored(plain(value)))
            for el in target.slice:
                if isinstance(el.slice, cst.Index):
                    self.eval(el.slice.value)
                else:  # (`m[b, :int(n[b].item())] = 0`: the bounds run too)
                    for part in (el.slice.lower, el.slice.upper, el.slice.step):
                        if part is not None:
                            self.eval(part)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, UNKNOWN)

    def bind_self_attr(self, key: str, value: Value) -> None:
        """`self.x = value` (key `self.x`), also spelled `super().__setattr__("x", value)`."""
        self.state.vars[key] = self.labelled(value, key)
        if isinstance(value, Buffer) and value.site:
            self.attr_sites.setdefault(key, set()).add(value.site)
        self.escape(value)

    def rebind_dict(self, holder: cst.BaseExpression, value: Value) -> None:
        """After `out[key] = v` or `out.update(other)`: what the dict a local or a `self.`
        attribute names holds now."""
        key = holder.value if isinstance(holder, cst.Name) else self.code(holder)
        if isinstance(holder, cst.Name) or key.startswith("self."):
            self.state.vars[key] = value

    def evident_tensor(self, target: cst.BaseExpression, expr: cst.BaseExpression, value: Value) -> Value:
        """`flat = store.get_flat()` where the body later hands `flat` to an NCCL
        collective: a CUDA tensor the call made on the current stream (PyTorch's
        invariant), whatever the call is."""
        if plain(value) is not UNKNOWN or not isinstance(target, cst.Name) or target.value not in self.evident_tensors:
            return value
        if not isinstance(expr, (cst.Call, cst.Subscript, cst.Attribute, cst.BinaryOperation)):
            return value
        reads = []
        if isinstance(expr, cst.Call):
            operands = [a.value for a in expr.args]
            if isinstance(expr.func, cst.Attribute):
                operands.append(expr.func.value)
            reads = [(e, self.lookup(e.value)) for e in operands if isinstance(e, cst.Name)]
        result = Buffer("torch", Mem.DEVICE, site=self.site(expr))
        accesses = self.accesses(reads) + self.result_access(result, expr)
        self.emit(OpKind.KERNEL, self.code(expr)[:40], expr, "torch", stream=self.state.current["torch"],
                  writes=(result,), accesses=accesses, result=result)
        return result

    def note_index_alias(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`slot = (k + 1) % 2`: remember which binding of `k` the slot number came from."""
        affine = _affine(value) if isinstance(target, cst.Name) else None
        if affine is not None and affine[0] in self.versions:
            name, offset, modulus = affine
            self.index_aliases[(target.value, self.versions[target.value])] = (name, self.versions[name], offset, modulus)

    def held_element(self, base: Seq, expr: cst.Subscript, indices: list) -> Optional[Value]:
        """`self.buffers[self.index]`: the element of a double buffer kept on `self` (toggles.py)."""
        holder = toggles.self_attribute(expr.value)
        index = toggles.self_attribute(indices[0][1]) if len(indices) == 1 and indices[0][1] is not None else None
        if holder is None or index is None:
            return None
        held = toggles.element(base, holder, index)
        if held is not None:
            self.element_holders.add(holder)
        return held

    def note_index_flip(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression]) -> None:
        """`self.index = 1 - self.index`: the double buffers it indexes swap elements (toggles.py)."""
        if self.state.hb is None:
            return
        flipped = toggles.flips(target, value) if value is not None else (False if toggles.self_attribute(target) else None)
        if flipped is not None:
            index = toggles.self_attribute(target) or ""
            toggles.rekey(self.state.hb, index, flipped)
            if flipped:
                self.flipped.append(index)

    def delete(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.delete(element.value)
        elif isinstance(target, cst.Name):
            old = self.state.vars.pop(target.value, None)
            if old is not None:
                self.release(old, target, target.value)

    def keep(self, values: Iterable[Value]) -> None:
        for value in values:
            if isinstance(value, (Stream, Event)):
                self.record.kept_sites.add(value.site)

    @staticmethod
    def labelled(value: Value, label: str) -> Value:
        if isinstance(value, (Stream, Event, Loader)) and not value.label:
            return replace(value, label=label)
        if isinstance(value, Buffer) and not value.label:
            return replace(value, label=label)
        if isinstance(value, Seq) and isinstance(value.element, (Stream, Event)) and not value.element.label:
            return replace(value, element=replace(value.element, label=f"{label}[...]"))
        return value

    def present_element(self, test: cst.BaseExpression) -> bool:
        """`x is not None` where the innermost `for` binds `x`: a test of each element's
        presence, not a flag or a one-off."""
        names, absent = _checked_names(test)
        is_not_none = isinstance(test, cst.Comparison) and isinstance(test.comparisons[0].operator, cst.IsNot)
        loop = self.record.loops[self.loop_stack[-1]].node
        return is_not_none and not absent and isinstance(loop, cst.For) and bool(names) \
            and names <= _target_names(loop.target)

    def if_(self, node: cst.If, guarded: Optional[bool] = None, switch: Optional[bool] = None) -> None:
        known = self.static_truth(node.test)
        if known is not None:
            # `if len(result) == 2:` on a tuple we know: only one branch can run.
            if known:
                self.walk(node.body.body)
            elif isinstance(node.orelse, cst.If):
                self.if_(node.orelse, guarded=guarded, switch=switch)
            elif isinstance(node.orelse, cst.Else):
                self.walk(node.orelse.body.body)
            return
        self.truth(node.test)
        base = self.state
        self.state = base.copy()
        then_options, else_options = switches.option_sides(node.test, self.an.config_attributes(self.record.class_name))
        opened = len(self.open_options)
        self.open_options.extend(then_options)
        # A body under a periodic (`step % N == 0`), one-off (`step == K`) or flag
        # (`if debug:`) test does not run every iteration; one under a data-dependent
        # test (`if err > tol:`) may, so it still counts as every iteration.
        once = initialises(node)
        if guarded is None and self.loop_stack and self.present_element(node.test):
            guarded = once  # `for k, v in batch.items(): if v is not None:` runs for each v there is
        guarded = (rare_test(node.test) or once) if guarded is None else guarded
        # A test of an option only `__init__` sets (`if self.overlap_comm:`) is rare in
        # no call: with the option on (or off, for the `else`) the branch always runs.
        # (`switch` is given for an `elif`: whether the `if` before it was such a test.)
        config = self.an.config_attributes(self.record.class_name) if guarded else switches.NO_OPTIONS
        if switch is None:
            switch = bool(guarded) and not once and switches.switch_test(node.test, config)
        steady = bool(guarded) and switch
        if self.branch_depth and guarded:
            self.branch_depth[-1] += 1
        self.rare_depth += bool(guarded)
        self.switch_depth += steady
        self.init_depth += once
        # Under a rare test with an `else`, a helper every branch calls is still called
        # on every call (analysis.call_local collects the calls of each branch).
        collect = bool(guarded) and not steady
        if collect:
            self.branch_calls.append(set())
        none_test = self.none_test(node.test)
        if none_test is not None:
            self.none_tests.append(none_test)
        kind_test = self.array_kind_test(node.test)
        if kind_test is not None and kind_test[1]:
            self.narrow_to_device(kind_test[0])
        absent = _absent_name(node.test)
        if absent is not None and isinstance(self.lookup(absent), Seq):
            # `if out is None: return out`: the tuple a slot may hold is None on this side.
            self.state.vars[absent] = Const(None)
        flips_before = len(self.flipped)
        self.walk(node.body.body)
        then_flips = self.flipped[flips_before:]
        body_calls = self.branch_calls.pop() if collect else set()
        if collect:
            self.branch_calls.append(set())
        then_state = self.state
        self.state = base.copy()
        del self.open_options[opened:]
        self.open_options.extend(else_options)
        if none_test is not None:
            self.none_tests[-1] = (none_test[0], not none_test[1])
        if kind_test is not None and not kind_test[1]:
            self.narrow_to_device(kind_test[0])
        if isinstance(node.orelse, cst.If):
            following = steady and switches.steady_else(node.orelse.test, config) if guarded else None
            self.if_(node.orelse, guarded=guarded or None, switch=following)
        elif isinstance(node.orelse, cst.Else):
            self.walk(node.orelse.body.body)
        else_flips = self.flipped[flips_before + len(then_flips):]
        if (then_flips or else_flips) and self.state.hb is not None and then_state.hb is not None \
                and switches.switch_test(node.test, self.an.config_attributes(self.record.class_name)):
            # A double buffer's index flipped under an option (`if self.overlap_comm:`): with the
            # option off there is no second buffer to flip to, nor a side stream to race with
            # (toggles.py); the element relation is the flipping configuration's on both paths.
            for index in then_flips:
                toggles.rekey(self.state.hb, index, True)
            for index in else_flips:
                toggles.rekey(then_state.hb, index, True)
        if none_test is not None:
            self.none_tests.pop()
        self.rare_depth -= bool(guarded)
        self.switch_depth -= steady
        self.init_depth -= once
        if collect:
            self.every_branch_called(body_calls & self.branch_calls.pop())
        if self.branch_depth and guarded:
            self.branch_depth[-1] -= 1
        # (a branch that returns: the rest of the body is the other side's)
        del self.open_options[opened:]
        if leaves(node.body.body):
            self.open_options.extend(else_options)
        elif isinstance(node.orelse, cst.Else) and leaves(node.orelse.body.body):
            self.open_options.extend(then_options)
        if leaves(node.body.body):
            return  # the `if` branch returns or raises: only the other one goes on
        if not (isinstance(node.orelse, cst.Else) and leaves(node.orelse.body.body)):
            # A periodic guard inside a loop skips its waits on the last steps: only the
            # waits of both paths count there. Elsewhere a wait on either path may order.
            then_state.merge(self.state, must=bool(self.loop_stack) and periodic_test(node.test))
        self.state = then_state

    def every_branch_called(self, keys: set) -> None:
        """Helpers every branch of an `if` called: steady where the `if` itself is."""
        if not keys:
            return
        if self.rare_depth == self.switch_depth:
            for key in keys:
                function = self.an.functions.get(key)
                if function is not None:
                    function.steady_callers.add(id(self.record.node))
        elif self.branch_calls:
            self.branch_calls[-1].update(keys)

    def keywords_by_type(self, test: cst.BaseExpression, body: DictOf, orelse: DictOf, joined: DictOf) -> DictOf:
        """`dict(non_blocking=True) if isinstance(x, torch.Tensor) else {}`: the keyword
        arguments a tensor method called on `x` gets are the tensor side's (on the other
        side `x` is no tensor, and its method no tensor copy)."""
        negated = False
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, negated = test.expression, not negated
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
                and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)
                and self.an.qualname_of(test.args[1].value) in torch_api.TENSOR_TYPES):
            return joined
        side = orelse if negated else body
        if side.keys is None:
            return joined
        return replace(joined, tensor_side=(test.args[0].value.value, side.keys))

    def array_kind_test(self, test: cst.BaseExpression) -> Optional[tuple[str, bool]]:
        """A type test telling a CuPy array from a host array (api/cupy.py):
        `isinstance(x, cupy.ndarray)`, `get_array_module(x) is numpy` / `is not numpy` /
        `is cupy`, or its negation: (the name tested, whether the `if` body is its device side)."""
        negated = False
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, negated = test.expression, not negated
        if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance" \
                and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name) \
                and self.an.qualname_of(test.args[1].value) in cupy_api.DEVICE_ARRAY_TYPES:
            return test.args[0].value.value, not negated
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Call)):
            return None
        call, comparison = test.left, test.comparisons[0]
        if len(call.args) != 1 or not isinstance(call.args[0].value, cst.Name) or call.args[0].keyword is not None:
            return None
        function = self.an.qualname_of(call.func)
        if function not in cupy_api.ARRAY_MODULE_FUNCTIONS and function not in chainer_api.ARRAY_MODULE_FUNCTIONS:
            return None
        module = self.an.qualname_of(comparison.comparator)
        if module not in (cupy_api.DEVICE_MODULE, cupy_api.HOST_MODULE):
            return None
        if isinstance(comparison.operator, (cst.Is, cst.Equal)):
            same = True
        elif isinstance(comparison.operator, (cst.IsNot, cst.NotEqual)):
            same = False
        else:
            return None
        device_in_body = (module == cupy_api.DEVICE_MODULE) == same
        return call.args[0].value.value, device_in_body != negated

    def narrow_to_device(self, name: str) -> None:
        """On the device side of a type test, a name whose kind the walk does not know is a
        CuPy array; a parameter stays keyed by its name (a call maps it to the caller's
        argument, analysis._narrowed_at_call)."""
        if self.lookup(name) is not UNKNOWN:
            return  # (known: host memory makes the side dead, device memory needs nothing)
        given = name in self.params or (self.outer is not None and name in self.outer[1])
        self.state.vars[name] = Buffer("cupy", Mem.DEVICE, label=name, param=name if given else "", narrowed=True)

    def none_test(self, test: cst.BaseExpression) -> Optional[tuple[str, bool]]:
        """`param is None` / `param is not None` on a parameter of this body: (name, the
        side that runs when it is None is the body)."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name)
                and test.left.value in self.params):
            return None
        comparison = test.comparisons[0]
        if not (isinstance(comparison.comparator, cst.Name) and comparison.comparator.value == "None"):
            return None
        if isinstance(comparison.operator, cst.Is):
            return test.left.value, True
        if isinstance(comparison.operator, cst.IsNot):
            return test.left.value, False
        return None

    def static_truth(self, test: cst.BaseExpression) -> Optional[bool]:
        """A test the values decide: `len(t) == 2` for a tuple of known length, or
        `mode == 3` on a walk that follows one value of `mode` (see `selector`), or
        `isinstance(t, torch.Tensor)` of a value known to be a tensor."""
        if isinstance(test, cst.Call):
            return self.tensor_type_test(test)
        if self.options:
            decided = switches.option_truth(test, self.options)
            if decided is not None:
                return decided
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
            return None
        left, comparison = test.left, test.comparisons[0]
        if self.facts and isinstance(left, cst.Name) and left.value in self.facts:
            constant = _constant(comparison.comparator)
            if constant is not None and isinstance(comparison.operator, (cst.Equal, cst.NotEqual)):
                equal = self.facts[left.value] == constant
                return equal if isinstance(comparison.operator, cst.Equal) else not equal
        if not (isinstance(left, cst.Call) and isinstance(left.func, cst.Name) and left.func.value == "len"
                and len(left.args) == 1 and isinstance(comparison.comparator, cst.Integer)):
            return None
        if self.is_bound("len"):
            return None
        value = self.eval(left.args[0].value)
        if not (isinstance(value, Seq) and value.items is not None):
            return None
        n, k = len(value.items), int(comparison.comparator.value, 0)
        table = {cst.Equal: n == k, cst.NotEqual: n != k, cst.LessThan: n < k, cst.GreaterThan: n > k,
                 cst.LessThanEqual: n <= k, cst.GreaterThanEqual: n >= k}
        return table.get(type(comparison.operator))

    def tensor_type_test(self, test: cst.Call) -> Optional[bool]:
        """`isinstance(loss, torch.Tensor)` where the walk knows `loss` is a PyTorch tensor
        (a `Buffer` it made or was given, not an opaque callable's result): true
        (api/torch_api.TENSOR_TYPES). Anything else: not decided."""
        if not (isinstance(test.func, cst.Name) and test.func.value == "isinstance" and len(test.args) == 2
                and not any(a.keyword or a.star for a in test.args) and not self.is_bound("isinstance")):
            return None
        subject, kind = test.args[0].value, test.args[1].value
        kinds = [el.value for el in kind.elements] if isinstance(kind, cst.Tuple) else [kind]
        if not isinstance(subject, cst.Name) or not any(
                isinstance(k, cst.Attribute) and self.an.qualname_of(k) in torch_api.TENSOR_TYPES for k in kinds):
            return None
        value = self.lookup(subject.value)
        if isinstance(value, Buffer) and value.framework == "torch" and not value.opaque:
            return True
        return None

    def loop(self, node: cst.For | cst.While) -> None:
        loop_id = len(self.record.loops)
        self.record.loops[loop_id] = LoopInfo(node, self.loop_stack[-1] if self.loop_stack else None)
        before = self.state.copy()
        if isinstance(node, cst.For):
            element = self.element_of(self.eval(node.iter))
        else:
            element = UNKNOWN
        self.loop_stack.append(loop_id)
        self.branch_depth.append(0)
        # The hazard walk goes round the body again so that one iteration's work meets
        # the next ones' (a ping-pong buffer refilled two iterations later). Bounded.
        passes = 1 if self.state.hb is None else max(1, 3 - len(self.loop_stack) + 1)
        for _ in range(passes):
            if isinstance(node, cst.For):
                self.bind(node.target, element)
            else:
                self.truth(node.test)
            self.walk(node.body.body)
        self.loop_stack.pop()
        self.branch_depth.pop()
        # The body may run zero times: names may still hold their old values. The
        # ordering state keeps what the body did, though: a loop that waits on each
        # of its streams is taken to have run (the zero-trip path is rarely meant).
        hb, self.state.hb = self.state.hb, None
        self.state.merge(before)
        self.state.hb = hb
        if node.orelse is not None:
            self.walk(node.orelse.body.body)

    def element_of(self, iterable: Value) -> Value:
        if isinstance(iterable, Seq):
            element = iterable.element
            return replace(element, one_of=True) if isinstance(element, Stream) else element
        if isinstance(iterable, Loader):
            mem = Mem.PINNED if iterable.pin_memory else Mem.PAGEABLE
            if iterable.pin_memory is None:
                return UNKNOWN
            return _Batch(Buffer("torch", mem, site=iterable.site, loader_site=iterable.site, label="batch"))
        if isinstance(iterable, _Batch):
            return iterable
        if isinstance(iterable, Buffer) and iterable.mem is Mem.DEVICE and iterable.framework == "torch":
            # Rows of a device array, or the pieces of `t.split(...)`: views of the same memory.
            return iterable
        return UNKNOWN

    def with_(self, node: cst.With) -> None:
        saved_current = dict(self.state.current)
        finals: list[tuple[OpKind, Stream, cst.CSTNode]] = []
        pinned_names: list[tuple[str, Value]] = []
        capturing = False
        for item in node.items:
            label = self.code(item.asname.name) if item.asname is not None and isinstance(item.asname.name, cst.Name) else ""
            value = self.labelled(self.eval(item.item, label), label) if label else self.eval(item.item)
            if isinstance(value, _Capture):
                capturing = True
            if isinstance(value, StreamContext):
                stream = value.stream
                if isinstance(stream, Stream):
                    self.make_current(value.framework, stream)
            elif isinstance(value, Stream) and value.framework in CURRENT_FRAMEWORKS:
                self.make_current(value.framework, value)
            elif isinstance(value, _AutoSync):
                finals.append((OpKind.STREAM_SYNC, value.stream, item.item))
            elif isinstance(value, _Pinned):
                for name in value.names:
                    old = self.lookup(name)
                    pinned_names.append((name, old))
                    if isinstance(old, Buffer):
                        self.state.vars[name] = replace(old, mem=Mem.PINNED)
            if item.asname is not None:
                self.bind(item.asname.name, value if not isinstance(value, StreamContext) else value.stream)
        saved_capturing = self.capturing
        if capturing:
            self.capturing = self.capturing | {"<torch.cuda.graph>"}
            self.captured = []
        self.walk(node.body.body)
        self.capturing = saved_capturing
        if capturing:
            self.bind_captured_graph(node)
        for kind, stream, at in finals:
            self.emit(kind, "auto_synchronize", at, stream.framework, stream=stream, target=stream, host_blocking=True)
        for name, old in pinned_names:
            self.state.vars[name] = old
        self.state.current = saved_current

    def make_current(self, framework: str, stream: Stream) -> None:
        self.state.current[framework] = stream
        if stream.explicit:
            self.record.enters_stream = True

    def try_(self, node: cst.Try | cst.TryStar) -> None:
        base = self.state.copy()
        self.walk(node.body.body)
        for handler in node.handlers:
            saved = self.state
            self.state = base.copy()
            self.walk(handler.body.body)
            if not leaves(handler.body.body):  # a handler that returns does not reach what follows
                saved.merge(self.state)
            self.state = saved
        if node.orelse is not None:
            self.walk(node.orelse.body.body)
        if node.finalbody is not None:
            self.walk(node.finalbody.body.body)

    # ------------------------------------------------------------------ expressions
    def truth(self, expr: cst.BaseExpression) -> Value:
        """Evaluate an expression used as a truth value (`if`, `while`, `and`, `not`)."""
        self.truth_of(expr)
        return UNKNOWN

    def truth_of(self, expr: cst.BaseExpression) -> Value:
        """`truth`, and the value (an operand of `and` / `or`)."""
        value = self.eval(expr)
        if isinstance(value, Buffer) and value.opaque:
            return UNKNOWN  # `if checker(t):` may test a Python bool the callable returned
        if isinstance(value, Buffer) and value.mem is Mem.DEVICE and value.framework in ("torch", "cupy"):
            self.emit(
                OpKind.IMPLICIT_SYNC, "truth value", expr, value.framework,
                stream=self.state.current.get(value.framework), receiver=value, host_blocking=True,
            )
        return value

    def eval(self, expr: cst.BaseExpression, label: str = "", raw: bool = False) -> Value:  # noqa: C901
        """The value of an expression; `raw`: also a tensor that is CUDA on some paths
        only (`HostOrDevice`), which the general rules see as UNKNOWN."""
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return Const({"True": True, "False": False, "None": None}[expr.value])
            return self.lookup(expr.value, raw)
        if isinstance(expr, cst.Attribute):
            return self.attribute(expr)
        if isinstance(expr, cst.Call):
            return self.call(expr, label)
        if isinstance(expr, cst.Subscript):
            return self.subscript(expr)
        if isinstance(expr, cst.BinaryOperation):
            left, right = self.eval(expr.left), self.eval(expr.right)
            if isinstance(expr.operator, cst.Multiply) and isinstance(left, Seq) and isinstance(expr.left, cst.List) \
                    and not isinstance(right, (Buffer, Seq)):
                return Seq(element=left.element)  # `[None] * n`: n slots, each what the list holds
            return self.arith(left, right, expr, exprs=(expr.left, expr.right))
        if isinstance(expr, cst.Comparison):
            left = self.eval(expr.left)
            result = UNKNOWN
            for target in expr.comparisons:
                right = self.eval(target.comparator)
                if not isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) and not (
                    _host_scalar(expr.left) or _host_scalar(target.comparator)
                ):  # (`a.data.ptr == b.data.ptr`, `x.shape[0] == n`: Python ints, no kernel)
                    result = self.arith(left, right, expr, exprs=(expr.left, target.comparator))
                    if isinstance(result, Buffer) and _assumed_only(left, right):
                        # (`numel > bucket_size` with a size only assumed to be a tensor: maybe a bool)
                        result = replace(result, opaque=True)
            return result
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return self.truth(expr.expression)
            return self.arith(self.eval(expr.expression), UNKNOWN, expr, exprs=(expr.expression, None))
        if isinstance(expr, cst.BooleanOperation):
            left = self.truth_of(expr.left)
            right = self.truth_of(expr.right)
            if isinstance(expr.operator, cst.Or) and isinstance(right, Stream) and right.is_default \
                    and (left is UNKNOWN or left == Const(None)):
                # `compute_stream or torch.cuda.current_stream()`: the current stream unless
                # the caller names another (which the caller then orders itself).
                return right
            return UNKNOWN
        if isinstance(expr, cst.IfExp):
            self.truth(expr.test)
            body, orelse = self.eval(expr.body, raw=True), self.eval(expr.orelse, raw=True)
            joined = self.device_join(body, orelse)
            if isinstance(joined, DictOf) and isinstance(body, DictOf) and isinstance(orelse, DictOf):
                joined = self.keywords_by_type(expr.test, body, orelse, joined)
            return joined if raw else plain(joined)
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            items = tuple(self.eval(e.value) for e in expr.elements)
            element = items[0] if items else UNKNOWN
            for item in items[1:]:
                element = join(element, item)
            return Seq(items=items, element=element)
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return Seq(element=self.comprehension(expr.for_in, expr.elt))
        if isinstance(expr, cst.DictComp):
            value = self.comprehension(expr.for_in, expr.value)
            return DictOf(value) if value is not UNKNOWN else UNKNOWN
        if isinstance(expr, cst.SimpleString):
            try:
                return Const(expr.evaluated_value)
            except Exception:
                return UNKNOWN
        if isinstance(expr, cst.Integer):
            try:
                return Const(int(expr.value, 0))
            except ValueError:
                return UNKNOWN
        if isinstance(expr, cst.FormattedString):
            first = expr.parts[0] if expr.parts else None
            cuda = isinstance(first, cst.FormattedStringText) and first.value.startswith("cuda")
            for part in expr.parts:
                if isinstance(part, cst.FormattedStringExpression):
                    self.builtin_sync("f-string", part.expression, self.eval(part.expression), part.expression)
            return Const("cuda") if cuda else UNKNOWN  # f"cuda:{rank}" names a CUDA device
        if isinstance(expr, cst.NamedExpr):
            value = self.eval(expr.value)
            self.bind(expr.target, value)
            return value
        if isinstance(expr, cst.Yield) and self.yield_current is None:
            self.yield_current = dict(self.state.current)
        if isinstance(expr, (cst.Await, cst.Yield)):
            inner = getattr(expr, "expression", None) or getattr(expr, "value", None)
            if isinstance(inner, cst.BaseExpression):
                return self.eval(inner)
            return UNKNOWN
        if isinstance(expr, cst.Lambda):
            return UNKNOWN
        if isinstance(expr, cst.Dict):
            result: Value = DictOf(empty=True)
            keys: Optional[list] = []
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    key = self.eval(element.key)
                    value = self.eval(element.value)
                    result = result.stored(value) if isinstance(result, DictOf) else UNKNOWN
                    if keys is not None and isinstance(key, Const) and isinstance(key.value, str) \
                            and isinstance(value, Const):
                        keys.append((key.value, value))
                    else:
                        keys = None
                else:  # `**other`
                    other = self.eval(element.value)
                    result = join(result, other) if isinstance(other, DictOf) else UNKNOWN
                    keys = None
            if isinstance(result, DictOf) and keys is not None:
                result = replace(result, keys=tuple(keys))  # (keyword arguments, for a `**kwargs`)
            return result
        if isinstance(expr, cst.StarredElement):
            return self.eval(expr.value)
        return UNKNOWN

    def comprehension(self, for_in: cst.CompFor, elt: cst.BaseExpression) -> Value:
        saved = self.state
        self.state = saved.copy()
        self.comprehension_depth += 1
        self.comprehension_stack.append(id(for_in))
        node: Optional[cst.CompFor] = for_in
        while node is not None:
            self.bind(node.target, self.element_of(self.eval(node.iter)))
            for cond in node.ifs:
                self.truth(cond.test)
            node = node.inner_for_in
        value = self.eval(elt)
        self.comprehension_stack.pop()
        self.comprehension_depth -= 1
        self.state = saved
        return value

    @staticmethod
    def device_join(a: Value, b: Value) -> Value:
        """`"cuda" if torch.cuda.is_available() else "cpu"`: the code's GPU path is CUDA."""
        for x, y in ((a, b), (b, a)):
            if _is_cuda_target(x) and _is_cpu_target(y):
                return x
        return join_paths(a, b)

    def attribute(self, expr: cst.Attribute) -> Value:
        if self.peer_values:
            held = self.peer_values.get(self.code(expr))
            if held is not None:
                return held
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            key = f"self.{expr.attr.value}"
            if self.state.hb is not None:
                self.first_reads.setdefault(key, expr)
            if key in self.state.vars:
                return plain(self.state.vars[key])
            owner = self.record.class_name
            if owner is None and isinstance(self.state.vars.get("self"), Instance):
                owner = self.state.vars["self"].cls  # a function nested in a method (a hook, a callback)
            held = self.an.class_attr(owner, expr.attr.value)
            return self.evident_path(key) if held is UNKNOWN else plain(held)
        attr = expr.attr.value
        base = self.eval(expr.value, raw=attr == "device")
        if isinstance(base, HostOrDevice):
            # CUDA on the paths where the tensor is (a device that is CUDA on one path is
            # the code's GPU path, as `values.join` takes it).
            return Device(cuda=True, of=base)
        if isinstance(base, QualRef):
            qualname = api.normalize(f"{base.qualname}.{attr}")
            return self.named_value(qualname) or QualRef(qualname)
        if isinstance(base, Buffer) and attr in _POINTER_ATTRS:
            return base
        if isinstance(base, Stream) and attr in nccl.STREAM_HANDLE_ATTRS:
            return base  # `stream.ptr`: its raw handle stands for the stream (api/nccl.py)
        if isinstance(base, Buffer) and base.mem is Mem.DEVICE and attr == "device" and base.framework in ("torch", "cupy"):
            return Device(cuda=True)  # `x.device` of a CUDA tensor: `torch.tensor(..., device=x.device)` is an upload
        if isinstance(base, Buffer) and base.framework == "torch" and base.mem is Mem.DEVICE and attr in torch_api.TENSOR_ATTRIBUTES:
            return base  # `x.grad`, `topk(...).indices`: CUDA tensors of the same computation
        if isinstance(base, Instance):
            held = plain((base.home or self.an).class_attr(base.cls, attr))
            if isinstance(held, Buffer) and held.site and isinstance(expr.value, cst.Name) \
                    and expr.value.value in self.params and self.state.vars.get(expr.value.value) is base:
                # The memory an object the caller passed keeps (`buffer.memory`): part of that
                # object, keyed by the parameter as the accesses of its methods are.
                return replace(held, site=0, param=expr.value.value, region=f".{attr}", label=f"{expr.value.value}.{attr}")
            return held
        if isinstance(base, _Batch):
            return base
        if base is UNKNOWN and isinstance(expr.value, cst.Name):
            return self.evident_path(f"{expr.value.value}.{attr}")
        return UNKNOWN

    def seed_peers(self, peers: dict) -> None:
        """Holder attributes another function made together with one this body records on
        its stream (`peers.Peer`): tensors made on that function's stream, before this call,
        held by the holder (not released here)."""
        hb = self.state.hb
        if hb is None:
            return
        self.peers = dict(peers)
        for path, peer in peers.items():
            site = hash(("peer", id(peer.made), path))
            self.peer_values[path] = Buffer("torch", Mem.DEVICE, site=site, label=path)
            self.escaped.add(site)
            hb.allocated(("b", site, ""), f"peer:{peer.producer}", f"the stream `{peer.producer}` ran on", peer.made)

    def evident_path(self, path: str) -> Value:
        """`self.grad_data`, `bucket.grad_data` that the body hands to an NCCL collective:
        a CUDA tensor made before this function ran, known by its path."""
        if path in self.evident_tensors:
            return Buffer("torch", Mem.DEVICE, label=path, param=path)
        return UNKNOWN

    @staticmethod
    def named_value(qualname: str) -> Optional[Value]:
        """Module attributes that denote streams (`Stream.null`, `cudaStreamLegacy`)."""
        if qualname in ("cupy.cuda.Stream.null",) or qualname in cuda_python.LEGACY_HANDLES:
            return legacy_stream(api.framework_of(qualname) or "cuda")
        if qualname == "cupy.cuda.Stream.ptds" or qualname in cuda_python.PER_THREAD_HANDLES:
            return Stream(api.framework_of(qualname) or "cuda", StreamKind.PER_THREAD, True, "the per-thread default stream", site=-3)
        return None

    def subscript(self, expr: cst.Subscript) -> Value:
        base = self.eval(expr.value)
        indices = []
        for el in expr.slice:
            if isinstance(el.slice, cst.Index):
                indices.append((self.eval(el.slice.value), el.slice.value))
            else:
                for part in (el.slice.lower, el.slice.upper, el.slice.step):
                    if part is not None:
                        self.eval(part)
                indices.append((None, None))
        if isinstance(base, Kernel) and base.framework == "numba" and 2 <= len(indices) <= 4:
            stream = indices[2][0] if len(indices) >= 3 else None
            stream_expr = indices[2][1] if len(indices) >= 3 else None
            return Launch(base, self.launch_stream(stream, stream_expr))
        if base == Const(None) and self.record.class_name:
            # `self.buffers = None` in `__init__`, a list another method fills: what it holds there.
            holder = toggles.self_attribute(expr.value)
            if holder is not None and len(indices) == 1 and toggles.self_attribute(indices[0][1]) is not None:
                stored = self.an.class_attr(self.record.class_name, holder[5:])
                base = stored if isinstance(stored, Seq) else base
        if isinstance(base, Seq):
            first = indices[0][0] if len(indices) == 1 else None
            index = first.value if isinstance(first, Const) and isinstance(first.value, int) else None
            held = self.held_element(base, expr, indices)
            if held is not None:
                return held
            item = base.item(index)
            if index is None and isinstance(item, Stream):
                item = replace(item, one_of=True)
            return item
        if isinstance(base, Buffer):
            if self.state.hb is not None and base.mem in (Mem.PINNED, Mem.PAGEABLE) and not self.view_depth:
                self.host_touch(expr, base, write=False)
            fresh = self.numpy_fresh_index(base, expr, indices)  # advanced indexing copies
            if fresh is not None:
                return fresh
            if base.framework == "numpy" and not any(isinstance(el.slice, cst.Slice) for el in expr.slice):
                # `a[i]` is a row view or a NumPy scalar (passed to kernels by value):
                # the creating call's shape tells which, when we saw it.
                left = None if base.ndim is None else base.ndim - len(expr.slice)
                return replace(base, maybe_scalar=left is None or left <= 0, ndim=left)
            if self.state.hb is not None and not base.region and base.mem is Mem.DEVICE:
                region = self.slice_region(expr)
                if region:
                    return replace(base, region=region)  # a view of part of the same memory
            return base  # a view of the same memory
        if isinstance(base, _Batch):
            return base.batch
        if isinstance(base, DictOf):
            return UNKNOWN if base.empty else base.value
        if isinstance(base, Stream):
            return UNKNOWN
        if isinstance(base, QualRef) and api.framework_of(base.qualname) is None:
            foreign = self.an.foreign(base.qualname)
            if isinstance(foreign, Kernel) and 2 <= len(indices) <= 4:
                stream = indices[2][0] if len(indices) >= 3 else None
                stream_expr = indices[2][1] if len(indices) >= 3 else None
                return Launch(foreign, self.launch_stream(stream, stream_expr))
        return UNKNOWN

    def bind_captured_graph(self, node: cst.With) -> None:
        """`with torch.cuda.graph(g):` - `g` now holds the work recorded in the body."""
        for item in node.items:
            call = item.item
            if isinstance(call, cst.Call) and call.args and isinstance(call.args[0].value, cst.Name):
                self.bind(call.args[0].value, Graph(tuple(self.captured), site=self.site(call)))
        self.captured = []

    def launch_stream(self, value: Optional[Value], expr: Optional[cst.BaseExpression]) -> Optional[Value]:
        if value is None or (isinstance(value, Const) and value.value in (0, None)):
            return None
        if isinstance(value, Stream):
            return value
        return self.param_stream(expr, "numba") if expr is not None else UNKNOWN

    def arith(self, left: Value, right: Value, node: cst.CSTNode, inplace: bool = False,
              exprs: tuple = (None, None)) -> Value:
        for value in (left, right):
            if isinstance(value, Buffer) and value.mem is Mem.DEVICE and value.framework in ("torch", "cupy"):
                fw = value.framework
                reads = tuple(v for v in (left, right) if isinstance(v, Buffer))
                result = value if inplace else Buffer(fw, Mem.DEVICE, site=self.site(node))
                accesses = self.accesses(zip(exprs, (left, right)))
                accesses += self.accesses([(exprs[0], left)], write=True) if inplace else self.result_access(result, node)
                self.emit(OpKind.KERNEL, _OPERATOR_LABELS.get(type(node), "an elementwise operation"), node, fw,
                          stream=self.state.current.get(fw), reads=reads, writes=(result,), accesses=accesses)
                return result
        if self.state.hb is not None:
            for expr, value in zip(exprs, (left, right)):
                if expr is not None and not (isinstance(value, Buffer) and value.framework == "raw"):
                    # (pointer arithmetic reads no memory)
                    self.host_touch(expr, value, write=inplace and expr is exprs[0])
        for value in (left, right):
            if isinstance(value, Buffer) and value.framework == "raw":
                return value  # pointer arithmetic keeps the allocation's provenance
        for value in (left, right):
            if isinstance(value, Buffer) and value.mem in (Mem.PAGEABLE, Mem.PINNED) and value.framework in ("numpy", "torch"):
                scalar = all(v.maybe_scalar if isinstance(v, Buffer) else not isinstance(v, Seq) for v in (left, right))
                return value if inplace else Buffer(value.framework, Mem.PAGEABLE, site=self.site(node), maybe_scalar=scalar)
        return UNKNOWN

    # ------------------------------------------------------------------ calls
    def args_of(self, call: cst.Call) -> tuple[list[cst.BaseExpression], dict[str, cst.BaseExpression]]:
        positional: list[cst.BaseExpression] = []
        keywords: dict[str, cst.BaseExpression] = {}
        for arg in call.args:
            if arg.keyword is not None:
                keywords[arg.keyword.value] = arg.value
            elif not arg.star:
                positional.append(arg.value)
        return positional, keywords

    def eval_args(self, call: cst.Call) -> "Args":
        positional, keywords = self.args_of(call)
        values = {id(e): self.eval_arg(e) for e in positional}
        values.update({id(e): self.eval_arg(e) for e in keywords.values()})
        spread: dict[str, Value] = {}
        for arg in call.args:
            if arg.star:
                given = self.eval(arg.value)
                if arg.star == "**" and isinstance(given, DictOf):
                    # `t.to(device, **kwargs)` of `kwargs = dict(non_blocking=True)`
                    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
                    named = receiver.value if isinstance(receiver, cst.Name) else ""
                    spread.update((k, v) for k, v in given.keywords_for(named) if k not in keywords)
        return Args(positional, keywords, values, spread)

    def eval_arg(self, expr: cst.BaseExpression, raw: bool = False) -> Value:
        """An argument: a subscript here only names a view (the callee decides whether
        the host reads it: NumPy and print do, a GPU copy does not)."""
        if isinstance(expr, cst.Subscript):
            self.view_depth += 1
            try:
                return self.eval(expr)
            finally:
                self.view_depth -= 1
        return self.eval(expr, raw=raw)



# Attributes and methods of arrays that are host values (Python ints, shapes, devices).
_HOST_ATTRS = frozenset({"ptr", "shape", "ndim", "nbytes", "itemsize", "dtype", "device", "is_cuda", "strides"})
_HOST_METHODS = frozenset({"numel", "nelement", "size", "dim", "ndimension", "data_ptr", "element_size",
                           "get_device", "stride", "storage_offset", "len"})


def _host_scalar(expr: cst.BaseExpression) -> bool:
    """An expression that is a Python value whatever array it starts from: a pointer,
    a shape or one of its entries, an element count (comparing two is not a GPU read)."""
    if isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value in _HOST_ATTRS
    if isinstance(expr, cst.Call):
        func = expr.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        return name in _HOST_METHODS
    return False


def leaves(body: Sequence[cst.BaseStatement]) -> bool:
    """Does a block end by leaving the function (`return`, `raise`)?"""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine) and last.body:
        return isinstance(last.body[-1], (cst.Return, cst.Raise))
    if isinstance(last, cst.If) and isinstance(last.orelse, cst.Else):
        return leaves(last.body.body) and leaves(last.orelse.body.body)
    return False


def _self_element(expr: cst.BaseExpression, code) -> bool:
    """`self._stages[i]`: an element of a list kept on `self`."""
    return isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) \
        and code(expr.value).startswith("self.") and code(expr.value).count(".") == 1


def _absent_name(test: cst.BaseExpression) -> Optional[str]:
    """`x is None`: the name `x`."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name):
        comparison = test.comparisons[0]
        if isinstance(comparison.operator, cst.Is) and isinstance(comparison.comparator, cst.Name) \
                and comparison.comparator.value == "None":
            return test.left.value
    return None


def initialises(node: cst.If) -> bool:
    """`if self.buf is None: self.buf = ...`, `if key not in cache: cache[key] = ...`,
    `if "step" in group: ... else: group["step"] = ...`: a branch sets what the test
    checks (for None, membership, `hasattr`, truth), so it runs once, not every time."""
    checked, absent = _checked_names(node.test)
    if not checked:
        return False
    # The branch where the thing is missing is the one that sets it (`is None`: the body;
    # `is not None`, `in`, `hasattr`: the `else`).
    branches = [node.body] if absent else [node.orelse.body] if isinstance(node.orelse, cst.Else) else []
    for branch in branches:
        for stmt in branch.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                    [small.target] if isinstance(small, cst.AnnAssign) else []
                for target in targets:
                    base = target.value if isinstance(target, cst.Subscript) else target
                    if dotted_name(base) in checked:
                        return True
    return False


def _checked_names(test: cst.BaseExpression) -> tuple[set, bool]:
    """What an initialisation test checks (`x is None`, `k not in d` (d), `not x`,
    `hasattr(self, "x")` (self.x)), and whether its body is the branch where it is absent."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        names, absent = _checked_names(test.expression)
        if names:
            return names, not absent
        return {dotted_name(test.expression)} - {""}, True
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comp = test.comparisons[0]
        if isinstance(comp.operator, (cst.Is, cst.IsNot)) and isinstance(comp.comparator, cst.Name) \
                and comp.comparator.value == "None":
            return {dotted_name(test.left)} - {""}, isinstance(comp.operator, cst.Is)
        if isinstance(comp.operator, (cst.In, cst.NotIn)):
            return {dotted_name(comp.comparator)} - {""}, isinstance(comp.operator, cst.NotIn)
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "hasattr" \
            and len(test.args) == 2 and isinstance(test.args[1].value, cst.SimpleString):
        owner = dotted_name(test.args[0].value)
        attr = test.args[1].value.evaluated_value
        return ({f"{owner}.{attr}"} if owner and isinstance(attr, str) else set()), False
    return set(), True


def _target_names(target: cst.BaseExpression) -> set[str]:
    """The names a `for` target binds (`k, (a, b)`)."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in _target_names(e.value)}
    return set()


def _constant(expr: cst.BaseExpression) -> Optional[object]:
    """The value of an integer or string literal."""
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0)
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value
    return None


class _Other:
    """A selector's value that none of the tests names (the `else` of every test)."""

    def __eq__(self, other) -> bool:
        return isinstance(other, _Other)

    def __hash__(self) -> int:
        return 0


OTHER = _Other()


def selector(body: list, params: list[str]) -> Optional[tuple[str, tuple]]:
    """A parameter the body tests against two or more constants and never rebinds
    (`if spatial_method == 2: ... elif spatial_method == 3: ...`, and again later):
    its branches are exclusive, so each value is walked as a path of its own.
    (A walk over statements only, not a visitor: it runs for every hazard walk.)"""
    tested: dict[str, set] = {}
    assigned: set[str] = set()
    stack: list = list(body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, cst.If):
            _tests(stmt.test, tested)
            stack.extend(stmt.body.body)
            if stmt.orelse is not None:
                stack.append(stmt.orelse) if isinstance(stmt.orelse, cst.If) else stack.extend(stmt.orelse.body.body)
        elif isinstance(stmt, (cst.For, cst.While, cst.With, cst.Try)):
            stack.extend(stmt.body.body)
            for part in (getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None)):
                if part is not None:
                    stack.extend(part.body.body)
            for handler in getattr(stmt, "handlers", ()):
                stack.extend(handler.body.body)
            if isinstance(stmt, cst.For):
                _bound(stmt.target, assigned)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        _bound(target.target, assigned)
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    _bound(small.target, assigned)
    for name, constants in sorted(tested.items()):
        if name in params and name not in assigned and 2 <= len(constants) <= _SELECTOR_MAX_VALUES:
            return name, tuple(sorted(constants, key=repr))
    return None


def _tests(test: cst.BaseExpression, tested: dict) -> None:
    """`name == constant` / `!=` comparisons in an `if` test (through `and` / `or`)."""
    if isinstance(test, cst.BooleanOperation):
        _tests(test.left, tested)
        _tests(test.right, tested)
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name) \
            and isinstance(test.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
        constant = _constant(test.comparisons[0].comparator)
        if constant is not None:
            tested.setdefault(test.left.value, set()).add(constant)


def _bound(target: cst.BaseExpression, assigned: set) -> None:
    """Names a target rebinds (`ctx.mode = mode` rebinds none)."""
    if isinstance(target, cst.Name):
        assigned.add(target.value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _bound(element.value, assigned)


_SELECTOR_MAX_VALUES = 4


def _assumed_only(*values: Value) -> bool:
    """Operands where a device tensor, if any, is one the walk only assumed (`assumed`; a
    result of an unknown callable given CUDA tensors is one: `model(x) > 0` syncs)."""
    buffers = [v for v in values if isinstance(v, Buffer) and v.mem is Mem.DEVICE]
    return bool(buffers) and all(v.assumed for v in buffers)
