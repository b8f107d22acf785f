"""Shared questions rules ask of a FunctionRecord: what is pending, what follows.

Order within a body is program order (`op.index`); an enclosing loop makes everything
in its body both before and after every point in it (the next iteration).
"""

from __future__ import annotations

from typing import Iterable, NamedTuple, Optional

import libcst as cst

from streamlint.model import tree
from streamlint.model.api import host_math, torch_modules
from streamlint.model.ops import DEVICE_WORK, HOST_SYNCS, FunctionRecord, GpuOp, LoopInfo, OpKind
from streamlint.model.values import Buffer, Stream, StreamKind
from streamlint.model.walk_common import LOOP_INTERACTIVE, dotted_name


def shared_loop(a: GpuOp, b: GpuOp) -> Optional[int]:
    """The innermost loop enclosing both operations, if any."""
    common = None
    for x, y in zip(a.loops, b.loops):
        if x != y:
            break
        common = x
    return common


_QUEUED_WORK = frozenset({OpKind.KERNEL, OpKind.MEMSET, OpKind.COPY_H2D, OpKind.COPY_D2D})


def stream_work(record: FunctionRecord, besides: Optional[GpuOp] = None) -> list[GpuOp]:
    """Explicit-stream work; `besides`: not what the same call of a helper did (one call
    is one step for its caller: what happens inside it is the helper's own business)."""
    work = [op for op in record.ops if op.is_stream_work]
    if besides is not None and besides.helper is not None:
        work = [op for op in work if op.node is not besides.node]
    return work


def work_after(record: FunctionRecord, at: GpuOp) -> list[GpuOp]:
    """Explicit-stream work that the host queues after `at` (later, or next iteration)
    while `at` may still be running: a host wait that covers `at` in between means the
    later work could not have overlapped it anyway."""
    syncs = [s for s in record.ops if (s.kind in HOST_SYNCS or _drains(s)) and s is not at and covers(s, at)]
    later = []
    for w in stream_work(record, besides=at):
        if w is at:
            continue
        if w.index > at.index:
            between = [s for s in syncs if at.index < s.index < w.index]
        else:
            loop = shared_loop(w, at)
            if loop is None:
                continue
            between = [s for s in syncs if loop in s.loops and (s.index > at.index or s.index < w.index)]
        if not between:
            later.append(w)
    return later


def pending_at(record: FunctionRecord, at: GpuOp) -> list[GpuOp]:
    """Explicit-stream work that may still be running when the host reaches `at`."""
    syncs = [s for s in record.ops if s.kind in HOST_SYNCS or _drains(s)]
    pending = []
    for w in stream_work(record, besides=at):
        if w is at:
            continue
        if w.index < at.index:
            between = [s for s in syncs if w.index < s.index < at.index]
        else:
            loop = shared_loop(w, at)
            if loop is None:
                continue
            # Queued in the previous iteration: syncs after it in that iteration, or
            # before `at` in this one.
            between = [s for s in syncs if loop in s.loops and (s.index > w.index or s.index < at.index)]
        if not any(covers(s, w) for s in between):
            pending.append(w)
    return pending


def between_stream_work(record: FunctionRecord, at: GpuOp, blocking_only: bool = False) -> tuple[list[GpuOp], list[GpuOp]]:
    """(pending before, queued after) explicit-stream work around `at`."""
    before = pending_at(record, at)
    after = work_after(record, at)
    if blocking_only:
        before = [w for w in before if w.stream is not None and w.stream.blocking is True]
        after = [w for w in after if w.stream is not None and w.stream.blocking is True]
    return before, after


def _drains(op: GpuOp) -> bool:
    """A host-blocking operation that waits for a stream's queued work (e.g. a blocking copy)."""
    return op.host_blocking is True and op.stream is not None and op.kind in DEVICE_WORK | {OpKind.IMPLICIT_SYNC}


def covers(sync: GpuOp, work: GpuOp) -> bool:
    """Does the host-side wait `sync` guarantee that `work` has finished?

    When the text does not say which stream a wait is for, assume it covers the work:
    a linter that is unsure stays silent.
    """
    if sync.kind is OpKind.DEVICE_SYNC:
        return True
    stream = work.stream
    if sync.kind in (OpKind.STREAM_SYNC, OpKind.EVENT_SYNC):
        target = sync.target
        return target is None or stream is None or same_stream(target, stream)
    if _drains(sync):
        drained = sync.stream
        if drained is None or stream is None:
            return True
        if same_stream(drained, stream):
            return True
        # Work on the legacy default stream first waits for every blocking stream.
        return drained.kind is StreamKind.LEGACY and stream.blocking is True
    return False


