"""Hazards with typed provenance, and where each is reported (the placement policy).

A conflict found in a walk is reported in that walk's function, at the later access's
place in it: the access itself when the function made it, else the call through which it
came (`chain[0]`), so a finding is always on a line of the function that shows both sides.
The call chain below that place is kept as provenance for the message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Optional

from streamlint.model.domain.order import AccessEvent, Conflict, ConflictKind
from streamlint.model.domain.streams import StreamRef


class Placement(Enum):
    AT_ACCESS = "at_access"  # the later access is in the reporting function
    AT_CALL = "at_call"  # the later access happened in a callee: reported at the call
    # a release racing an access of another stream: reported at that access, where the
    # allocator must be told of the stream (`record_stream`) or the memory kept alive
    AT_RACING_USE = "at_racing_use"
    # memory returned while another stream may still write it, by a function no caller in sight
    # calls: reported at the return, where the reader is out of sight
    AT_BOUNDARY = "at_boundary"
    # a side stream forked off a stream (it waited for it) and never joined back, whose work the
    # next call of a public method meets: reported at the fork, where the missing join belongs
    AT_FORK = "at_fork"
    # a join that names another stream than the one whose work the caller's current stream must
    # follow (the current stream waits for one side stream while the function's writes on another
    # stay unordered at its end): reported at that wait, where the right stream belongs
    AT_WAIT = "at_wait"


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


def shown_at(access: AccessEvent) -> str:
    return access.chain[0] if access.chain else access.site


def place(function: str, conflict: Conflict) -> Hazard:
    later, earlier = conflict.later, conflict.earlier
    if conflict.kind is ConflictKind.RELEASE_WITHOUT_RECORD:
        return Hazard(conflict.kind, function, shown_at(earlier), Placement.AT_RACING_USE, later, earlier, shown_at(earlier),
                  behind=conflict.behind)
    placement = Placement.AT_CALL if later.chain else Placement.AT_ACCESS
    return Hazard(conflict.kind, function, shown_at(later), placement, later, earlier, shown_at(earlier),
                  behind=conflict.behind)


def at_boundary(function: str, conflict: Conflict) -> Hazard:
    """At the return; memory handed out to be released by its readers, where the function took
    hold of it (the earlier access stands for the readers' use)."""
    later, earlier = conflict.later, conflict.earlier
    site = shown_at(earlier) if conflict.kind is ConflictKind.RELEASE_WITHOUT_RECORD else later.site
    return Hazard(conflict.kind, function, site, Placement.AT_BOUNDARY, later, earlier, shown_at(earlier),
                  behind=conflict.behind)


def at_fork(function: str, conflict: Conflict, fork_site: str) -> Hazard:
    later, earlier = conflict.later, conflict.earlier
    return Hazard(conflict.kind, function, fork_site, Placement.AT_FORK, later, earlier, shown_at(earlier),
                  behind=conflict.behind)


def at_wait(function: str, conflict: Conflict, wait_site: str, waited: StreamRef, waiter: StreamRef) -> Hazard:
    later, earlier = conflict.later, conflict.earlier
    return Hazard(conflict.kind, function, wait_site, Placement.AT_WAIT, later, earlier, shown_at(earlier), waited,
                  waiter)
