"""The API operations of a function as its summary records them, what its effects say around each, round trips."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Optional

from streamlint.model.api.op_kinds import OpKind
from streamlint.model.domain.order import HOST
from streamlint.model.domain.paths import RootKind
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.values import HostBuilt
from streamlint.model.file_model import FileModel
from streamlint.model.findings import shown_at
from streamlint.model.summary.effects import Effect, EffectKind, Operation
from streamlint.model.transfer.frame import ROOT_CONTEXT, CallContext

# Operations that queue work on a stream (what streams exist to overlap): OpKind values.
DEVICE_WORK = frozenset({"H2D copy", "D2H copy", "D2D copy", "copy", "kernel", "memset"})
_HOST_WAITS = frozenset({EffectKind.SYNC})
# Roots of memory that outlives a call: the next call finds it again.
_OUTLIVES = frozenset({RootKind.SELF, RootKind.GLOBAL, RootKind.PARAM})
_HOST_TIMER = "host timer"  # Operation.op (api.facts OpKind.HOST_TIMER)
_IMPLICIT_SYNC = OpKind.IMPLICIT_SYNC.value


@dataclass(frozen=True)
class OperationAt:
    site: str  # where it shows in the function: the operation, or the call it came through
    operation: Operation
    stream: Optional[StreamRef]
    chain: tuple[str, ...]  # the calls it came through, outermost first
    hot: bool = False  # the function runs on every step of a hot path (its summary says so)
    effects: tuple = field(default=(), compare=False, repr=False)  # the effects of the walk that saw it
    context: CallContext = ROOT_CONTEXT  # the calling context of that walk
    own_site: str = ""  # where it is in the function that performs it (a helper's call for one via a call)
    framework: str = ""  # whose operation it is, where the effect says
    function: str = ""  # its function's qualified name in the file ("f", "C.m")
    first_pass: bool = False  # of its loop's first pass only (Effect.first_pass)
    entry: str = ""  # the hot entry that reaches the function on every call ("C.forward"), "" when none

    @cached_property
    def reads(self) -> frozenset:
        """The memory (Paths) its own accesses at its site read."""
        return frozenset(e.path for e in self.effects if e.kind is EffectKind.ACCESS and not e.write and not e.chain
                         and e.path is not None and e.site == self.own_site) if not self.chain else frozenset()

    def reads_made_at(self, site: str) -> bool:
        """Does it read memory allocated at `site` (this iteration's)?"""
        return any(p.root.kind is RootKind.FRESH and p.root.site == site and not p.root.age for p in self.reads)


def operations(model: FileModel, qualname: str) -> list[OperationAt]:
    """`qualname` as written in the file ("f", "C.m"), under any caller (the root context)."""
    full = f"{model.module}.{qualname}"
    return [at for name, at in own_operations(model, True) if name == full and at.context == ROOT_CONTEXT]


def own_operations(model: FileModel, through_calls: bool = False) -> list[tuple[str, OperationAt]]:
    """(function, operation) of each function's operations (`through_calls`: its callees' too), root context first."""
    walks = sorted(model.solved.walks.items(), key=lambda item: item[0][1] != ROOT_CONTEXT)
    return operations_in(model, walks, through_calls)


def operations_in(model: FileModel, walks: list, through_calls: bool) -> list[tuple[str, OperationAt]]:
    """(function, operation) of the operations of the walks of the file's functions, in their order."""
    prefix = f"{model.module}."
    found = []
    for (qualname, context), walked in walks:
        if not qualname.startswith(prefix):
            continue
        for effect in walked.effects:
            if effect.kind is not EffectKind.OPERATION or effect.operation is None or (
                    effect.chain and not through_calls):
                continue
            at = OperationAt(shown_at(effect), effect.operation, effect.stream, effect.chain, walked.summary.hot,
                             walked.effects, context, effect.site, effect.framework, qualname[len(prefix):],
                             effect.operation.host_built is HostBuilt.FIRST_PASS)
            found.append((qualname, at))
    return found


def _around(model: FileModel, qualname: str, at: OperationAt) -> tuple[list[Effect], list[Effect]]:
    """The function's effects before the operation's site, and those after the operation (at its site apart)."""
    before: list[Effect] = []
    after: list[Effect] = []
    passed = 0  # 1: at its site, 2: past the operation
    for effect in at.effects:
        if shown_at(effect) == at.site:
            same = effect.kind is EffectKind.OPERATION and effect.operation == at.operation
            passed = max(passed, 2 if same else 1)
        elif passed != 1:
            (after if passed else before).append(effect)
    return before, after


def _device_work(effect: Effect) -> bool:
    """An access or an operation that queues work on a known stream (not the host side of a copy)."""
    stream = effect.stream
    if stream is None or stream == HOST or not stream.known:
        return False
    if effect.kind is EffectKind.ACCESS:
        return not effect.host_memory
    return effect.kind is EffectKind.OPERATION and effect.operation is not None and effect.operation.op in DEVICE_WORK


def _drains(effect: Effect, stream: Optional[StreamRef]) -> bool:
    """The host waits for the device, or for `stream`."""
    return effect.kind is EffectKind.SYNC and effect.path is None and effect.stream in (None, stream)


def host_writes_into(model: FileModel, qualname: str, at: OperationAt) -> list[tuple[str, bool]]:
    """(site, comes after it) of the host's writes into memory the operation reads, in its function (of `self`'s, in
    its class's methods); memory that outlives the call is written before the next call too."""
    sources = [p for p in at.reads if p.root.kind is not RootKind.FRESH or p.root.site != at.site]
    if not sources:
        return []
    owner = qualname.rsplit(".", 1)[0] + "."
    found = []
    for (function, _), walked in model.solved.walks.items():
        same = function == qualname
        if not same and not function.startswith(owner):
            continue
        after = not same
        for effect in walked.effects:
            after = after or effect.site == at.site
            if effect.kind is not EffectKind.ACCESS or not effect.write or effect.stream != HOST:
                continue
            path = effect.path
            if path is None or effect.site == at.site or (not same and path.root.kind is not RootKind.SELF):
                continue
            if any(path.may_alias(p) and p.root.kind is path.root.kind for p in sources):
                found.append((shown_at(effect), after or path.root.kind in _OUTLIVES))
    return found


def leaves_unordered(model: FileModel, qualname: str, at: OperationAt) -> bool:
    """Nothing after the operation in its function orders its stream (no wait, record or sync)."""
    stream = at.stream
    if stream is None:
        return False
    return not any(_drains(e, stream) or (e.kind is EffectKind.WAIT_STREAM and e.other in (stream, None))
                   or (e.kind is EffectKind.RECORD_EVENT and e.stream == stream)
                   for e in _around(model, qualname, at)[1])


def streams_working_after(model: FileModel, qualname: str, at: OperationAt) -> list[StreamRef]:
    """The streams of the work queued after the operation up to the host's next wait; none when it reads the result."""
    found: list[StreamRef] = []
    made = at.own_site or at.site
    for effect in _around(model, qualname, at)[1]:
        if effect.kind in _HOST_WAITS:
            break
        path = effect.path
        if not found and effect.kind is EffectKind.ACCESS and effect.stream == HOST and not effect.write \
                and path is not None and path.root.kind is RootKind.FRESH and path.root.site == made:
            return []  # the host reads the operation's result
        if _device_work(effect) and effect.stream not in found:
            found.append(effect.stream)
    return found


def drained_alone(model: FileModel, qualname: str, at: OperationAt) -> bool:
    """The host waits for the operation's stream (or the device) before queuing work on another."""
    for effect in _around(model, qualname, at)[1] if at.stream is not None else ():
        if _drains(effect, at.stream):
            return True
        if effect.stream not in (None, HOST, at.stream) and effect.kind in (EffectKind.ACCESS, EffectKind.OPERATION):
            return False
    return False


def host_waits_after(model: FileModel, qualname: str, at: OperationAt) -> list[str]:
    """The sites (in the function) of the host's waits after the operation (not its own), in order."""
    return [shown_at(e) for e in _around(model, qualname, at)[1] if e.kind in _HOST_WAITS]


def chosen(stream: Optional[StreamRef]) -> bool:
    """A stream the code chose: made, or held at a path (the host's own accesses are on no stream)."""
    return stream is not None and stream.kind in (StreamRefKind.CREATED, StreamRefKind.PATH) and stream != HOST


def chosen_streams(model: FileModel, qualname: str, at: OperationAt) -> list[StreamRef]:
    """The streams the code chose (made or held) that the function's own work runs on, each once."""
    found: list[StreamRef] = []
    for effect in at.effects:
        if not effect.chain and chosen(effect.stream) and effect.stream not in found and effect.kind in (
                EffectKind.ACCESS, EffectKind.OPERATION, EffectKind.SET_CURRENT):
            found.append(effect.stream)
    return found


def work_before(model: FileModel, qualname: str, at: OperationAt) -> list[tuple[Optional[StreamRef], str]]:
    """(stream, site) of the device work before the operation, and (None, site) of the host's waits, in order."""
    return [(None if step.wait else step.stream, step.site) for step in _steps(_around(model, qualname, at)[0])]


def orders_with_legacy(stream: Optional[StreamRef]) -> bool:
    """A blocking stream the code chose: the legacy default stream's work and its own order each other."""
    return chosen(stream) and stream.blocking and stream.framework != ""


@dataclass(frozen=True)
class _Step:
    index: int
    site: str  # where it is in the function (the call it came through)
    stream: Optional[StreamRef]  # the work's stream; for a host wait, the stream waited for (None: all)
    wait: bool


def _steps(effects) -> list[_Step]:
    """The function's device work and the host's waits (for a stream, or all: None), in program order."""
    return [_Step(index, shown_at(e), e.stream, e.kind in _HOST_WAITS)
            for index, e in enumerate(effects) if e.kind in _HOST_WAITS or _device_work(e)]


def stream_work_around(model: FileModel, qualname: str, at: OperationAt, ancestry, which=chosen) -> tuple[list, list]:
    """(streams `which` accepts with work that may run when the operation is queued, and work queued while it may
    run); a host wait between orders them; in a loop around both, the next iteration's comes after it."""
    effects = at.effects
    here = next((i for i, e in enumerate(effects) if shown_at(e) == at.site), None)
    steps = _steps(effects) if here is not None else []
    around: dict[str, list] = {}

    def loops(site: str) -> list:
        if site not in around:
            node = model.node_of(site)
            around[site] = ancestry.loops_around(node) if node is not None else []
        return around[site]

    def unordered(first: int, last: int, loop, stream: Optional[StreamRef], skip: str) -> bool:
        """No host wait for `stream` (or all) from index `first` to `last` (round `loop` when `last` is first)."""
        for w in steps:
            if not w.wait or w.site in (at.site, skip) or w.stream not in (None, stream):
                continue
            if first < w.index < last if first < last else (
                    (w.index > first or w.index < last) and any(x is loop for x in loops(w.site))):
                return False
        return True

    before: list[StreamRef] = []
    after: list[StreamRef] = []
    for step in steps:
        if step.wait or step.site == at.site or not which(step.stream):
            continue
        common = [x for x, y in zip(loops(step.site), loops(at.site)) if x is y]
        loop = common[-1] if common else None
        if (step.index < here or loop is not None) and step.stream not in before \
                and unordered(step.index, here, loop, step.stream, step.site):
            before.append(step.stream)
        if (step.index > here or loop is not None) and step.stream not in after \
                and unordered(here, step.index, loop, at.stream, step.site):
            after.append(step.stream)
    return before, after


def measuring_calls(model: FileModel, qualname: str) -> frozenset[str]:
    """The call sites in the function whose callee reads a host timer (calls of a measurement)."""
    walks = [(key, walked) for key, walked in model.solved.walks.items() if key[0] == qualname]
    return frozenset(at.site for _, at in operations_in(model, walks, True)
                     if at.chain and at.operation.op == _HOST_TIMER)


@dataclass(frozen=True)
class RoundTrip:
    """A host read of a device value computed only from numbers the host had: a kernel and a wait to skip."""

    read_site: str  # the host read (`int(...)`, `.item()`)
    read: Operation
    kernel_site: str  # the call that computed the value on the device
    kernel: Operation


def round_trips(model: FileModel) -> list[RoundTrip]:
    """Every round trip in the file's functions' own operations, once per read, in the order of the walks."""
    found: dict[str, RoundTrip] = {}
    operations = operations_in(model, list(model.solved.walks.items()), False)
    kernels = {(q, at.context, at.site): at.operation for q, at in operations if at.operation.host_inputs}
    for qualname, at in operations:
        read, kernel = at.operation, kernels.get((qualname, at.context, at.operation.value_site))
        if read.op == _IMPLICIT_SYNC and kernel is not None and at.site not in found:
            found[at.site] = RoundTrip(at.site, read, read.value_site, kernel)
    return list(found.values())
