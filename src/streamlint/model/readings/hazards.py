"""The file's hazards as a message needs them, one problem per racing operation (read off the placed `Hazard`s)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import libcst as cst

from streamlint.model import api
from streamlint.model.domain.order import HOST, AccessEvent, ConflictKind
from streamlint.model.domain.paths import RootKind
from streamlint.model.domain.streams import StreamRef
from streamlint.model.file_model import FileModel
from streamlint.model.findings import Hazard, Placement, shown_at, shown_place
from streamlint.model.interproc.program import FunctionRef

# Which conflict an operation racing in several ways (an in-place update) is reported as: the
# overwrite the writer's order must fix, then a read of another stream's write, then a second writer.
_PRECEDENCE = (
    ConflictKind.WRITE_AFTER_READ,
    ConflictKind.READ_AFTER_WRITE,
    ConflictKind.WRITE_AFTER_WRITE,
)


@dataclass(frozen=True)
class Side:
    """One access of a hazard, as the reporting function sees it."""

    access: AccessEvent
    shown: Optional[cst.CSTNode]  # where it shows in the reporting function (itself, or its call)
    node: Optional[cst.CSTNode]  # the operation itself (in a callee when it came through a call)
    callee: Optional[FunctionRef]  # the function that made it, when not the reporting one

    @property
    def stream(self) -> StreamRef:
        return self.access.stream

    @property
    def on_host(self) -> bool:
        return self.access.stream == HOST

    @property
    def through_call(self) -> bool:
        return bool(self.access.chain)


@dataclass(frozen=True)
class HazardReading:
    hazard: Hazard
    kind: ConflictKind  # what the problem at this place is (one per racing operation)
    function: FunctionRef  # where it is reported
    node: cst.CSTNode  # the reported node
    later: Side
    earlier: Side
    framework: str  # "torch", "cupy", "numba", "cuda-python"; "" when neither stream says
    readers: tuple = ()  # a returned copy read unfinished by every call of it: those reads (one problem)

    @property
    def from_caller(self) -> bool:
        """The earlier side is the caller's (a parameter's or `self` state's entry assumption)."""
        return self.hazard.earlier.assumed

    @property
    def caller_root(self) -> Optional[RootKind]:
        """PARAM or SELF for `from_caller`."""
        return self.hazard.earlier.path.root.kind if self.from_caller else None

    @property
    def at_earlier(self) -> bool:
        """Reported at the earlier access (a copy an earlier call left reading what this one refills)."""
        return self.hazard.site == self.hazard.earlier_site != shown_at(self.hazard.later)

    @property
    def released_at(self) -> Optional[cst.CSTNode]:
        """A release's place (the rebinding or `del`); None when the function's end releases it."""
        return self.later.node if self.kind is ConflictKind.RELEASE_WITHOUT_RECORD else None


def framework_of(*streams: StreamRef) -> str:
    for stream in streams:
        if stream != HOST and stream.framework:
            return stream.framework
    return ""


def module_framework(model: FileModel) -> str:
    """The one GPU framework the checked module imports (of Numba, `numba.cuda`), "" when none or several."""
    found = {api.framework_of(dotted) for dotted in model.solver.program.main.imports.values()
             if dotted.partition(".")[0] != "numba" or f"{dotted}.".startswith("numba.cuda.")} - {None}
    return found.pop() if len(found) == 1 else ""


def _side(model: FileModel, access: AccessEvent, shown_site: str) -> Side:
    callee = None
    if access.chain:
        callee = model.solver.program.function(access.site.partition("#")[0])
    return Side(access, model.node_of(shown_site), model.node_of(access.site), callee)


def _rank(hazard: Hazard) -> tuple:
    """Of the conflicts at one place, the one reported: the earlier access queued last, then the kind's precedence."""
    behind = float("inf") if hazard.earlier.assumed else hazard.behind
    return (behind, _PRECEDENCE.index(hazard.kind))


