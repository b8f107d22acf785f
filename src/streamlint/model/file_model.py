"""The v3 model of one file: the program it sees, solved, and its hazards placed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from dataclasses import replace

from streamlint.model.domain.order import HOST, ConflictKind
from streamlint.model.domain.paths import RootKind
from streamlint.model.domain.values import ValueKind
from streamlint.model.interproc.repeat import next_call_conflicts
from streamlint.model.findings import Hazard, at_boundary, place
from streamlint.model.transfer.frame import ROOT_CONTEXT
from streamlint.model.interproc.modules import ProjectModules, main_names
from streamlint.model.interproc.program import Program, unit_of
from streamlint.model.interproc.solver import Solved, Solver


@dataclass
class FileModel:
    module: str
    hazards: list[Hazard]
    solved: Solved
    solver: Solver

    def node_of(self, site: str) -> Optional[cst.CSTNode]:
        return self.solver.node_of(site)


def analyze_file(module: cst.Module, path: str = "") -> FileModel:
    name, package = main_names(path)
    solver = Solver(Program(unit_of(name, module, package), ProjectModules(path)))
    solved = solver.solve_module()
    hazards = []
    seen = set()
    for function, conflict in _all_conflicts(solver, solved, name):
        hazard = conflict if isinstance(conflict, Hazard) else place(function, conflict)
        key = _problem(hazard)
        if key not in seen:
            seen.add(key)
            hazards.append(hazard)
    return FileModel(name, hazards, solved, solver)


def _all_conflicts(solver: Solver, solved: Solved, name: str) -> list:
    """The conflicts the walks saw, then memory handed out unfinished by functions no caller
    in sight calls (their callers' reads are out of sight: the boundary is the place)."""
    found: list = list(solved.conflicts_in(name))
    found.extend(_next_calls(solver, solved, name))
    for (qualname, context), walked in solved.walks.items():
        if not qualname.startswith(name + ".") or qualname in solver.called or context != ROOT_CONTEXT:
            continue
        found.extend((qualname, at_boundary(qualname, c)) for c in walked.handed_out)
    return found


def _next_calls(solver: Solver, solved: Solved, name: str) -> list:
    """A public method of a class that keeps a stream, called again: its pending work on `self`
    from the last call meets this call's (reported at this call's access, in the method)."""
    found = []
    for (qualname, context), walked in solved.walks.items():
        method = qualname.rsplit(".", 1)[-1]
        if not qualname.startswith(name + ".") or method.startswith("_") or not context.receiver_state:
            continue
        if context.args or not _keeps_async_work(context.receiver_state, walked.summary):
            continue
        for conflict in next_call_conflicts(walked.summary, context.receiver_state):
            later = replace(conflict.later, chain=conflict.later.chain[1:])
            earlier = replace(conflict.earlier, chain=conflict.earlier.chain[1:])
            found.append((qualname, _placed_across_calls(qualname, replace(conflict, later=later, earlier=earlier))))
    return found


def _keeps_async_work(receiver_state: tuple, summary) -> bool:
    """The intent gate: a class that keeps a stream, or whose method leaves a copy of its own
    host memory in flight (`self.gpu.copy_(self.pinned, non_blocking=True)`)."""
    if any(v.kind is ValueKind.STREAM for _, v in receiver_state):
        return True
    return any(e.host_memory and e.stream != HOST and e.path is not None and e.path.root.kind is RootKind.SELF
               for e in summary.effects)


def _placed_across_calls(function: str, conflict) -> Hazard:
    """The host refilling what the last call's copy may still read is reported at that copy, the
    one that returns with its read in flight (where the wait goes); other kinds as within a call."""
    if conflict.kind is ConflictKind.HOST_WRITE_BEFORE_SYNC:
        hazard = place(function, conflict)
        return replace(hazard, site=hazard.earlier_site)
    return place(function, conflict)


def _problem(hazard: Hazard) -> tuple:
    """One finding per problem: a release is one problem per allocation and racing access,
    wherever the memory is dropped (rebinding in a loop, return)."""
    if hazard.kind is ConflictKind.RELEASE_WITHOUT_RECORD:
        root = hazard.later.path.root
        return (hazard.kind, hazard.function, root.site)
    return (hazard.kind, hazard.site)  # one report per racing access, whichever earlier access it meets first
