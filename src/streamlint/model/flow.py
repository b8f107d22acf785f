"""The flow walk: one pass over a body in program order, producing its GpuOp record.

It tracks what each name holds (values.py), the current stream of each framework,
loops, branches and `self.` attributes, and turns calls into operations using the API
tables (api/). Whatever the text does not show stays UNKNOWN.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

import libcst as cst

from streamlint.model import api
from streamlint.model.api import cupy as cupy_api
from streamlint.model.api import cuda_python, numpy_api, torch_api
from streamlint.model.api.facts import (
    BLOCK_ALWAYS, BLOCK_FLAG, BLOCK_UNLESS_STREAM, STREAM_ARG, STREAM_ARG_OR_BOUND,
    STREAM_ARG_OR_CURRENT, STREAM_CURRENT, STREAM_LEGACY, STREAM_SELF, Arg, Fact,
)
from streamlint.model.hazards import ANY, DEVICE, HB, HOSTMEM, LEGACY, UNSURE, Access, Ev, Hazard, stream_key
from streamlint.model.ops import (
    COPIES, DEVICE_WORK, HOST_SYNCS, FunctionRecord, GpuOp, HelperRef, LoopInfo, OpKind,
)
from streamlint.model.values import (
    UNKNOWN, Buffer, Const, Device, Event, Instance, Kernel, Launch, LocalFunction, Loader, Mem,
    QualRef, Seq, Stream, StreamContext, StreamKind, TorchModule, Value, ambient_stream, join,
    legacy_stream,
)

if TYPE_CHECKING:
    from streamlint.model.analysis import FileAnalyzer

# Frameworks that keep a per-thread current stream.
CURRENT_FRAMEWORKS = ("cupy", "torch")
LOCAL = "<local>."
_BUILTIN_SYNCS = frozenset({"print", "float", "int", "bool", "str", "repr", "complex"})
# Storing a stream or event into a container keeps it for later: creating one per
# item (one event per submodule, streams appended at set-up) is not a hot-path smell.
_CONTAINER_STORES = frozenset({"append", "add", "insert", "extend", "put", "put_nowait", "appendleft", "setdefault"})
_UNKNOWN_STREAM_METHODS = frozenset({"synchronize", "sync", "wait_stream", "wait_event"})
_OPERATOR_LABELS = {cst.BinaryOperation: "arithmetic", cst.Comparison: "a comparison",
                    cst.UnaryOperation: "arithmetic", cst.AugAssign: "in-place arithmetic"}
# Host timers: a loop that reads one is a measurement harness; its syncs end timed regions.
_TIMERS = frozenset({"time.perf_counter", "time.perf_counter_ns", "time.time", "time.monotonic",
                     "time.monotonic_ns", "time.process_time", "timeit.default_timer"})
_CAPTURE_BEGIN = frozenset({"begin_capture", "capture_begin"})
_CAPTURE_END = frozenset({"end_capture", "capture_end"})
_POINTER_ATTRS = frozenset({"ctypes", "data", "ptr", "T", "mT", "real", "imag", "base"})


class State:
    __slots__ = ("vars", "current", "hb")

    def __init__(self, vars: dict[str, Value], current: dict[str, Stream], hb: Optional[HB] = None) -> None:
        self.vars = vars
        self.current = current
        self.hb = hb  # ordering state; only in the hazard walk

    def copy(self) -> "State":
        return State(dict(self.vars), dict(self.current), self.hb.copy() if self.hb is not None else None)

    def merge(self, other: "State") -> None:
        """Join another path's state into this one (branches meeting)."""
        for key in set(self.vars) | set(other.vars):
            self.vars[key] = join(self.vars.get(key, UNKNOWN), other.vars.get(key, UNKNOWN))
        for fw in set(self.current) | set(other.current):
            a, b = self.current.get(fw), other.current.get(fw)
            self.current[fw] = a if a == b else ambient_stream(fw)
        if self.hb is not None and other.hb is not None:
            self.hb.meet(other.hb)