def same_stream(a: Stream, b: Stream) -> bool:
    return a.site == b.site and a.framework == b.framework or a.label == b.label and bool(a.label)


def loop_queues_work(record: FunctionRecord, loop: int) -> bool:
    """Does the loop queue GPU work each time round (kernels, uploads, device copies)?
    A loop that only reads results back, or synchronizes each device once, is not a hot
    path: there is no GPU work for its syncs to stall."""
    return any(
        loop in op.loops and op.kind in _QUEUED_WORK and not op.in_comprehension for op in record.ops
    )


def in_hot_path(record: FunctionRecord, op: GpuOp) -> bool:
    """`forward` of an nn.Module, or a loop that queues GPU work every iteration (the
    operation itself runs every iteration: not under an `if` inside the loop). A loop
    over a literal sequence (`for t in [a, b]:`) runs a few times written out: the loop
    around it decides. A loop that waits for a person (`input()`) is no hot path."""
    if op.in_comprehension or op.conditional:
        return False
    if op.in_forward:
        return True
    infos = [record.loops.get(loop) for loop in op.loops]
    if any(info is not None and waits_on_user(info) for info in infos):
        return False
    loops = [loop for loop, info in zip(op.loops, infos) if info is None or not unrolled(info)]
    return bool(loops) and loop_queues_work(record, loops[-1])


def per_element_sync(record: FunctionRecord, op: GpuOp) -> bool:
    """A synchronization in a comprehension that also queues GPU work for each element
    (`[int(t.sum().item()) for t in parts]`): one wait per element, where one read of
    all the values would do."""
    if not op.comprehension or op.conditional:
        return False
    return any(o.comprehension == op.comprehension and o.kind in _QUEUED_WORK and o.index < op.index
               for o in record.ops)


def per_element_read(record: FunctionRecord, op: GpuOp) -> str:
    """`for b in range(n): ... q[b].item()`: one wait per element of a tensor the loop
    does not change, where one `.tolist()` before the loop reads them all. Returns the
    tensor as spelled (`q`), or "" when the read is not of that shape."""
    if op.kind is not OpKind.IMPLICIT_SYNC or not op.loops or op.framework not in ("torch", "cupy"):
        return ""
    element = _read_element(op.node)
    if element is None:
        return ""
    base = dotted_name(element.value)
    info = record.loops.get(op.loops[-1])
    if not base or info is None or not isinstance(info.node, (cst.For, cst.CompFor)):
        return ""
    targets = {n.value for n in _names(info.node.target)}
    if not targets & {n.value for el in element.slice for n in _names(el)} or base.split(".")[0] in targets:
        return ""
    if isinstance(info.node, cst.For) and not _only_reads_elements(info.node.body, base):
        return ""
    return base


def _read_element(node: cst.CSTNode) -> Optional[cst.Subscript]:
    """`q[b]` of `q[b].item()`, `int(q[b])` or `if q[b]:`."""
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Subscript):
            return node.func.value
        if len(node.args) == 1 and isinstance(node.args[0].value, cst.Subscript):
            return node.args[0].value
    if isinstance(node, cst.Subscript):
        return node
    return None


def _only_reads_elements(body: cst.CSTNode, base: str) -> bool:
    """Is `base` used in the body only as `base[...]` read (no write, no other use)?"""
    class Uses(cst.CSTVisitor):
        other = False

        def visit_Subscript(self, node: cst.Subscript) -> Optional[bool]:
            if dotted_name(node.value) == base:
                for element in node.slice:
                    element.visit(self)
                return False
            return None

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self.other |= _roots_at(node.target, base)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self.other |= _roots_at(node.target, base)

        def visit_Name(self, node: cst.Name) -> None:
            self.other |= node.value == base

        def visit_Attribute(self, node: cst.Attribute) -> Optional[bool]:
            if dotted_name(node) == base:
                self.other = True
                return False
            return None

    uses = Uses()
    body.visit(uses)
    return not uses.other


