"""Where a blocking upload repeats on a hot path, in words (SL201, SL302)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.readings.hot_paths import Work, calling_loops, repeating_loops, work_in
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.model.syntax.sync_purpose import comprehension_of
from streamlint.rules._shared import calling_loop_named, hot_entry_name


def upload_hot_where(analysis, model, ancestry: Ancestry, own, node: cst.CSTNode) -> Optional[str]:
    """"on every iteration" in a loop that queues GPU work on every pass, "on every call of
    `forward`" on every call of a hot entry; where the loop's later passes find the tensor on the
    GPU (the body carries device memory to the next pass), once per call of the function, on the
    loop's first pass; None off the hot path, only sometimes, or once per element of a comprehension."""
    if own.operation.conditional or comprehension_of(node, ancestry) is not None:
        return None
    loops = ancestry.loops_around(node)
    if own.entry and not loops:
        return f"on every call of `{hot_entry_name(own.entry, own.function)}`"
    if not loops and not own.entry:
        named = calling_loop_named(analysis, calling_loops(model, own, ancestry, Work.QUEUED))
        return f"on every {named}" if named else None
    loops = repeating_loops(model, own.function, node, ancestry)
    if not loops or not (own.entry or work_in(model, own.function, loops[-1], ancestry, Work.QUEUED)):
        return None
    if own.first_pass:
        caller = hot_entry_name(own.entry, own.function) if own.entry else own.function
        return f"once per call of `{caller}`, on the loop's first pass (later passes find it on the GPU)"
    return "on every iteration"