class Walker:
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
        start = legacy_stream if at_module else ambient_stream
        self.state = State(dict(seed or {}), {fw: start(fw) for fw in CURRENT_FRAMEWORKS})
        self.loop_stack: list[int] = []
        self.comprehension_depth = 0
        self.returns: Value = None  # type: ignore[assignment]
        # The hazard walk (a second walk of bodies that use streams) carries the
        # happens-before state and collects cross-stream hazards.
        self.hazard_mode = hazard_mode
        self.top = top  # the top-level statement being walked (for cheap positions)
        self.view_depth = 0
        self.capturing = 0  # inside stream capture: work is recorded into a graph, not run
        self.branch_depth: list[int] = []  # per enclosing loop: how many `if` branches deep
        self.incarnations = 0
        self.hazards: dict[tuple, Hazard] = {}
        self.escaped: set[int] = set()  # buffer sites returned or stored beyond the body
        if hazard_mode:
            self.state.hb = HB()
            entry = self.state.hb.tick(LEGACY, True)
            for name in params:
                self.state.hb.produced_before_entry(("n", name, ""), record.node, entry)

    # ------------------------------------------------------------------ helpers
    def code(self, node: cst.CSTNode) -> str:
        return self.an.code(node)

    def lookup(self, name: str) -> Value:
        if name in self.state.vars:
            return self.state.vars[name]
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
            conditional=bool(self.branch_depth and self.branch_depth[-1]), **kw,
        )
        self.record.ops.append(op)
        if self.top is not None:
            self.an.result.tops[id(node)] = self.top
        if kind in DEVICE_WORK and op.stream is not None and op.stream.explicit:
            self.record.passes_stream = True
        if self.state.hb is not None:
            self.order(op)
        return op

    # ------------------------------------------------------------------ happens-before
    def order(self, op: GpuOp) -> None:
        """Apply one operation to the ordering state and check its buffer accesses."""
        hb = self.state.hb
        kind = op.kind
        if self.capturing and kind in DEVICE_WORK | {OpKind.EVENT_RECORD, OpKind.STREAM_WAIT_EVENT, OpKind.WAIT_STREAM}:
            return  # captured into a graph: it runs when the graph is launched
        event_site = op.event.site if isinstance(op.event, Event) and op.event.site else None
        if kind is OpKind.DEVICE_SYNC:
            hb.host_sync(None)
        elif kind is OpKind.STREAM_SYNC:
            hb.host_sync(stream_key(op.target) if op.target is not None else None)
        elif kind is OpKind.EVENT_SYNC:
            hb.host_sync_event(event_site)
        elif kind is OpKind.EVENT_RECORD:
            if op.stream is not None and event_site is not None:  # an unknown event: nothing to record
                hb.record_event(event_site, stream_key(op.stream))
        elif kind is OpKind.STREAM_WAIT_EVENT:
            if op.stream is not None:
                hb.wait_event(stream_key(op.stream), event_site)
        elif kind is OpKind.WAIT_STREAM:
            if op.stream is not None:
                hb.wait_stream(stream_key(op.stream), stream_key(op.target) if op.target is not None else None)
        elif kind is OpKind.RECORD_STREAM:
            target = stream_key(op.target) if op.target is not None else None
            for acc in op.accesses:
                if target is None:
                    hb.allocs.pop(acc.key, None)  # recorded on a stream we cannot name: protected
                else:
                    hb.record_stream(acc.key, target)
        elif kind is OpKind.RAW_ALLOC:
            hb.host_sync(None)  # cudaMalloc/cudaFree synchronize the device
        elif (kind in DEVICE_WORK or kind is OpKind.IMPLICIT_SYNC) and op.stream is not None:
            key = stream_key(op.stream)
            clock = hb.tick(key, op.stream.blocking)
            label = op.stream.label or "a stream"
            found: list[Hazard] = []
            for acc in op.accesses:
                ev = Ev(op.node, key, clock, label=label, api=op.api, space=acc.space, via=op.helper)
                found.extend(hb.device_access(acc, ev, op.framework))
                hb.used(acc.key, ev)
            # A read-modify-write racing another writer is one problem, not two: SL402
            # when the body is seen to write, SL401 when the write is only assumed (a
            # kernel body we cannot read).
            assumed = {a.key for a in op.accesses if a.write and a.assumed}
            written = {h.key for h in found if h.code == "SL402"}
            read = {h.key for h in found if h.code == "SL401"}
            for hazard in found:
                if hazard.code == "SL401" and hazard.key in written and hazard.key not in assumed:
                    continue
                if hazard.code == "SL402" and hazard.key in read and hazard.key in assumed:
                    continue
                self.hazards.setdefault(hazard.identity, hazard)
            if op.host_blocking is True or self.drains_host(op):
                hb.host_sync(key)
            self.allocations(op, key, label)
        elif kind is OpKind.ALLOC and op.stream is not None and op.framework == "torch":
            self.allocations(op, stream_key(op.stream), op.stream.label or "a stream")

    def allocations(self, op: GpuOp, key: str, label: str) -> None:
        """A torch op that makes a new CUDA tensor allocates it on the current stream."""
        result = op.result
        if not (isinstance(result, Buffer) and result.framework == "torch" and result.mem is Mem.DEVICE and result.site):
            return
        if op.kind is not OpKind.ALLOC and not any(a.fresh and a.key[1] == result.site for a in op.accesses):
            return  # in place, or a copy whose source may already be on the device
        self.state.hb.allocated(("b", result.site, ""), key, label, op.node)

    @staticmethod
    def drains_host(op: GpuOp) -> bool:
        """A D2H copy into memory not known to be pinned waits for its stream in practice."""
        return op.kind is OpKind.COPY_D2H and op.host_blocking is not True and not op.pinned_out and not (
            isinstance(op.host_buffer, Buffer) and op.host_buffer.mem is Mem.PINNED
        )

    def access(self, expr: Optional[cst.BaseExpression], value: Value, write: bool, space: str = ANY) -> Optional[Access]:
        """The buffer an argument names, for the ordering check (None: we cannot tell)."""
        if expr is None:
            return None
        region = ""
        base = expr
        while True:
            if isinstance(base, cst.Subscript):
                if len(base.slice) == 1 and isinstance(base.slice[0].slice, cst.Slice):
                    text = self.code(base.slice[0].slice)
                    region = region or ("" if text.strip() in (":", "::") else text)
                elif len(base.slice) == 1 and isinstance(base.slice[0].slice, cst.Index) and isinstance(
                    base.slice[0].slice.value, (cst.Integer, cst.SimpleString)
                ):
                    region = region or f"[{self.code(base.slice[0].slice.value)}]"
                base = base.value
            elif isinstance(base, cst.BinaryOperation) and isinstance(value, Buffer) and value.framework == "raw":
                region = region or self.code(base.right)
                base = base.left
            elif isinstance(base, cst.Attribute) and base.attr.value in _POINTER_ATTRS and not self.code(base).startswith("self."):
                base = base.value
            else:
                break
        label = self.code(base)
        if isinstance(value, Buffer) and value.site:
            return Access(("b", value.site, region), label, write, space)
        if value is UNKNOWN or isinstance(value, _Batch):
            if isinstance(base, cst.Name):
                return Access(("n", base.value, region), label, write, space)
            if isinstance(base, cst.Attribute) and label.startswith("self.") and label.count(".") == 1:
                return Access(("n", label, region), label, write, space)
        return None

    def accesses(self, pairs: Iterable[tuple], write: bool = False, space: str = ANY) -> tuple[Access, ...]:
        out = []
        for expr, value in pairs:
            acc = self.access(expr, value, write, space)
            if acc is not None:
                out.append(acc)
        return tuple(out)

    def result_access(self, value: Value, node: cst.CSTNode, space: str = DEVICE) -> tuple[Access, ...]:
        if isinstance(value, Buffer) and value.site:
            return (Access(("b", value.site, ""), self.code(node)[:40], True, space, fresh=True),)
        return ()

    def host_touch(self, expr: cst.BaseExpression, value: Value, write: bool, framework: str = "") -> None:
        """The host reads or writes a host buffer (SL403 / SL402 against pending async copies)."""
        hb = self.state.hb
        if hb is None or not (isinstance(value, Buffer) and value.mem in (Mem.PINNED, Mem.PAGEABLE)):
            return
        acc = self.access(expr, value, write, HOSTMEM)
        if acc is None:
            return
        if write:
            # Refilling pageable memory is safe: an async copy from it was staged (copied
            # away) before the call returned. Only pinned memory is read later by the DMA.
            found = hb.host_write(acc, expr, framework or value.framework, check=value.mem is Mem.PINNED)
        else:
            found = hb.host_read(acc, expr, framework or value.framework)
        for hazard in found:
            self.hazards.setdefault(hazard.identity, hazard)

    def finish(self) -> None:
        """End of a function body: tensors it made and did not hand out are released."""
        hb = self.state.hb
        if hb is None or self.record.kind == "module":
            return
        held = {v.site for k, v in self.state.vars.items() if k.startswith("self.") and isinstance(v, Buffer)}
        for key in list(hb.allocs):
            if key[0] == "b" and key[1] not in self.escaped and key[1] not in held:
                name = next((k for k, v in self.state.vars.items() if isinstance(v, Buffer) and v.site == key[1]), "")
                for hazard in hb.released(key, self.record.node, name or "the tensor"):
                    self.hazards.setdefault(hazard.identity, hazard)

    def escape(self, value: Value) -> None:
        if isinstance(value, Buffer):
            self.escaped.add(value.site)
        elif isinstance(value, Seq):
            for item in value.items or (value.element,):
                self.escape(item)

    def release(self, value: Value, node: cst.CSTNode, label: str) -> None:
        """A torch tensor's last name goes away: the caching allocator may reuse its memory."""
        hb = self.state.hb
        if hb is None or not (isinstance(value, Buffer) and value.site) or value.site in self.escaped:
            return
        if any(v == value for v in self.state.vars.values()):
            return  # still held by another name
        for hazard in hb.released(("b", value.site, ""), node, label):
            self.hazards.setdefault(hazard.identity, hazard)

    def site(self, node: cst.CSTNode) -> int:
        """Identity of what a call makes. In the hazard walk every evaluation makes a new
        one, so the tensor of one loop iteration is not the next iteration's tensor."""
        if self.state.hb is None:
            return id(node)
        self.incarnations += 1
        return hash((id(node), self.incarnations))

    def param_stream(self, expr: cst.BaseExpression, framework: str) -> Stream:
        """A stream we cannot see the creation of (a parameter, an unknown attribute)."""
        label = self.code(expr)
        # PyTorch hands out only non-blocking pool streams (ExternalStream aside).
        blocking = False if framework == "torch" else None
        return Stream(framework, StreamKind.EXPLICIT, blocking, label, site=hash(("stream", self.record.name, label)))

    # ------------------------------------------------------------------ statements
    def walk(self, body: Iterable[cst.CSTNode]) -> None:
        at_top = self.record.kind == "module" and body is self.an.module.body
        for stmt in body:
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
            self.eval(node.value)
        elif isinstance(node, cst.Assign):
            target = node.targets[-1].target
            label = self.code(target) if isinstance(target, (cst.Name, cst.Attribute)) else ""
            value = self.eval(node.value, label)
            for target in node.targets:
                self.bind(target.target, value)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.bind(node.target, self.eval(node.value, self.code(node.target)))
        elif isinstance(node, cst.AugAssign):
            left = self.eval(node.target)
            right = self.eval(node.value)
            self.bind(node.target, self.arith(left, right, node, inplace=True, exprs=(node.target, node.value)))
        elif isinstance(node, cst.Return):
            if node.value is not None:
                value = self.eval(node.value)
                self.escape(value)
                self.returns = value if self.returns is None else join(self.returns, value)
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

    def bind(self, target: cst.BaseExpression, value: Value) -> None:
        if isinstance(target, cst.Name):
            old = self.state.vars.get(target.value)
            self.state.vars[target.value] = self.labelled(value, target.value)
            if self.state.hb is not None and old is not None and old != value:
                self.release(old, target, target.value)
                if not isinstance(value, Buffer):
                    self.state.hb.forget(("n", target.value, ""))
        elif isinstance(target, cst.Attribute):
            key = self.code(target)
            if key.startswith("self."):
                self.state.vars[key] = self.labelled(value, key)
                self.escape(value)
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
            self.escape(value)
            base = self.eval(target.value)
            if isinstance(base, Buffer) and base.mem is Mem.DEVICE and base.framework in ("torch", "cupy"):
                # `x[i] = v` on a device array: a copy/fill kernel on the current stream.
                fw = base.framework
                self.emit(OpKind.KERNEL, self.code(target)[:40], target, fw, stream=self.state.current[fw],
                          accesses=self.accesses([(target, base)], write=True, space=DEVICE))
            else:
                self.host_touch(target, base, write=True)
            for el in target.slice:
                if isinstance(el.slice, cst.Index):
                    self.eval(el.slice.value)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, UNKNOWN)

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

    def if_(self, node: cst.If) -> None:
        self.truth(node.test)
        base = self.state
        self.state = base.copy()
        if self.branch_depth:
            self.branch_depth[-1] += 1
        self.walk(node.body.body)
        then_state = self.state
        self.state = base.copy()
        if isinstance(node.orelse, cst.If):
            self.if_(node.orelse)
        elif isinstance(node.orelse, cst.Else):
            self.walk(node.orelse.body.body)
        if self.branch_depth:
            self.branch_depth[-1] -= 1
        then_state.merge(self.state)
        self.state = then_state

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
        return UNKNOWN

    def with_(self, node: cst.With) -> None:
        saved_current = dict(self.state.current)
        finals: list[tuple[OpKind, Stream, cst.CSTNode]] = []
        pinned_names: list[tuple[str, Value]] = []
        capturing = 0
        for item in node.items:
            label = self.code(item.asname.name) if item.asname is not None and isinstance(item.asname.name, cst.Name) else ""
            value = self.labelled(self.eval(item.item, label), label) if label else self.eval(item.item)
            if isinstance(value, _Capture):
                capturing += 1
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
        self.capturing += capturing
        self.walk(node.body.body)
        self.capturing -= capturing
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
            saved.merge(self.state)
            self.state = saved
        if node.orelse is not None:
            self.walk(node.orelse.body.body)
        if node.finalbody is not None:
            self.walk(node.finalbody.body.body)

    # ------------------------------------------------------------------ expressions
    def truth(self, expr: cst.BaseExpression) -> Value:
        """Evaluate an expression used as a truth value (`if`, `while`, `and`, `not`)."""
        value = self.eval(expr)
        if isinstance(value, Buffer) and value.mem is Mem.DEVICE and value.framework in ("torch", "cupy"):
            self.emit(
                OpKind.IMPLICIT_SYNC, "truth value", expr, value.framework,
                stream=self.state.current.get(value.framework), receiver=value, host_blocking=True,
            )
        return UNKNOWN

    def eval(self, expr: cst.BaseExpression, label: str = "") -> Value:  # noqa: C901
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return Const({"True": True, "False": False, "None": None}[expr.value])
            return self.lookup(expr.value)
        if isinstance(expr, cst.Attribute):
            return self.attribute(expr)
        if isinstance(expr, cst.Call):
            return self.call(expr, label)
        if isinstance(expr, cst.Subscript):
            return self.subscript(expr)
        if isinstance(expr, cst.BinaryOperation):
            return self.arith(self.eval(expr.left), self.eval(expr.right), expr, exprs=(expr.left, expr.right))
        if isinstance(expr, cst.Comparison):
            left = self.eval(expr.left)
            result = UNKNOWN
            for target in expr.comparisons:
                right = self.eval(target.comparator)
                if not isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
                    result = self.arith(left, right, expr, exprs=(expr.left, target.comparator))
            return result
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return self.truth(expr.expression)
            return self.arith(self.eval(expr.expression), UNKNOWN, expr, exprs=(expr.expression, None))
        if isinstance(expr, cst.BooleanOperation):
            self.truth(expr.left)
            self.truth(expr.right)
            return UNKNOWN
        if isinstance(expr, cst.IfExp):
            self.truth(expr.test)
            return self.device_join(self.eval(expr.body), self.eval(expr.orelse))
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            items = tuple(self.eval(e.value) for e in expr.elements)
            element = items[0] if items else UNKNOWN
            for item in items[1:]:
                element = join(element, item)
            return Seq(items=items, element=element)
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return Seq(element=self.comprehension(expr.for_in, expr.elt))
        if isinstance(expr, cst.DictComp):
            self.comprehension(expr.for_in, expr.value)
            return UNKNOWN
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
            for part in expr.parts:
                if isinstance(part, cst.FormattedStringExpression):
                    self.builtin_sync("f-string", part.expression, self.eval(part.expression), part.expression)
            return UNKNOWN
        if isinstance(expr, cst.NamedExpr):
            value = self.eval(expr.value)
            self.bind(expr.target, value)
            return value
        if isinstance(expr, (cst.Await, cst.Yield)):
            inner = getattr(expr, "expression", None) or getattr(expr, "value", None)
            if isinstance(inner, cst.BaseExpression):
                return self.eval(inner)
            return UNKNOWN
        if isinstance(expr, cst.Lambda):
            return UNKNOWN
        if isinstance(expr, cst.Dict):
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    self.eval(element.key)
                self.eval(element.value)
            return UNKNOWN
        if isinstance(expr, cst.StarredElement):
            return self.eval(expr.value)
        return UNKNOWN

    def comprehension(self, for_in: cst.CompFor, elt: cst.BaseExpression) -> Value:
        saved = self.state
        self.state = saved.copy()
        self.comprehension_depth += 1
        node: Optional[cst.CompFor] = for_in
        while node is not None:
            self.bind(node.target, self.element_of(self.eval(node.iter)))
            for cond in node.ifs:
                self.truth(cond.test)
            node = node.inner_for_in
        value = self.eval(elt)
        self.comprehension_depth -= 1
        self.state = saved
        return value

    @staticmethod
    def device_join(a: Value, b: Value) -> Value:
        """`"cuda" if torch.cuda.is_available() else "cpu"`: the code's GPU path is CUDA."""
        for x, y in ((a, b), (b, a)):
            if _is_cuda_target(x) and _is_cpu_target(y):
                return x
        return join(a, b)

    def attribute(self, expr: cst.Attribute) -> Value:
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            key = f"self.{expr.attr.value}"
            if key in self.state.vars:
                return self.state.vars[key]
            return self.an.class_attr(self.record.class_name, expr.attr.value)
        base = self.eval(expr.value)
        attr = expr.attr.value
        if isinstance(base, QualRef):
            qualname = api.normalize(f"{base.qualname}.{attr}")
            return self.named_value(qualname) or QualRef(qualname)
        if isinstance(base, Buffer) and attr in _POINTER_ATTRS:
            return base
        if isinstance(base, Instance):
            return self.an.class_attr(base.cls, attr)
        if isinstance(base, _Batch):
            return base
        return UNKNOWN

    def named_value(self, qualname: str) -> Optional[Value]:
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
        if isinstance(base, Seq):
            first = indices[0][0] if len(indices) == 1 else None
            index = first.value if isinstance(first, Const) and isinstance(first.value, int) else None
            item = base.item(index)
            if index is None and isinstance(item, Stream):
                item = replace(item, one_of=True)
            return item
        if isinstance(base, Buffer):
            if self.state.hb is not None and base.mem in (Mem.PINNED, Mem.PAGEABLE) and not self.view_depth:
                self.host_touch(expr, base, write=False)
            if base.framework == "numpy" and not any(isinstance(el.slice, cst.Slice) for el in expr.slice):
                # `a[i]` is a row view or a NumPy scalar (passed to kernels by value):
                # the creating call's shape tells which, when we saw it.
                left = None if base.ndim is None else base.ndim - len(expr.slice)
                return replace(base, maybe_scalar=left is None or left <= 0, ndim=left)
            return base  # a view of the same memory
        if isinstance(base, _Batch):
            return base.batch
        if isinstance(base, Stream):
            return UNKNOWN
        if isinstance(base, QualRef) and api.framework_of(base.qualname) is None:
            foreign = self.an.foreign(base.qualname)
            if isinstance(foreign, Kernel) and 2 <= len(indices) <= 4:
                stream = indices[2][0] if len(indices) >= 3 else None
                stream_expr = indices[2][1] if len(indices) >= 3 else None
                return Launch(foreign, self.launch_stream(stream, stream_expr))
        return UNKNOWN

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
        for arg in call.args:
            if arg.star:
                self.eval(arg.value)
        return Args(positional, keywords, values)

    def eval_arg(self, expr: cst.BaseExpression) -> Value:
        """An argument: a subscript here only names a view (the callee decides whether
        the host reads it: NumPy and print do, a GPU copy does not)."""
        if isinstance(expr, cst.Subscript):
            self.view_depth += 1
            try:
                return self.eval(expr)
            finally:
                self.view_depth -= 1
        return self.eval(expr)

    def call(self, node: cst.Call, label: str = "") -> Value:
        func = node.func
        if isinstance(func, cst.Attribute):
            receiver = self.eval_arg(func.value)  # the method decides what it reads
            method = func.attr.value
            if isinstance(receiver, QualRef):
                qualname = api.normalize(f"{receiver.qualname}.{method}")
                return self.call_qualified(qualname, node, label)
            return self.call_method(receiver, method, node, label)
        callee = self.eval(func)
        if isinstance(callee, QualRef):
            return self.call_qualified(callee.qualname, node, label)
        if isinstance(callee, Launch):
            return self.numba_launch(callee, node)
        if isinstance(callee, Kernel) and callee.framework == "cupy":
            return self.cupy_kernel_call(callee, node)
        if isinstance(callee, Kernel) and callee.framework == "numba" and len(node.args) == 1:
            # cuda.jit("void(float32[:])")(fn): the decorator applied to a function
            target = self.eval(node.args[0].value)
            if isinstance(target, LocalFunction):
                return Kernel("numba", target.name, node=target.node, site=target.site)
            return UNKNOWN
        if isinstance(callee, LocalFunction):
            args = self.eval_args(node)
            return self.an.call_local(callee, node, args, self)
        if isinstance(callee, TorchModule) or (isinstance(callee, Instance) and self.an.is_torch_module_class(callee.cls)):
            return self.module_call(node)
        if isinstance(func, cst.Name) and not self.is_bound(func.value):
            return self.builtin(func.value, node)
        args = self.eval_args(node)
        self.unseen_call_on_side_stream(node, args)
        return UNKNOWN

    def gpu_relevant(self, args: "Args") -> bool:
        """Is a call into another module worth reading that module for? Only if it is
        given GPU values, or made where streams are in play (reading costs a parse)."""
        if self.an.results_matter or self.record.enters_stream or self.record.passes_stream:
            return True
        if any(s.explicit for s in self.state.current.values()):
            return True
        for value in args.all():
            items = value.items or (value.element,) if isinstance(value, Seq) else (value,)
            if any(isinstance(v, (Buffer, Stream, Event)) for v in items):
                return True
        return False

    def unseen_call_on_side_stream(self, node: cst.Call, args: "Args") -> None:
        """A call we cannot see into, made with arguments under `torch.cuda.stream(s)` /
        `with s:`: the code plainly queues GPU work there. It reads its arguments (on
        which device the caller's values tell) and makes the loop around it a hot path."""
        if not any(not isinstance(v, Const) for v in args.all()):
            return  # logging and the like: nothing GPU-side is passed
        for fw in CURRENT_FRAMEWORKS:
            if self.on_side_stream(fw) and args.positional and (fw != "torch" or self.an.torch_imported):
                self.emit(OpKind.KERNEL, self.code(node.func), node, fw, stream=self.state.current[fw],
                          accesses=self.accesses(self.flat_pairs(args), space=UNSURE))
                return

    def builtin(self, name: str, node: cst.Call) -> Value:
        args = self.eval_args(node)
        first = args.value(Arg(0)) if args.positional else UNKNOWN
        if name in _BUILTIN_SYNCS:
            for expr in args.positional:
                self.builtin_sync(f"{name}()", node, args.values[id(expr)], expr)
            return UNKNOWN
        if name in ("list", "tuple", "iter", "reversed", "sorted"):
            return first if isinstance(first, (Seq, Loader, _Batch)) else UNKNOWN
        if name == "next":
            return self.element_of(first)
        if name == "enumerate":
            return Seq(element=Seq(items=(UNKNOWN, self.element_of(first))))
        if name == "zip":
            return Seq(element=Seq(items=tuple(self.element_of(args.values[id(e)]) for e in args.positional)))
        return UNKNOWN

    def builtin_sync(self, what: str, node: cst.CSTNode, value: Value, expr: Optional[cst.BaseExpression] = None) -> None:
        if self.state.hb is not None and expr is not None:
            self.host_touch(expr, value, write=False)
        if isinstance(value, Buffer) and value.mem is Mem.DEVICE and value.framework in ("torch", "cupy"):
            self.emit(OpKind.IMPLICIT_SYNC, what, node, value.framework,
                      stream=self.state.current.get(value.framework), receiver=value, host_blocking=True)

    def call_qualified(self, qualname: str, node: cst.Call, label: str) -> Value:
        if qualname in _TIMERS:
            for loop in self.loop_stack:
                self.record.loops[loop].timed = True
        if qualname == "numba.cuda.pinned":
            self.eval_args(node)
            return _Pinned(tuple(a.value.value for a in node.args if isinstance(a.value, cst.Name)))
        fact = api.lookup(qualname)
        if fact is not None:
            return self.apply(fact, self.code(node.func), node, self.eval_args(node), label=label)
        if qualname.startswith(LOCAL):
            self.eval_args(node)
            return self.an.instantiate(qualname[len(LOCAL):])
        if api.framework_of(qualname) is None and not qualname.startswith("numpy.") and self.an.follow_imports:
            args = self.eval_args(node)
            if self.gpu_relevant(args):
                foreign = self.an.foreign(qualname)
                if isinstance(foreign, LocalFunction):
                    return self.an.call_local(foreign, node, args, self)
            return UNKNOWN
        root = qualname.split(".", 1)[0]
        last = qualname.rsplit(".", 1)[-1]
        if root in ("cupy", "cupyx", "numba", "cuda") and last[:1].isupper() and not qualname.startswith("cupy.random."):
            self.eval_args(node)
            return QualRef(qualname + "()")  # an instance of a framework class (`cp.cuda.Device(0)`)
        if root in ("cupy", "cupyx"):
            return self.cupy_function(qualname, node)
        if root == "torch":
            return self.torch_function(qualname, node)
        if root == "numpy":
            return self.numpy_function(qualname, node)
        self.eval_args(node)
        if api.framework_of(qualname) and qualname.rsplit(".", 1)[-1][:1].isupper():
            return QualRef(qualname + "()")  # an instance of a framework class
        return UNKNOWN

    # --- framework fallbacks for calls no table entry names
    def cupy_function(self, qualname: str, node: cst.Call) -> Value:
        args = self.eval_args(node)
        name = qualname.rsplit(".", 1)[-1]
        stream = self.state.current["cupy"]
        if name in cupy_api.NON_KERNEL_FUNCTIONS:
            return UNKNOWN  # host-side helpers and predicates: no device work
        if name in cupy_api.FILLING_CREATORS or qualname.startswith("cupy.random."):
            result = Buffer("cupy", Mem.DEVICE, site=self.site(node))
            self.emit(OpKind.KERNEL, self.code(node.func), node, "cupy", stream=stream, writes=(result,),
                      accesses=self.result_access(result, node))
            return result
        arrays = tuple(v for v in args.all() if isinstance(v, Buffer) and v.framework == "cupy" and v.mem is Mem.DEVICE)
        if not arrays and not self.cupy_kernel_function(qualname, args):
            return UNKNOWN
        out = args.value(Arg(kw="out"))
        result = out if isinstance(out, Buffer) else Buffer("cupy", Mem.DEVICE, site=self.site(node))
        out_expr = args.keywords.get("out")
        reads = self.accesses((e, v) for e, v in args.pairs() if e is not out_expr)
        writes = self.accesses([(out_expr, out)], write=True) if out_expr is not None else self.result_access(result, node)
        self.emit(OpKind.KERNEL, self.code(node.func), node, "cupy", stream=stream, reads=arrays, writes=(result,),
                  accesses=reads + writes)
        return result

    @staticmethod
    def cupy_kernel_function(qualname: str, args: "Args") -> bool:
        """`cp.sqrt(x)` launches a kernel whatever `x` is (CuPy refuses host arrays);
        namespaces and helpers that compute nothing on the device are excluded."""
        module, _, name = qualname.rpartition(".")
        if module not in cupy_api.KERNEL_NAMESPACES or name in cupy_api.NON_KERNEL_FUNCTIONS:
            return False
        return bool(args.positional) and not all(isinstance(v, Const) for v in args.all())

    def torch_function(self, qualname: str, node: cst.Call) -> Value:
        args = self.eval_args(node)
        parts = qualname.split(".")
        name = parts[-1]
        if qualname.startswith("torch.nn.") and name[:1].isupper():
            return TorchModule(site=self.site(node))
        if len(parts) == 2 and name in torch_api.CREATORS:
            return self.torch_creation(name, node, args)
        if len(parts) == 2 and name in torch_api.LIKE_CREATORS:
            base = args.value(Arg(0))
            device = args.value(Arg(kw="device"))
            if _is_cuda_target(device) or (isinstance(base, Buffer) and base.mem is Mem.DEVICE and device is UNKNOWN and "device" not in args.keywords):
                return self.torch_creation(name, node, args, force_cuda=True)
            if isinstance(base, Buffer) and "device" not in args.keywords:
                return Buffer("torch", Mem.PAGEABLE if base.mem is not Mem.DEVICE else Mem.DEVICE, site=self.site(node))
            return UNKNOWN
        if name in torch_api.NON_TENSOR_FUNCTIONS or not (qualname.startswith("torch.nn.functional.") or len(parts) == 2):
            return UNKNOWN
        tensors = [v for v in args.all() if isinstance(v, Buffer) and v.framework == "torch"]
        for value in args.all():
            if isinstance(value, Seq):
                tensors.extend(v for v in (value.items or (value.element,)) if isinstance(v, Buffer) and v.framework == "torch")
        unsure = not tensors and bool(args.positional) and not all(isinstance(v, Const) for v in args.all())
        if unsure and not self.on_side_stream("torch") and self.state.hb is None:
            unsure = False  # outside a side stream only the hazard walk needs these
        if any(t.mem is Mem.DEVICE for t in tensors) or unsure:
            out = args.value(Arg(kw="out"))
            result = out if isinstance(out, Buffer) else Buffer("torch", Mem.DEVICE, site=self.site(node))
            out_expr = args.keywords.get("out")
            # On tensors we cannot see, the device is the caller's business (UNSURE maps
            # to the caller's arguments), except under a side stream, where GPU work is meant.
            space = UNSURE if unsure and not self.on_side_stream("torch") else ANY
            reads = self.accesses(self.flat_pairs(args, skip=out_expr), space=space)
            writes = self.accesses([(out_expr, out)], write=True, space=space) if out_expr is not None else self.result_access(result, node)
            self.emit(OpKind.KERNEL, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                      reads=tuple(tensors), writes=(result,), accesses=reads + writes, result=result)
            return result
        if tensors and all(t.mem in (Mem.PAGEABLE, Mem.PINNED) for t in tensors):
            return Buffer("torch", Mem.PAGEABLE, site=self.site(node))
        return UNKNOWN

    def shape_rank(self, shape: Optional[cst.BaseExpression]) -> Optional[int]:
        """Dimensions of an array made with this shape argument, when the text shows it."""
        if isinstance(shape, (cst.Tuple, cst.List)):
            return len(shape.elements)
        if isinstance(shape, (cst.Integer, cst.Name, cst.BinaryOperation)):
            return 1
        return None

    def on_side_stream(self, framework: str) -> bool:
        current = self.state.current.get(framework)
        return current is not None and current.explicit

    @staticmethod
    def flat_pairs(args: "Args", skip: Optional[cst.BaseExpression] = None) -> list[tuple]:
        """Argument (expression, value) pairs, list/tuple displays opened up."""
        out = []
        for expr, value in args.pairs():
            if expr is skip:
                continue
            if isinstance(expr, (cst.List, cst.Tuple)) and isinstance(value, Seq) and value.items is not None:
                out.extend(zip((e.value for e in expr.elements), value.items))
            else:
                out.append((expr, value))
        return out

    def torch_creation(self, name: str, node: cst.Call, args: "Args", force_cuda: bool = False) -> Value:
        device = args.value(Arg(kw="device"))
        pinned = args.value(Arg(kw="pin_memory"))
        if force_cuda or _is_cuda_target(device):
            result = Buffer("torch", Mem.DEVICE, site=self.site(node))
            kind = OpKind.ALLOC if name in torch_api.ALLOCATING_ONLY else OpKind.KERNEL
            self.emit(kind, self.code(node.func), node, "torch", stream=self.state.current["torch"], writes=(result,),
                      result=result, accesses=self.result_access(result, node) if kind is OpKind.KERNEL else ())
            return result
        if "device" in args.keywords and not _is_cpu_target(device):
            return UNKNOWN
        if isinstance(pinned, Const) and pinned.value is True:
            return Buffer("torch", Mem.PINNED, site=self.site(node))
        if "pin_memory" in args.keywords and not isinstance(pinned, Const):
            return UNKNOWN
        if name in ("tensor", "as_tensor"):
            source = args.value(Arg(0))
            if isinstance(source, Buffer) and source.mem is Mem.DEVICE:
                return UNKNOWN
        return Buffer("torch", Mem.PAGEABLE, site=self.site(node))

    def numpy_function(self, qualname: str, node: cst.Call) -> Value:
        args = self.eval_args(node)
        if self.state.hb is not None:
            out_expr = args.keywords.get("out")
            for expr, value in args.pairs():
                write = expr is out_expr or (qualname == "numpy.copyto" and args.positional and expr is args.positional[0])
                self.host_touch(expr, value, write=write)
        name = qualname[len("numpy."):]
        if name in numpy_api.SAME_MEMORY:
            source = args.value(Arg(0))
            if isinstance(source, Buffer) and source.mem in (Mem.PINNED, Mem.PAGEABLE, Mem.MAPPED):
                return Buffer("numpy", source.mem, site=source.site, pinned_by=source.pinned_by)
            if isinstance(source, Buffer):
                if source.framework == "numba" and source.mem is Mem.DEVICE and name in ("asarray", "asanyarray"):
                    return Buffer("numpy", Mem.PAGEABLE, site=self.site(node))
                return UNKNOWN
            return Buffer("numpy", Mem.PAGEABLE, site=self.site(node)) if name in ("asarray", "asanyarray") and isinstance(source, (Seq, Const)) else UNKNOWN
        scalar_below = numpy_api.SCALAR_WITHOUT_SIZE.get(name)
        if scalar_below is not None and "size" not in args.keywords and len(args.positional) <= scalar_below:
            return UNKNOWN  # np.random.randint(500): a Python/NumPy scalar
        if name in numpy_api.PAGEABLE_CREATORS:
            ndim = 1 if name in ("arange", "linspace", "logspace") else self.shape_rank(args.positional[0] if args.positional else None)
            return Buffer("numpy", Mem.PAGEABLE, site=self.site(node), ndim=ndim)
        return UNKNOWN

    # --- method calls on known values
    def call_method(self, receiver: Value, method: str, node: cst.Call, label: str) -> Value:
        label_api = self.code(node.func)
        if method in _CAPTURE_BEGIN or method in _CAPTURE_END:
            self.eval_args(node)
            self.capturing = max(0, self.capturing + (1 if method in _CAPTURE_BEGIN else -1))
            return UNKNOWN
        if method in _CONTAINER_STORES and not isinstance(receiver, (Stream, Event, Buffer)):
            args = self.eval_args(node)
            self.keep(args.all())
            for value in args.all():
                self.escape(value)
            return UNKNOWN
        if isinstance(receiver, Stream):
            if receiver.framework == "numba" and method == "auto_synchronize":
                self.eval_args(node)
                return _AutoSync(receiver)
            fact = api.STREAM_METHODS.get(receiver.framework, {}).get(method)
            if fact is not None:
                return self.apply(fact, label_api, node, self.eval_args(node), receiver=receiver, label=label)
        elif isinstance(receiver, Event):
            fact = api.EVENT_METHODS.get(receiver.framework, {}).get(method)
            if fact is not None:
                return self.apply(fact, label_api, node, self.eval_args(node), receiver=receiver, label=label)
        elif isinstance(receiver, Buffer):
            return self.buffer_method(receiver, method, node, label)
        elif isinstance(receiver, TorchModule):
            self.eval_args(node)
            return receiver if method in ("to", "cuda", "cpu", "eval", "train", "half", "float") else UNKNOWN
        elif isinstance(receiver, Instance):
            function = self.an.method_of(receiver.cls, method)
            if function is not None:
                return self.an.call_local(function, node, self.eval_args(node), self)
            if self.an.is_torch_module_class(receiver.cls) and method in ("to", "cuda", "eval", "train"):
                self.eval_args(node)
                return receiver
            # Not a method: an attribute holding something callable (`self.conv1(x)`).
            held = self.attribute(node.func) if isinstance(node.func, cst.Attribute) else UNKNOWN
            if isinstance(held, TorchModule) or (isinstance(held, Instance) and self.an.is_torch_module_class(held.cls)):
                return self.module_call(node)
            if isinstance(held, Launch):
                return self.numba_launch(held, node)
            args = self.eval_args(node)
            self.unseen_call_on_side_stream(node, args)
            return UNKNOWN
        elif isinstance(receiver, Kernel) and receiver.framework == "numba" and method == "forall":
            self.eval_args(node)
            return UNKNOWN
        elif isinstance(receiver, _Batch):
            return self.buffer_method(receiver.batch, method, node, label)
        elif isinstance(receiver, Loader) and method == "__iter__":
            return _Batch(Buffer("torch", Mem.PINNED if receiver.pin_memory else Mem.PAGEABLE, site=receiver.site, loader_site=receiver.site))
        elif receiver is UNKNOWN:
            return self.unknown_receiver_method(method, node)
        self.eval_args(node)
        return UNKNOWN

    def unknown_receiver_method(self, method: str, node: cst.Call) -> Value:
        """Methods whose name alone tells the result kind, whatever the receiver."""
        args = self.eval_args(node)
        if method == "pin_memory" and not args.positional and not args.keywords and self.an.torch_imported:
            result = Buffer("torch", Mem.PINNED, site=self.site(node), pinned_by=id(node))
            self.emit(OpKind.PIN, self.code(node.func), node, "torch", result=result)
            return result
        if method in _UNKNOWN_STREAM_METHODS and self.an.gpu_imported:
            return self.unknown_stream_method(method, node, args)
        if method == "copy_" and self.an.torch_imported and args.positional:
            # dst.copy_(src) with neither side known: a copy on the current stream whose
            # direction the caller's arguments will tell (helpers are summarized this way).
            nb = _const_bool(args.value(Arg(1, "non_blocking")))
            accesses = self.accesses([args.pair(Arg(0, "src"))], space=UNSURE) + self.accesses(
                [(node.func.value, UNKNOWN)], write=True, space=UNSURE)
            self.emit(OpKind.COPY, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                      non_blocking=nb, host_blocking=None if nb is None else not nb, accesses=accesses)
            return UNKNOWN
        if method in ("cuda", "to") and self.an.torch_imported:
            target = args.value(Arg(0, "device")) if method == "to" else Const("cuda")
            if _is_cuda_target(target):
                non_blocking = _const_bool(args.value(Arg(kw="non_blocking") if method == "to" else Arg(1, "non_blocking")))
                result = Buffer("torch", Mem.DEVICE, site=self.site(node))
                # The source is either host memory (then this is an H2D copy) or already
                # on the device (then nothing is copied): never a device read to order.
                accesses = self.accesses([(node.func.value, UNKNOWN)], space=HOSTMEM) + self.result_access(result, node)
                self.emit(OpKind.COPY, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                          non_blocking=non_blocking, host_blocking=None, accesses=accesses)
                return result
        self.unseen_call_on_side_stream(node, args)
        return UNKNOWN

    def unknown_stream_method(self, method: str, node: cst.Call, args: "Args") -> Value:
        """`self.side.wait_stream(...)`, `ev.synchronize()` on values we cannot see: keep
        the ordering they give (a linter that is unsure stays silent). The receiver is
        taken as the stream its text names, as in `torch.cuda.stream(self.side)`."""
        fw = "torch" if self.an.torch_imported else "cupy"
        recv_expr = node.func.value  # type: ignore[attr-defined]
        if method in ("synchronize", "sync"):
            self.emit(OpKind.EVENT_SYNC, self.code(node.func), node, fw, host_blocking=True)
            return UNKNOWN
        stream = self.param_stream(recv_expr, fw)
        if method == "wait_stream":
            target_expr, target = args.pair(Arg(0, "stream"))
            other = self.stream_from(target, target_expr, fw) if target_expr is not None else None
            self.emit(OpKind.WAIT_STREAM, self.code(node.func), node, fw, stream=stream, target=other)
        elif method == "wait_event":
            event = args.value(Arg(0, "event"))
            self.emit(OpKind.STREAM_WAIT_EVENT, self.code(node.func), node, fw, stream=stream,
                      event=event if isinstance(event, Event) else None)
        return UNKNOWN

    def buffer_method(self, receiver: Buffer, method: str, node: cst.Call, label: str) -> Value:
        fw = receiver.framework
        label_api = self.code(node.func)
        if fw == "torch":
            if receiver.loader_site and method in ("items", "values"):
                self.eval_args(node)
                return Seq(element=Seq(items=(UNKNOWN, receiver)) if method == "items" else receiver)
            if method in torch_api.TENSOR_COPIES:
                return self.torch_copy(receiver, method, node)
            fact = torch_api.TENSOR_METHODS.get(method)
            if fact is not None:
                if fact.kind is OpKind.IMPLICIT_SYNC and receiver.mem is not Mem.DEVICE:
                    self.eval_args(node)
                    self.host_touch(node.func.value, receiver, write=False)  # .numpy()/.item() read it
                    return receiver if method == "numpy" else UNKNOWN
                if fact.kind is OpKind.PIN and receiver.mem is Mem.PINNED:
                    self.eval_args(node)
                    return receiver
                return self.apply(fact, label_api, node, self.eval_args(node), receiver=receiver, label=label)
            args = self.eval_args(node)
            inplace = method.endswith("_") and method not in torch_api.NON_KERNEL_INPLACE
            if method in torch_api.TENSOR_PRESERVING or inplace:
                if method in torch_api.VIEW_METHODS:
                    return receiver
                if receiver.mem is Mem.DEVICE:
                    return self.device_method(receiver, node, label_api, args, "torch", inplace=inplace)
                self.host_touch(node.func.value, receiver, write=method.endswith("_"))
                return Buffer("torch", Mem.PAGEABLE, site=self.site(node))
            if receiver.mem is not Mem.DEVICE:
                self.host_touch(node.func.value, receiver, write=False)
            return UNKNOWN
        if fw == "cupy":
            fact = cupy_api.ARRAY_METHODS.get(method)
            if fact is not None:
                return self.apply(fact, label_api, node, self.eval_args(node), receiver=receiver, label=label)
            args = self.eval_args(node)
            if method in cupy_api.VIEW_METHODS:
                return receiver
            if method in cupy_api.KERNEL_METHODS:
                return self.device_method(receiver, node, label_api, args, "cupy", inplace=method == "fill")
            return UNKNOWN
        if fw == "numba":
            fact = api.ARRAY_METHODS["numba"].get(method)
            if fact is not None:
                return self.apply(fact, label_api, node, self.eval_args(node), receiver=receiver, label=label)
            self.eval_args(node)
            if method in ("bind",):
                return receiver
            return receiver if method in ("reshape", "ravel", "view", "split") else UNKNOWN
        if fw == "numpy":
            self.eval_args(node)
            if method in ("reshape", "view", "ravel", "transpose", "squeeze", "__array__"):
                return receiver
            self.host_touch(node.func.value, receiver, write=method in ("fill", "put", "sort", "itemset", "resize"))
            if method in ("copy", "astype", "flatten"):
                return Buffer("numpy", Mem.PAGEABLE, site=self.site(node))
            return UNKNOWN
        self.eval_args(node)
        return UNKNOWN

    def device_method(self, receiver: Buffer, node: cst.Call, label_api: str, args: "Args", fw: str, inplace: bool) -> Value:
        """A method of a device array that launches a kernel on the current stream."""
        result = receiver if inplace else Buffer(fw, Mem.DEVICE, site=self.site(node))
        recv_expr = node.func.value  # type: ignore[attr-defined]
        accesses = self.accesses([(recv_expr, receiver)] + self.flat_pairs(args))
        accesses += self.accesses([(recv_expr, receiver)], write=True) if inplace else self.result_access(result, node)
        self.emit(OpKind.KERNEL, label_api, node, fw, stream=self.state.current[fw], receiver=receiver,
                  reads=(receiver,) + tuple(v for v in args.all() if isinstance(v, Buffer)), writes=(result,),
                  accesses=accesses, result=result)
        return result

    def torch_copy(self, receiver: Buffer, method: str, node: cst.Call) -> Value:
        args = self.eval_args(node)
        fact = torch_api.TENSOR_COPIES[method]
        label_api = self.code(node.func)
        stream = self.state.current["torch"]
        non_blocking = _const_bool(args.value(fact.flag)) if fact.flag else False
        if fact.flag and not args.has(fact.flag):
            non_blocking = False
        recv_expr = node.func.value  # type: ignore[attr-defined]
        if method == "copy_":
            src_expr, source = args.pair(Arg(0, "src"))
            dst_dev, src_dev = receiver.mem is Mem.DEVICE, isinstance(source, Buffer) and source.mem is Mem.DEVICE
            src_host = isinstance(source, Buffer) and source.mem is not Mem.DEVICE
            if dst_dev and src_host:
                kind, host = OpKind.COPY_H2D, source
            elif not dst_dev and (src_dev or (source is UNKNOWN and receiver.mem is Mem.PINNED and non_blocking)):
                # A non_blocking copy into a pinned host tensor only makes sense from the GPU.
                kind, host = OpKind.COPY_D2H, receiver
            elif dst_dev and src_dev:
                kind, host = OpKind.COPY_D2D, UNKNOWN
            elif dst_dev:
                # From something we cannot see (host or device): the destination is written.
                accesses = self.accesses([(src_expr, source)], space=UNSURE) + self.accesses(
                    [(recv_expr, receiver)], write=True, space=DEVICE)
                self.emit(OpKind.COPY, label_api, node, "torch", stream=stream, non_blocking=non_blocking,
                          host_blocking=None, receiver=receiver, accesses=accesses)
                return receiver
            else:
                self.host_touch(recv_expr, receiver, write=True)
                return receiver
            src_space = HOSTMEM if kind is OpKind.COPY_H2D else DEVICE
            dst_space = HOSTMEM if kind is OpKind.COPY_D2H else DEVICE
            accesses = self.accesses([(src_expr, source)], space=src_space) + self.accesses([(recv_expr, receiver)], write=True, space=dst_space)
            self.emit(kind, label_api, node, "torch", stream=stream, non_blocking=non_blocking,
                      host_blocking=_blocks(fact, non_blocking), host_buffer=host, receiver=receiver,
                      pinned_out=kind is OpKind.COPY_D2H and receiver.mem is Mem.PINNED, is_async_api=True,
                      reads=(source,), writes=(receiver,), accesses=accesses)
            return receiver
        if method == "cpu":
            target: Value = Const("cpu")
        elif method == "cuda":
            target = Const("cuda")
        else:
            target = args.value(Arg(0, "device"))
            if target is UNKNOWN and "device" not in args.keywords and not args.positional:
                return receiver
            if isinstance(target, QualRef):
                return receiver  # a dtype: same device
            if isinstance(target, Buffer) and target.framework == "torch":
                target = Const("cuda") if target.mem is Mem.DEVICE else Const("cpu")
        if _is_cuda_target(target):
            if receiver.mem is Mem.DEVICE:
                return receiver
            result = Buffer("torch", Mem.DEVICE, site=self.site(node))
            accesses = self.accesses([(recv_expr, receiver)], space=HOSTMEM) + self.result_access(result, node)
            self.emit(OpKind.COPY_H2D, label_api, node, "torch", stream=stream, non_blocking=non_blocking,
                      host_blocking=_blocks(fact, non_blocking), host_buffer=receiver,
                      receiver=receiver, is_async_api=True, result=result, reads=(receiver,), writes=(result,),
                      accesses=accesses)
            return result
        if _is_cpu_target(target):
            if receiver.mem is not Mem.DEVICE:
                return receiver
            mem = Mem.PINNED if non_blocking else Mem.PAGEABLE
            result = Buffer("torch", mem, site=self.site(node))
            accesses = self.accesses([(recv_expr, receiver)], space=DEVICE) + self.result_access(result, node, HOSTMEM)
            self.emit(OpKind.COPY_D2H, label_api, node, "torch", stream=stream, non_blocking=non_blocking,
                      host_blocking=_blocks(fact, non_blocking), host_buffer=result,
                      receiver=receiver, pinned_out=bool(non_blocking), is_async_api=True, result=result,
                      reads=(receiver,), writes=(result,), accesses=accesses)
            return result
        return UNKNOWN

    def module_call(self, node: cst.Call) -> Value:
        """An nn.Module called on CUDA tensors (or on anything inside a side-stream
        context, where the code plainly means GPU work) launches kernels there."""
        args = self.eval_args(node)
        tensors = tuple(v for v in args.all() if isinstance(v, Buffer) and v.framework == "torch")
        if any(t.mem is Mem.DEVICE for t in tensors) or (self.on_side_stream("torch") and args.positional and not tensors):
            result = Buffer("torch", Mem.DEVICE, site=self.site(node))
            accesses = self.accesses(self.flat_pairs(args)) + self.result_access(result, node)
            self.emit(OpKind.KERNEL, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                      reads=tensors, writes=(result,), accesses=accesses, result=result)
            return result
        return UNKNOWN

    def numba_launch(self, launch: Launch, node: cst.Call) -> Value:
        args = self.eval_args(node)
        stream = launch.stream if isinstance(launch.stream, Stream) else legacy_stream("numba")
        values = tuple(args.values[id(e)] for e in args.positional)
        written = self.an.kernel_writes(launch.kernel)
        accesses: list[Access] = []
        for i, (expr, value) in enumerate(zip(args.positional, values)):
            accesses.extend(self.accesses([(expr, value)], space=DEVICE))
            if written is None or i in written:
                accesses.extend(replace(a, assumed=written is None) for a in self.accesses([(expr, value)], write=True, space=DEVICE))
        self.emit(OpKind.KERNEL, launch.kernel.label, node, "numba", stream=stream, receiver=launch.kernel,
                  reads=values, writes=values, accesses=tuple(accesses))
        return UNKNOWN

    def cupy_kernel_call(self, kernel: Kernel, node: cst.Call) -> Value:
        args = self.eval_args(node)
        stream_value = args.value(Arg(kw="stream"))
        stream = self.stream_from(stream_value, args.keywords.get("stream"), "cupy") if "stream" in args.keywords else self.state.current["cupy"]
        pairs = [p for p in self.flat_pairs(args) if p[0] is not args.keywords.get("stream")]
        buffers = tuple(v for _, v in pairs if isinstance(v, Buffer))
        # A raw kernel's body is C++ we do not read: every array argument may be written.
        accesses = self.accesses(pairs, space=DEVICE) + tuple(
            replace(a, assumed=True) for a in self.accesses(pairs, write=True, space=DEVICE)
        )
        self.emit(OpKind.KERNEL, self.code(node.func), node, "cupy", stream=stream, receiver=kernel, reads=buffers,
                  writes=buffers, accesses=accesses)
        return UNKNOWN

    def stream_from(self, value: Value, expr: Optional[cst.BaseExpression], framework: str) -> Stream:
        """The stream an argument denotes; absent, 0 and None mean the legacy default stream."""
        if isinstance(value, Stream):
            return value
        if expr is None or (isinstance(value, Const) and value.value in (0, None)):
            return legacy_stream(framework)
        if isinstance(value, Seq) and isinstance(value.element, Stream):
            return value.element
        return self.param_stream(expr, framework)

    # --- applying a table fact
    def apply(self, fact: Fact, label_api: str, node: cst.Call, args: "Args",
              receiver: Value = UNKNOWN, label: str = "") -> Value:  # noqa: C901
        fw = fact.framework
        cur_fw = fw if fw in CURRENT_FRAMEWORKS else None
        stream: Optional[Stream] = None
        stream_given = fact.stream_arg is not None and args.has(fact.stream_arg)
        stream_value = args.value(fact.stream_arg) if fact.stream_arg else UNKNOWN
        if fact.stream == STREAM_CURRENT and cur_fw:
            stream = self.state.current[cur_fw]
        elif fact.stream == STREAM_LEGACY:
            stream = legacy_stream(fw)
        elif fact.stream == STREAM_SELF and isinstance(receiver, Stream):
            stream = receiver
        elif fact.stream == STREAM_ARG:
            stream = self.stream_from(stream_value, args.expr(fact.stream_arg) if stream_given else None, fw)
        elif fact.stream == STREAM_ARG_OR_CURRENT:
            if stream_given and not (isinstance(stream_value, Const) and stream_value.value is None):
                stream = self.stream_from(stream_value, args.expr(fact.stream_arg), fw)
            elif cur_fw:
                stream = self.state.current[cur_fw]
        elif fact.stream == STREAM_ARG_OR_BOUND:
            if stream_given and not (isinstance(stream_value, Const) and stream_value.value in (0, None)):
                stream = self.stream_from(stream_value, args.expr(fact.stream_arg), fw)
            elif isinstance(receiver, Buffer) and receiver.bound_stream is not None:
                stream = receiver.bound_stream
            elif isinstance(receiver, Buffer):
                stream = legacy_stream(fw)
            else:
                stream = None  # unknown receiver: its bound stream is unknown

        # Host blocking.
        flag: Optional[bool] = None
        if fact.blocking == BLOCK_ALWAYS:
            blocking: Optional[bool] = True
        elif fact.blocking == BLOCK_UNLESS_STREAM:
            blocking = None if stream is None else stream.kind is StreamKind.LEGACY
        elif fact.blocking == BLOCK_FLAG and fact.flag is not None:
            flag = _const_bool(args.value(fact.flag)) if args.has(fact.flag) else fact.flag_default
            blocking = None if flag is None else flag == fact.flag_blocks_when
        else:
            blocking = False

        kind = fact.kind
        if kind is OpKind.IMPLICIT_SYNC and not any(
            isinstance(v, Buffer) and v.mem is Mem.DEVICE for v in (receiver, *args.all())
        ):
            kind = None  # e.g. torch.equal on CPU tensors: nothing to wait for
        host_buffer: Value = UNKNOWN
        if fact.host is not None:
            host_buffer = args.value(fact.host)
        if fact.direction is not None:
            kind = _direction(args.value(fact.direction), args.expr(fact.direction))
            if kind is OpKind.COPY_H2D:
                host_buffer = args.value(Arg(1))
            elif kind is OpKind.COPY_D2H:
                host_buffer = args.value(Arg(0))
        out = args.value(fact.out) if fact.out is not None and args.has(fact.out) else None

        returned = self.result_of(fact, node, args, receiver, stream, stream_value if stream_given else None, out, label)
        # cuda-python returns (err, value): the op records the value, the caller gets the tuple.
        result = returned.item(1) if fact.returns_tuple and isinstance(returned, Seq) else returned
        if kind in (OpKind.COPY_D2H,) and host_buffer is UNKNOWN:
            host_buffer = out if out is not None else result

        if kind is OpKind.COPY_H2D and fw == "cupy" and fact.host is not None:
            source = args.value(fact.host)
            if isinstance(source, Buffer) and source.mem is Mem.DEVICE and fact.result.startswith("device"):
                return source  # cp.asarray of a device array: no copy

        if kind is not None:
            target = None
            event: Optional[Value] = None
            if fact.target is not None:
                tv = args.value(fact.target)
                if isinstance(tv, Stream):
                    target = tv
                elif isinstance(tv, Event):
                    target, event = tv.recorded_on, tv
                elif kind is OpKind.WAIT_STREAM and args.has(fact.target):
                    target = self.stream_from(tv, args.expr(fact.target), fw)
            if isinstance(receiver, Event):
                event = receiver
                if kind is OpKind.EVENT_SYNC:
                    target = receiver.recorded_on
            elif isinstance(result, Event):
                event = result
            if kind is OpKind.STREAM_SYNC and target is None and isinstance(receiver, Stream):
                target = receiver
            if kind is OpKind.RECORD_STREAM and fact.target is not None:
                target = self.stream_from(args.value(fact.target), args.expr(fact.target), fw)
            op = self.emit(
                kind, label_api, node, fw, stream=stream, host_blocking=blocking,
                is_async_api=fact.async_api, sync_api=fact.sync_api and bool(blocking),
                host_buffer=host_buffer, receiver=receiver, result=result,
                non_blocking=None if flag is None else (not flag if fact.flag_blocks_when else flag),
                pinned_out=isinstance(out, Buffer) and out.mem is Mem.PINNED, target=target,
                reads=tuple(v for v in args.all() if isinstance(v, Buffer)),
                writes=(result,) if isinstance(result, Buffer) else (),
                accesses=self.fact_accesses(kind, fact, node, args, receiver, result, out), event=event,
            )
            self.after_op(op, fact, args, receiver)
        return returned

    def fact_accesses(self, kind: OpKind, fact: Fact, node: cst.Call, args: "Args", receiver: Value,
                      result: Value, out: Optional[Value]) -> tuple[Access, ...]:
        """Which buffers a table API reads and writes (source read, destination written)."""
        recv = (node.func.value, receiver) if isinstance(node.func, cst.Attribute) and receiver is not UNKNOWN else (None, UNKNOWN)
        out_pair = args.pair(fact.out) if out is not None else None
        raw_pair = fact.direction is not None or fact.framework == "cuda-python"
        if kind is OpKind.RECORD_STREAM or kind is OpKind.IMPLICIT_SYNC:
            return self.accesses([recv], space=DEVICE)
        if kind is OpKind.MEMSET:
            return self.accesses([args.pair(Arg(0))], write=True, space=DEVICE)
        if kind not in (OpKind.COPY_H2D, OpKind.COPY_D2H, OpKind.COPY_D2D):
            return ()
        src_space = HOSTMEM if kind is OpKind.COPY_H2D else DEVICE
        dst_space = HOSTMEM if kind is OpKind.COPY_D2H else DEVICE
        if raw_pair:
            src, dst = args.pair(Arg(1)), args.pair(Arg(0))
        elif kind is OpKind.COPY_H2D:
            src = args.pair(fact.host)
            dst = recv if recv[0] is not None else (None, UNKNOWN)
        else:
            src = recv if recv[0] is not None else args.pair(Arg(0))
            dst = out_pair if out_pair is not None else (None, UNKNOWN)
        accesses = self.accesses([src], space=src_space) + self.accesses([dst], write=True, space=dst_space)
        if dst[0] is None:
            accesses += self.result_access(result, node, dst_space)
        return accesses

    def after_op(self, op: GpuOp, fact: Fact, args: "Args", receiver: Value) -> None:
        kind = op.kind
        if kind is OpKind.STREAM_CREATE and isinstance(op.result, Stream) and op.result.explicit:
            self.record.enters_stream = True
        elif kind is OpKind.SET_STREAM:
            fw = op.framework
            stream = receiver if isinstance(receiver, Stream) else args.value(fact.stream_arg) if fact.stream_arg else UNKNOWN
            if isinstance(stream, Stream) and fw in CURRENT_FRAMEWORKS:
                self.make_current(fw, stream)
        elif kind is OpKind.EVENT_RECORD:
            event = receiver if isinstance(receiver, Event) else args.value(fact.target) if fact.target else UNKNOWN
            if isinstance(event, Event) and op.stream is not None:
                self.rebind(event, replace(event, recorded_on=op.stream))
        elif kind is OpKind.HOST_REGISTER:
            registered = args.value(fact.host) if fact.host else UNKNOWN
            if isinstance(registered, Buffer):
                self.rebind(registered, replace(registered, mem=Mem.PINNED))

    def rebind(self, old: Value, new: Value) -> None:
        for name, value in list(self.state.vars.items()):
            if value == old:
                self.state.vars[name] = new

    def result_of(self, fact: Fact, node: cst.Call, args: "Args", receiver: Value,
                  stream: Optional[Stream], stream_value: Optional[Value], out: Optional[Value], label: str) -> Value:  # noqa: C901
        spec = fact.result
        fw = fact.framework
        site = self.site(node)
        value: Value = UNKNOWN
        if spec == "stream":
            # Streams and events keep one identity per creating call: a stream made anew
            # each iteration is taken as one stream (in order: no hazard between them).
            value = Stream(fw, StreamKind.EXPLICIT, self.created_blocking(fact, args), label, site=id(node))
        elif spec == "event":
            recorded = stream if fact.kind is OpKind.EVENT_RECORD else None
            value = Event(fw, label, site=id(node), recorded_on=recorded)
        elif spec.startswith(("device:", "pinned:", "pageable:", "mapped:")):
            mem_name, framework, *rest = spec.split(":")
            mem = {"device": Mem.DEVICE, "pinned": Mem.PINNED, "pageable": Mem.PAGEABLE, "mapped": Mem.MAPPED}[mem_name]
            if out is not None:
                return out
            bound = None
            if rest and rest[0] == "bound":
                bv = args.value(fact.stream_arg) if fact.stream_arg else UNKNOWN
                if isinstance(bv, Stream):
                    bound = bv
                elif fact.stream_arg and args.has(fact.stream_arg) and not (isinstance(bv, Const) and bv.value in (0, None)):
                    bound = self.param_stream(args.expr(fact.stream_arg), fw)
            pinned_by = site if fact.kind is OpKind.PIN else 0
            ndim = self.shape_rank(args.expr(Arg(0, "shape"))) if fact.kind in (OpKind.ALLOC, OpKind.PINNED_ALLOC) else None
            value = Buffer(framework, mem, site=site, label=label, bound_stream=bound, pinned_by=pinned_by, ndim=ndim)
        elif spec.startswith("kernel:"):
            value = Kernel(spec.split(":")[1], label or self.code(node.func), node=node, site=site)
        elif spec == "current_stream":
            value = self.state.current.get(fw, UNKNOWN)
        elif spec == "legacy_stream":
            value = legacy_stream(fw)
        elif spec == "per_thread_stream":
            value = Stream(fw, StreamKind.PER_THREAD, True, "the per-thread default stream", site=-3)
        elif spec == "context":
            sv = args.value(fact.stream_arg) if fact.stream_arg else UNKNOWN
            if isinstance(sv, Const) and sv.value is None:
                value = UNKNOWN
            elif isinstance(sv, Stream):
                value = StreamContext(sv, fw)
            elif fact.stream_arg and args.has(fact.stream_arg):
                value = StreamContext(self.param_stream(args.expr(fact.stream_arg), fw), fw)
        elif spec == "loader":
            pin = args.value(Arg(kw="pin_memory"))
            if "pin_memory" not in args.keywords:
                pinned: Optional[bool] = False
            else:
                pinned = _const_bool(pin)
            value = Loader(pinned, site, label)
        elif spec == "device":
            first = args.value(Arg(0, "type"))
            value = first if isinstance(first, Const) else UNKNOWN
        elif spec.startswith("like_arg0:"):
            first = args.value(Arg(0))
            if isinstance(first, Buffer):
                value = Buffer(spec.split(":")[1], first.mem, site=first.site, pinned_by=first.pinned_by)
        elif spec == "self":
            value = receiver
        elif spec == "capture":
            value = _Capture()
        if fact.returns_tuple:
            return Seq(items=(UNKNOWN, value))
        return value

    def created_blocking(self, fact: Fact, args: "Args") -> Optional[bool]:
        how = fact.creates_blocking
        if how == "yes":
            return True
        if how == "no":
            return False
        if how and how.startswith("not:"):
            kw = how[4:]
            if kw not in args.keywords:
                return True
            flag = _const_bool(args.value(Arg(kw=kw)))
            return None if flag is None else not flag
        if how and how.startswith("flags:"):
            arg = Arg(int(how[6:]), "flags")
            if not args.has(arg):
                return True
            value, expr = args.value(arg), args.expr(arg)
            if isinstance(value, Const) and isinstance(value.value, int):
                return value.value == 0
            name = self.code(expr).rsplit(".", 1)[-1] if expr is not None else ""
            if isinstance(value, QualRef):
                name = value.qualname.rsplit(".", 1)[-1]
            if name in cuda_python.NON_BLOCKING_FLAGS:
                return False
            if name in cuda_python.BLOCKING_FLAGS:
                return True
        return None