def _roots_at(target: cst.BaseExpression, base: str) -> bool:
    while isinstance(target, (cst.Subscript, cst.Attribute)):
        if dotted_name(target) == base:
            return True
        target = target.value
    return dotted_name(target) == base


def in_timed_loop(record: FunctionRecord, op: GpuOp) -> bool:
    """Inside a loop that reads a host timer: its synchronizations bound timed regions.
    Not a training loop's: timing every step there is the stall (`trains`)."""
    return not in_training_loop(record, op) and any(
        record.loops[loop].timed for loop in op.loops if loop in record.loops
    )


def in_training_loop(record: FunctionRecord, op: GpuOp) -> bool:
    return any(trains(record.loops[loop]) for loop in op.loops if loop in record.loops)


# -- what a loop is, from what its body calls (LoopInfo.marks, set by the walk) -------------
def trains(info: LoopInfo) -> bool:
    """A training loop: its body runs a backward pass and an update (torch_modules)."""
    return torch_modules.STEP_BACKWARD in info.marks and torch_modules.STEP_UPDATE in info.marks


def waits_on_user(info: LoopInfo) -> bool:
    """An interactive loop: every iteration waits for a person to type (`input()`)."""
    return LOOP_INTERACTIVE in info.marks


def repeats(info: LoopInfo) -> bool:
    """`for _ in range(n_run):`: every iteration does the same work (the body never reads
    the loop variable): a loop that exists to repeat something, as a benchmark does."""
    node = info.node
    if not isinstance(node, cst.For):
        return False
    targets = {n.value for n in _names(node.target)}
    return not targets & {n.value for n in _names(node.body)}


def _names(node: cst.CSTNode) -> list[cst.Name]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.append(current)
        elif isinstance(current, cst.Attribute):
            stack.append(current.value)  # (`x.step` reads x, not a name `step`)
            continue
        stack.extend(tree.children(current))
    return found


def unrolled(info: LoopInfo) -> bool:
    """`for x in [a, b]:`: a loop over a literal sequence of a few values written out."""
    node = info.node
    return isinstance(node, cst.For) and isinstance(node.iter, (cst.List, cst.Tuple, cst.Set)) and not any(
        isinstance(e, cst.StarredElement) for e in node.iter.elements
    )


def streams_named(ops: Iterable[GpuOp]) -> str:
    """`s1`, `s2` and `s3`: the streams of some operations, for messages."""
    labels: list[str] = []
    for op in ops:
        label = op.stream.label if op.stream is not None else ""
        if label and f"`{label}`" not in labels:
            labels.append(f"`{label}`")
    if not labels:
        return "other streams"
    if len(labels) == 1:
        return labels[0]
    return ", ".join(labels[:-1]) + " and " + labels[-1]


def is_default_stream(stream: Optional[Stream]) -> bool:
    return stream is not None and stream.is_default


def hot_function(record: FunctionRecord) -> str:
    """How a message names the function whose every call runs `record`'s work: the hot
    method itself (`forward`, an optimizer's `step`, a training engine's `backward`), or
    for a helper it calls each time, that function (`RotaryEmbedding.forward`)."""
    if record.hot_via:
        return f"`{record.hot_via}`"
    return f"`{record.name.rsplit('.', 1)[-1]}`" if record.is_forward else "`forward`"


class RoundTrip(NamedTuple):
    kernel: GpuOp  # the CuPy call that made the device value
    host: Optional[str]  # what computes the same on the host (`math.ceil`), if we know


def host_round_trip(record: FunctionRecord, op: GpuOp) -> Optional[RoundTrip]:
    """A host read of a device value made only from numbers the host already had
    (`int(cp.ceil(n / 32))`): the kernel that made it, or None."""
    receiver = op.receiver
    if op.kind is not OpKind.IMPLICIT_SYNC or not isinstance(receiver, Buffer) or not receiver.literal:
        return None
    if receiver.framework != "cupy" or not receiver.site:
        return None
    kernel = next((o for o in record.ops if o.kind is OpKind.KERNEL and o.index < op.index
                   and any(isinstance(w, Buffer) and w.site == receiver.site for w in o.writes)), None)
    if kernel is None:
        return None
    return RoundTrip(kernel, host_math.host_equivalent(kernel.api.rsplit(".", 1)[-1]))