def readings(model: FileModel) -> list[HazardReading]:
    """Every hazard of the file, one per problem, in the model's order."""
    chosen: dict[tuple, Hazard] = {}
    for hazard in sorted((h for h in model.hazards if h.kind in _PRECEDENCE), key=_rank):
        chosen.setdefault(shown_place(hazard), hazard)
    found = []
    for hazard in model.hazards:
        kind = hazard.kind  # (of several stream conflicts at one place, the chosen one only)
        function = model.solver.program.function(hazard.function)
        node = model.node_of(hazard.site)
        if (kind in _PRECEDENCE and chosen[shown_place(hazard)] is not hazard) or function is None or node is None:
            continue
        from_caller = hazard.earlier.assumed
        if kind is ConflictKind.WRITE_AFTER_WRITE and from_caller:
            # an update of memory the caller made (`bucket.div_(n)`) reads what the caller's stream wrote
            kind = ConflictKind.READ_AFTER_WRITE
        if from_caller:
            # the entry assumption names PyTorch's current stream whatever the memory: the module's
            # framework says more; with a host reader (MPI) nothing says, and the stream is named in words
            framework = (framework_of(hazard.later.stream) or module_framework(model)
                         or ("" if hazard.later.stream == HOST else framework_of(hazard.earlier.stream)))
        else:
            # memory handed out (AT_BOUNDARY): the writer's stream is the code's own and says whose
            sides = (hazard.later.stream, hazard.earlier.stream)
            if hazard.placement is Placement.AT_BOUNDARY:
                sides = sides[::-1]
            framework = framework_of(*sides) or module_framework(model)
        found.append(HazardReading(hazard, kind, function, node, _side(model, hazard.later, shown_at(hazard.later)),
                                   _side(model, hazard.earlier, hazard.earlier_site), framework))
    return _returned_copies(model, _one_per_callee_race(_one_per_entry_race(found)))


def _one_per_callee_race(found: list[HazardReading]) -> list[HazardReading]:
    """A race both of whose accesses a callee of this module makes, met through several of its calls here (a helper
    every caller runs under the object's state): one problem, reported through the first call."""
    kept, seen = [], set()
    for r in found:
        earlier, later = r.hazard.earlier, r.hazard.later
        inner = earlier.chain and later.chain and not earlier.assumed and _called(earlier) == _called(later)
        key = (r.kind, earlier.chain[1:], earlier.site, later.chain[1:], later.site) if inner else None
        if key is not None and key in seen:
            continue
        if key is not None:
            seen.add(key)
        kept.append(r)
    return kept


def _one_per_entry_race(found: list[HazardReading]) -> list[HazardReading]:
    """A race with memory made before entry, met in a function and again through its call in a function of this
    module that encloses or calls it (a closure of a method, reported as an entry and through the method): one
    problem, reported where the racing operation is nearest (the shortest chain to it)."""
    def key(r: HazardReading) -> Optional[tuple]:
        earlier, later = r.hazard.earlier, r.hazard.later
        return (r.kind, earlier.path, later.site) if earlier.assumed and later.chain else None
    nearest: dict[tuple, int] = {}
    for r in found:
        k = key(r)
        if k is not None:
            nearest[k] = min(nearest.get(k, len(r.hazard.later.chain)), len(r.hazard.later.chain))
    return [r for r in found if key(r) is None or len(r.hazard.later.chain) == nearest[key(r)]]


def _called(access: AccessEvent) -> str:
    """The function the reporting function called to make an access (the first callee of its chain)."""
    return (access.chain[1] if len(access.chain) > 1 else access.site).partition("#")[0]


def _returned_copies(model: FileModel, found: list[HazardReading]) -> list[HazardReading]:
    """A copy to the host into memory a module function returns, read unfinished by every call in sight: one problem,
    at the copy (where some call waits, each read that does not is its own)."""
    reads: dict[str, list[HazardReading]] = {}
    for r in found:
        copy = r.hazard.earlier
        root = copy.path.root
        if (r.kind is ConflictKind.HOST_READ_BEFORE_SYNC and len(copy.chain) == 1 and root.kind is RootKind.FRESH
                and root.site == f"{copy.chain[0]}>{copy.site}" and r.earlier.node is not None):
            reads.setdefault(copy.site, []).append(r)
    if not reads:
        return found
    calls: dict[str, set[str]] = {}  # each copy's calls, in the module's functions' summaries
    for (qualname, _), walked in model.solved.walks.items():
        for effect in walked.effects if qualname.startswith(model.module + ".") else ():
            if effect.site in reads and effect.chain and effect.chain[0].startswith(qualname + "#"):
                calls.setdefault(effect.site, set()).add(effect.chain[0])
    grouped: dict[str, HazardReading] = {}
    for site, group in reads.items():
        function = model.solver.program.function(site.partition("#")[0])
        if function is None or function.module != model.module:
            continue  # another module's helper: its reads here are this module's problems
        if not calls.get(site) or calls[site] != {r.hazard.earlier.chain[0] for r in group}:
            continue
        first = group[0]
        copy = replace(first.earlier, shown=first.earlier.node, callee=None)
        grouped[site] = replace(first, function=function, node=first.earlier.node, earlier=copy,
                                readers=tuple(r.later.shown for r in group))
    kept, placed = [], set()
    for r in found:
        site = r.hazard.earlier.site
        if site not in grouped or not any(r is x for x in reads[site]):
            kept.append(r)
        elif site not in placed:
            placed.add(site)
            kept.append(grouped[site])
    return kept