class Args:
    """Evaluated call arguments, addressable by position or keyword."""

    __slots__ = ("positional", "keywords", "values")

    def __init__(self, positional, keywords, values) -> None:
        self.positional: list[cst.BaseExpression] = positional
        self.keywords: dict[str, cst.BaseExpression] = keywords
        self.values: dict[int, Value] = values

    def expr(self, arg: Optional[Arg]) -> Optional[cst.BaseExpression]:
        if arg is None:
            return None
        if arg.kw is not None and arg.kw in self.keywords:
            return self.keywords[arg.kw]
        if arg.pos is not None and arg.pos < len(self.positional):
            return self.positional[arg.pos]
        return None

    def has(self, arg: Optional[Arg]) -> bool:
        return self.expr(arg) is not None

    def value(self, arg: Optional[Arg]) -> Value:
        expr = self.expr(arg)
        return UNKNOWN if expr is None else self.values.get(id(expr), UNKNOWN)

    def all(self) -> list[Value]:
        return list(self.values.values())

    def pairs(self) -> list[tuple[cst.BaseExpression, Value]]:
        exprs = list(self.positional) + list(self.keywords.values())
        return [(e, self.values.get(id(e), UNKNOWN)) for e in exprs]

    def pair(self, arg: Optional[Arg]) -> tuple[Optional[cst.BaseExpression], Value]:
        return self.expr(arg), self.value(arg)


