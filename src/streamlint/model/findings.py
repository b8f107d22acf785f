"""Hazards with typed provenance, and where each is reported: on a line of the function that shows both sides."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Optional

from streamlint.model.domain.order import AccessEvent, Conflict, ConflictKind
from streamlint.model.domain.streams import StreamRef


class Placement(Enum):
    AT_ACCESS = "at_access"  # the later access is in the reporting function
    AT_CALL = "at_call"  # the later access happened in a callee: reported at the call
    AT_RACING_USE = "at_racing_use"  # a release racing another stream's access: at that access (record_stream)
    AT_BOUNDARY = "at_boundary"  # memory returned with another stream's write pending, no caller in sight
    AT_FORK = "at_fork"  # a side stream forked and never joined back: at the fork, where the join belongs
    AT_WAIT = "at_wait"  # a join that names the wrong stream: at that wait


@dataclass(frozen=True)
class Hazard:
    kind: ConflictKind
    function: str  # qualified name of the function where it is reported
    site: str  # the site it is reported at (in `function`)
    placement: Placement
    later: AccessEvent
    earlier: AccessEvent
    earlier_site: str  # where the earlier access shows in `function` (its call, or itself)
    waited: Optional[StreamRef] = None  # AT_WAIT: the stream the misdirected wait waited on
    waiter: Optional[StreamRef] = None  # AT_WAIT: the stream that waited
    # how many accesses to the memory were queued after the earlier one (Conflict.behind): of two
    # hazards of one problem, the one with the latest earlier access names it
    behind: int = field(default=0, compare=False)


def shown_place(hazard: Hazard) -> tuple:
    """Where one problem shows: its site; at a call, its site and the callee's stream (each stream lacks its own wait,
    a callee reading on two streams is two problems there)."""
    return (hazard.site, hazard.later.stream) if hazard.placement is Placement.AT_CALL else (hazard.site,)


def shown_at(access: AccessEvent) -> str:
    return access.chain[0] if access.chain else access.site


def _placed(function: str, conflict: Conflict, site: str, placement: Placement, **extra) -> Hazard:
    return Hazard(conflict.kind, function, site, placement, conflict.later, conflict.earlier,
                  shown_at(conflict.earlier), **extra)


def place(function: str, conflict: Conflict) -> Hazard:
    if conflict.kind is ConflictKind.RELEASE_WITHOUT_RECORD:
        return _placed(function, conflict, shown_at(conflict.earlier), Placement.AT_RACING_USE, behind=conflict.behind)
    placement = Placement.AT_CALL if conflict.later.chain else Placement.AT_ACCESS
    return _placed(function, conflict, shown_at(conflict.later), placement, behind=conflict.behind)


def at_boundary(function: str, conflict: Conflict) -> Hazard:
    """At the return; memory handed out to be released by its readers, where the function took hold of it."""
    release = conflict.kind is ConflictKind.RELEASE_WITHOUT_RECORD
    site = shown_at(conflict.earlier) if release else conflict.later.site
    return _placed(function, conflict, site, Placement.AT_BOUNDARY, behind=conflict.behind)


def at_fork(function: str, conflict: Conflict, fork_site: str) -> Hazard:
    return _placed(function, conflict, fork_site, Placement.AT_FORK)


def at_wait(function: str, conflict: Conflict, wait_site: str, waited: StreamRef, waiter: StreamRef) -> Hazard:
    return _placed(function, conflict, wait_site, Placement.AT_WAIT, waited=waited, waiter=waiter)
