"""The v3 model of one file: the program it sees, solved, and its hazards placed."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, replace
from typing import Optional

import libcst as cst

from streamlint.model.domain.order import HOST, ConflictKind
from streamlint.model.domain.paths import RootKind
from streamlint.model.domain.streams import StreamRefKind
from streamlint.model.domain.values import ValueKind
from streamlint.model.interproc.repeat import next_call_conflicts
from streamlint.model.findings import Hazard, Placement, at_boundary, at_fork, at_wait, place, shown_place
from streamlint.model.summary.effects import EffectKind
from streamlint.model.interproc.modules import ProjectModules, main_names
from streamlint.model.interproc.program import Program, unit_of
from streamlint.model.interproc.solver import Solved, Solver, entered_bare
from streamlint.model.syntax import children


@dataclass
class FileModel:
    module: str
    hazards: list[Hazard]
    solved: Solved
    solver: Solver

    def node_of(self, site: str) -> Optional[cst.CSTNode]:
        return self.solver.node_of(site)


def analyze_file(module: cst.Module, path: str = "", text: bytes = b"") -> FileModel:
    """`text`: the file's checked bytes, for the syntax layer's prefilters."""
    children.forget()  # (the last file's trees)
    name, package = main_names(path)
    solver = Solver(Program(unit_of(name, module, package, text), ProjectModules(path)))
    solved = solver.solve_module()
    kept: dict = {}  # problem -> its hazard, in the order the problems were first met
    pairs = set()
    placed = [conflict if isinstance(conflict, Hazard) else place(function, conflict)
              for function, conflict in _all_conflicts(solver, solved, name)]
    placed = [hazard for hazard in placed if not _the_callees(hazard, name)]
    own = {_pair(hazard) for hazard in placed}
    for hazard in placed:
        # (a release: one problem per memory released, `return a + b` drops two allocations)
        released = hazard.later.path.root if hazard.kind is ConflictKind.RELEASE_WITHOUT_RECORD else None
        key, pair = _problem(hazard), (*_pair(hazard), released)
        if pair in pairs or _callees(hazard, own):  # (the same two accesses met again across calls)
            continue
        # the latest queued access one operation races names it; a missing join, the pair found first
        if key not in kept or (hazard.placement is not Placement.AT_FORK and hazard.behind < kept[key].behind):
            kept[key] = hazard
            pairs.add(pair)
    return FileModel(name, list(kept.values()), solved, solver)


def _all_conflicts(solver: Solver, solved: Solved, name: str) -> list:
    """The conflicts the walks saw, then memory handed out unfinished by functions no caller in sight
    calls (their callers' reads are out of sight: the boundary is the place)."""
    waits: dict = {}
    found: list = [(qualname, _at_one_way_fork(qualname, placed, solved))
                   for qualname, placed in ((q, _at_misdirected_wait(q, c, solved, waits)) for q, c in solved.conflicts_in(name))
                   if isinstance(placed, Hazard) or not _the_callers(placed, qualname, solver)]
    found.extend(_next_calls(solver, solved, name))
    for (qualname, context), walked in solved.at_boundary():
        if not qualname.startswith(name + ".") or not _as_entered(context):
            continue
        # a public method is the class's interface: its users may call it after the others (a private
        # method's callers in sight are its users)
        interface = not qualname.rsplit(".", 1)[-1].startswith("_")
        left = frozenset(context.receiver_pending)
        handed = [c for c in walked.handed_out
                  if (qualname not in solver.called
                      or (interface and (c.earlier in left or (_kept(c) and not _callers_record(solved, qualname)))))
                  and not _reallocates_after_callers(solved, qualname, c)]
        # (a hand-out after the writing stream waited for itself: that wait is where the fix goes)
        found.extend((qualname, placed if isinstance(placed, Hazard) else at_boundary(qualname, c))
                     for c in handed for placed in (_at_misdirected_wait(qualname, c, solved, waits),))
        if qualname in solver.called:
            continue
        found.extend((qualname, at_wait(qualname, c, site, waited, waiter))
                     for c, site, waiter, waited in walked.misjoined)
    return _at_the_return(solved, name, found)


def _at_the_return(solved: Solved, name: str, found: list) -> list:
    """Memory a function of the module makes and returns in flight, read unwaited by every caller in
    sight that makes it: one problem, at the function's return, where the callers are named (row
    11.4's placement for any reader, row 11.23); where some caller waits, each read stays its caller's."""
    handed = {c.earlier.path.root.site: (qualname, c) for (qualname, _), walked in solved.walks.items()
              if qualname.startswith(name + ".") for c in walked.handed_out
              if c.kind is ConflictKind.READ_AFTER_WRITE and c.earlier.path.root.kind is RootKind.FRESH}
    read: dict = {}  # the returned allocation -> the calls whose caller reads it unwaited
    for _, conflict in found:
        made = _returned_by(conflict, handed)
        if made:
            read.setdefault(made, set()).add(conflict.earlier.path.root.site)
    made_at: dict = {}  # the returned allocation -> every call of the module's walks that makes it
    for (qualname, _), walked in solved.walks.items():
        for effect in walked.summary.effects if qualname.startswith(name + ".") else ():
            root = effect.path.root if effect.kind is EffectKind.ACCESS and effect.path is not None else None
            if root is not None and root.kind is RootKind.FRESH and root.site.partition(">")[2] in read:
                made_at.setdefault(root.site.partition(">")[2], set()).add(root.site)
    agreed = {made for made, calls in read.items() if made_at.get(made, set()) <= calls}
    kept, placed = [], set()
    for qualname, conflict in found:
        made = _returned_by(conflict, handed)
        if made in agreed and made not in placed:
            placed.add(made)
            function, hand_out = handed[made]
            kept.append((function, at_boundary(function, hand_out)))
        elif made not in agreed and not _read_in_a_caller(conflict, agreed):
            kept.append((qualname, conflict))
    return kept


def _read_in_a_caller(conflict, agreed: set) -> bool:
    """The same read seen from a caller of the caller (the read made in a callee): placed already."""
    if isinstance(conflict, Hazard) or not conflict.later.chain or conflict.earlier.path.root.kind is not RootKind.FRESH:
        return False
    return any(conflict.earlier.path.root.site.endswith(">" + made) for made in agreed)


def _returned_by(conflict, handed: dict) -> str:
    """The allocation a callee returned in flight (a key of `handed`) that this conflict's reader reads; ""."""
    if isinstance(conflict, Hazard) or conflict.kind is not ConflictKind.READ_AFTER_WRITE:
        return ""
    root = conflict.earlier.path.root
    made = root.site.partition(">")[2] if root.kind is RootKind.FRESH else ""
    return made if made in handed else ""


def _the_callers(conflict, qualname: str, solver: Solver) -> bool:
    """A parameter's entry assumption met by the function's own access where callers of the module
    call it: their walks apply its summary to what they really did before the call."""
    return conflict.earlier.assumed and conflict.earlier.path.root.kind is RootKind.PARAM and qualname in solver.called_here


def _at_misdirected_wait(qualname: str, conflict, solved: Solved, waits: dict):
    """A stream that reads what the current stream at entry wrote after waiting on the default stream
    instead, or what another stream wrote after that stream waited for itself (`current_stream().wait_stream(s)`
    inside `with stream(s)`: it orders nothing): the wait names the wrong stream and is where the fix goes.
    `waits`: each summary's `_LegacyWaits`, kept across the conflicts of one file."""
    if conflict.kind not in (ConflictKind.READ_AFTER_WRITE, ConflictKind.WRITE_AFTER_WRITE):
        return conflict
    if conflict.later.stream == HOST or conflict.later.stream == conflict.earlier.stream:
        return conflict
    for walked in solved.walks_of(qualname):
        kept = waits.get(id(walked))
        if kept is None or kept[0] is not walked:
            kept = waits[id(walked)] = (walked, _LegacyWaits(walked.effects))
        wait = kept[1].before(conflict.later) if conflict.earlier.stream.kind is StreamRefKind.AMBIENT \
            else kept[1].self_wait_between(conflict.earlier, conflict.later)
        if wait is not None:
            return at_wait(qualname, conflict, wait.site, wait.other, wait.stream)
    return conflict


# Conflicts whose later access writes what the earlier one used (a refill): SL402's.
_OVERWRITES = (ConflictKind.WRITE_AFTER_READ, ConflictKind.WRITE_AFTER_WRITE)


def _at_one_way_fork(qualname: str, conflict, solved: Solved):
    """The current stream overwriting what a side stream uses, where a callee forked the side stream
    off it and never joined back: the missing join belongs at the callee's fork."""
    if isinstance(conflict, Hazard) or conflict.kind not in _OVERWRITES or conflict.later.stream.kind is not StreamRefKind.AMBIENT:
        return conflict
    side, origin = conflict.earlier.stream, conflict.later.stream
    for walked in solved.walks_of(qualname):
        fork = _fork_of(walked, side, origin)
        if fork is not None and fork.site.partition("#")[0] != qualname and _fork_of(walked, origin, side) is None:
            return at_fork(fork.site.partition("#")[0], conflict, fork.site)
    return conflict


class _LegacyWaits:
    """Where each site's first access is, and each stream's waits on the legacy default stream in
    order: one pass over a summary's effects for every conflict of its walk."""

    def __init__(self, effects: tuple) -> None:
        self.first: dict[str, int] = {}
        self.waits: dict = {}  # stream -> ([index], [wait effect])
        self.self_waits: dict = {}  # stream -> [(index, wait effect)] of the stream waiting for itself
        self.count = len(effects)
        for index, effect in enumerate(effects):
            if effect.kind is EffectKind.ACCESS:
                self.first.setdefault(effect.site, index)
            elif effect.kind is EffectKind.WAIT_STREAM and effect.other is not None \
                    and effect.other.kind is StreamRefKind.LEGACY:
                indexes, found = self.waits.setdefault(effect.stream, ([], []))
                indexes.append(index)
                found.append(effect)
            elif effect.kind is EffectKind.WAIT_STREAM and effect.other == effect.stream and not effect.chain:
                self.self_waits.setdefault(effect.stream, []).append((index, effect))

    def self_wait_between(self, earlier, later) -> Optional[object]:
        """A wait of `earlier`'s stream for itself after `earlier` and before `later` (the first), or None."""
        start = self.first.get(earlier.chain[0] if earlier.chain else earlier.site)
        end = self.first.get(later.chain[0] if later.chain else later.site, self.count) \
            if start is not None else None  # (a hand-out's reader comes after all the walk's work)
        if start is None:
            return None
        return next((wait for index, wait in self.self_waits.get(earlier.stream, ()) if start < index < end), None)

    def before(self, later) -> Optional[object]:
        """The last wait of `later`'s stream on the legacy default stream before `later`, or None."""
        at = self.first.get(later.chain[0] if later.chain else later.site)
        indexes, found = self.waits.get(later.stream, ((), ()))
        count = bisect_left(indexes, at) if at is not None else 0
        return found[count - 1] if count else None


def _kept(conflict) -> bool:
    """Memory the object keeps, handed out unrecorded: a later call of the class releases it,
    whoever calls; so does a generator's next allocation on the stream it made and keeps across its yields."""
    return conflict.kind is ConflictKind.RELEASE_WITHOUT_RECORD and (
        conflict.later.path.root.kind is RootKind.SELF or conflict.later.stream.kind is StreamRefKind.CREATED)


def _callers_record(solved: Solved, qualname: str) -> bool:
    """A caller in sight of `qualname` records the stream's use itself (`record_stream` after the
    call): silence over guessing which hand-out it records."""
    own = qualname + "#"
    for (caller, _), walked in solved.walks.items():
        effects = walked.effects
        if caller != qualname and any(e.site.startswith(own) for e in effects) \
                and any(e.kind is EffectKind.RECORD_STREAM and not e.chain for e in effects):
            return True
    return False


def _reallocates_after_callers(solved: Solved, qualname: str, conflict) -> bool:
    """Memory handed out that a stream `self` keeps made, where a method of the class makes that
    stream wait for the current stream: its next allocation is ordered after the callers' work."""
    if conflict.kind is not ConflictKind.RELEASE_WITHOUT_RECORD:
        return False
    side, cls = conflict.later.stream, qualname.rsplit(".", 1)[0] + "."
    for (other, _), walked in solved.walks.items():
        if other.startswith(cls) and any(e.kind is EffectKind.WAIT_STREAM and e.stream == side
                                         and e.other is not None and e.other.kind is StreamRefKind.AMBIENT
                                         for e in walked.effects):
            return True
    return False


def _as_entered(context) -> bool:
    """The context a function no caller in sight calls is walked in (receiver state and hot entry apart)."""
    return entered_bare(replace(context, receiver_pending=(), hot=""))


def _next_calls(solver: Solver, solved: Solved, name: str) -> list:
    """A public method of a class that keeps a stream, called again: the last call's pending work on
    `self` meets this call's."""
    found = []
    for (qualname, context), walked in solved.at_boundary():
        method = qualname.rsplit(".", 1)[-1]
        if not qualname.startswith(name + ".") or method.startswith("_") or not context.receiver_state:
            continue
        if context.args or not _keeps_async_work(context.receiver_state, walked):
            continue
        # of several pairs at one missing join, the overwrite of what the last call still reads
        # (the method's own two calls: its walk's effects, not the summary its callers get, D-32)
        own = replace(walked.summary, effects=walked.effects) if walked.summary.truncated else walked.summary
        conflicts = sorted(next_call_conflicts(own, context.receiver_state),
                           key=lambda c: c.kind is not ConflictKind.WRITE_AFTER_READ)
        for conflict in conflicts:
            later = replace(conflict.later, chain=conflict.later.chain[1:])
            earlier = replace(conflict.earlier, chain=conflict.earlier.chain[1:])
            found.append((qualname, _placed_across_calls(qualname, replace(conflict, later=later, earlier=earlier),
                                                         own)))
    return found


def _keeps_async_work(receiver_state: tuple, walked) -> bool:
    """The intent gate: a class that keeps a stream, or leaves a copy of its own host memory in flight."""
    if any(v.kind is ValueKind.STREAM for _, v in receiver_state):
        return True
    return any(e.host_memory and e.stream != HOST and e.path is not None and e.path.root.kind is RootKind.SELF
               for e in walked.effects)


def _placed_across_calls(function: str, conflict, summary) -> Hazard:
    """The host refilling what the last call's copy may still read: at that copy (where the wait
    goes); a side stream forked and never joined back: at the fork; others as within a call."""
    if conflict.kind is ConflictKind.HOST_WRITE_BEFORE_SYNC:
        hazard = place(function, conflict)
        return replace(hazard, site=hazard.earlier_site)
    fork = _fork_of(summary, conflict.earlier.stream, conflict.later.stream)
    if fork is not None and conflict.later.stream.kind is StreamRefKind.AMBIENT:
        return at_fork(fork.site.partition("#")[0], conflict, fork.site)
    return place(function, conflict)


def _fork_of(summary, side, origin):
    """The last wait in `summary` (or a walk) of stream `side` for stream `origin` (None: it never forked)."""
    forks = [e for e in summary.effects if e.kind is EffectKind.WAIT_STREAM and e.stream == side and e.other == origin]
    return forks[-1] if forks else None


def _the_callees(hazard: Hazard, module: str) -> bool:
    """A callee of another module queued one side on its caller's current stream though the call
    handed it the other side's stream: the callee's problem (CallContext.work_stream), not the caller's."""
    later, earlier = hazard.later, hazard.earlier
    for mine, other in ((later, earlier), (earlier, later)):
        if other.stream in mine.handed and not _made_in(mine, module):
            return True
    if any(not f.startswith(module + ".") for f in _called_around_both(earlier, later)):
        return True  # both accesses in one call of another module's function, at any depth: its module's own (row 11.21)
    # a host reader (MPI) in a callee of another module, of device memory the caller wrote before
    # the call: the callee's check reports it against its entry assumption, for any stream (the
    # host waits for none: D-27 (2), row 11.20), not each caller again
    return (later.stream == HOST and not later.host_memory and not later.write and earlier.write
            and not _made_in(later, module) and _made_in(earlier, module))


def _called_around_both(a, b) -> list[str]:
    """The functions whose one call both accesses are made in, outermost first (their chains' common calls)."""
    found = []
    for depth in range(1, min(len(a.chain), len(b.chain)) + 1):
        if a.chain[depth - 1] != b.chain[depth - 1]:
            break
        inside = {(x.chain[depth] if depth < len(x.chain) else x.site).partition("#")[0] for x in (a, b)}
        if len(inside) != 1:
            break
        found.extend(inside)
    return found


def _callee(access) -> str:
    return (access.chain[1] if len(access.chain) > 1 else access.site).partition("#")[0]


def _made_in(access, module: str) -> bool:
    """The callee the call handed the stream to is of `module`."""
    return _callee(access).startswith(module + ".")


def _callees(hazard: Hazard, pairs: set) -> bool:
    """Both accesses made by one callee that reports the same pair itself (not again at each call)."""
    earlier, later = hazard.earlier, hazard.later
    if not (earlier.chain and later.chain and earlier.chain[0] == later.chain[0]):
        return False
    return (hazard.kind, earlier.site, earlier.chain[1:], later.site, later.chain[1:]) in pairs


def _pair(hazard: Hazard) -> tuple:
    """The two operations that race, wherever the finding is placed: one problem."""
    earlier, later = hazard.earlier, hazard.later
    return (hazard.kind, earlier.site, earlier.chain, later.site, later.chain)


def _problem(hazard: Hazard) -> tuple:
    """One finding per problem: a release per allocation, a missing join per fork, a hand-out per
    memory, others per racing access."""
    if hazard.kind is ConflictKind.RELEASE_WITHOUT_RECORD:
        # (an allocation by its site; memory kept on `self` or reached through a parameter by its path:
        # a prefetcher's `self.next_input` and `self.next_target` are two)
        root = hazard.later.path.root
        return (hazard.kind, hazard.function, root.site if root.kind is RootKind.FRESH else hazard.later.path)
    if hazard.placement is Placement.AT_FORK:
        return (hazard.placement, hazard.site)
    if hazard.placement is Placement.AT_BOUNDARY:
        return (hazard.kind, hazard.function, hazard.later.path)
    return (hazard.kind, *shown_place(hazard))