class _Batch:
    """What iterating a DataLoader yields: a batch (tuple, dict or tensor) of one memory kind."""

    __slots__ = ("batch",)

    def __init__(self, batch: Buffer) -> None:
        self.batch = batch

    def item(self, index) -> Value:
        return self.batch

    def __eq__(self, other) -> bool:
        return isinstance(other, _Batch) and other.batch == self.batch

    def __hash__(self) -> int:
        return hash(self.batch)


class _Capture:
    """`with torch.cuda.graph(g):` - the body is captured, not run."""

    __slots__ = ()


class _AutoSync:
    __slots__ = ("stream",)

    def __init__(self, stream: Stream) -> None:
        self.stream = stream


class _Pinned:
    __slots__ = ("names",)

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names


def _const_bool(value: Value) -> Optional[bool]:
    if isinstance(value, Const) and isinstance(value.value, (bool, int)) and value.value in (0, 1):
        return bool(value.value)
    return None


def _is_cuda_target(value: Value) -> bool:
    if isinstance(value, Const) and isinstance(value.value, str):
        return value.value.split(":")[0] == "cuda"
    if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
        return True  # .to(0) / .cuda(0): a CUDA device index
    if isinstance(value, Device):
        return value.cuda
    return False


def _is_cpu_target(value: Value) -> bool:
    if isinstance(value, Const) and isinstance(value.value, str):
        return value.value == "cpu"
    if isinstance(value, Device):
        return not value.cuda
    return False


def _blocks(fact: Fact, non_blocking: Optional[bool]) -> Optional[bool]:
    if fact.blocking == BLOCK_ALWAYS:
        return True
    return None if non_blocking is None else not non_blocking


def _direction(value: Value, expr: Optional[cst.BaseExpression]) -> OpKind:
    name = value.qualname if isinstance(value, QualRef) else ""
    if isinstance(value, Const) and isinstance(value.value, int):
        return {1: OpKind.COPY_H2D, 2: OpKind.COPY_D2H, 3: OpKind.COPY_D2D}.get(value.value, OpKind.COPY)
    if name.endswith("HostToDevice"):
        return OpKind.COPY_H2D
    if name.endswith("DeviceToHost"):
        return OpKind.COPY_D2H
    if name.endswith("DeviceToDevice"):
        return OpKind.COPY_D2D
    return OpKind.COPY
