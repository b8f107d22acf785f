"""Where a blocking upload repeats on a hot path, in words (SL201, SL302), and where a copy's wait costs at all
(SL102, SL301)."""

from __future__ import annotations

from typing import Callable, Iterator, Optional

import libcst as cst

from streamlint.model.readings.hot_paths import (
    Work,
    calling_loops,
    read_just_before,
    repeating_loops,
    waited_later_in_pass,
    work_in,
)
from streamlint.model.readings.hot_paths import own_operations as hot_operations
from streamlint.model.readings.operations import chosen
from streamlint.model.summary.effects import Operation
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.model.syntax.invariants import bound_in, copied_root, unchanged_in
from streamlint.model.syntax.sync_purpose import SyncPurposes, comprehension_of
from streamlint.rules._shared import calling_loop_named, hot_entry_name, start_of


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


def hot_blocking_uploads(analysis, model, wanted: Callable[[Operation], bool], skipped: set[str],
                         drain_only: bool = False) -> Iterator[tuple]:
    """(operation, call, where) of each upload `wanted` picks that repeats on a hot path (`upload_hot_where`), once
    per site not in `skipped`; not one in a pass that goes on to a host read it needs (that read waits for all the
    upload waits for). `drain_only`: an upload whose cost is its wait for the stream to drain (a small tensor built on the host),
    not its own transfer, is not reported right after a wait that drained the stream (row 7.82)."""
    ancestry = Ancestry(analysis.module)
    purposes = SyncPurposes(ancestry)
    operations = hot_operations(model)
    for own in operations:
        if own.site in skipped or not wanted(own.operation):
            continue
        call = model.node_of(own.site)
        where = upload_hot_where(analysis, model, ancestry, own, call) if isinstance(call, (cst.Call, cst.Subscript)) else None
        if where is None:
            continue
        loops = ancestry.loops_around(call)
        if loops and waited_later_in_pass(model, ancestry, purposes, operations, own, call, loops[-1],
                                          start_of(analysis)):
            continue
        if drain_only and read_just_before(model, ancestry, operations, own, call, start_of(analysis), uploads=True):
            continue  # (a wait just before it drained the stream: this upload waits for nothing more)
        skipped.add(own.site)
        yield own, call, where


def copy_cost_at_stake(model, ancestry: Ancestry, at, call: cst.Call) -> bool:
    """Where a staged or implicit copy costs something (the placement policy): on a stream the code chose for it (it asked for
    overlap there), or on a hot path (every pass of a loop that repeats it, every call of a hot entry, every pass of
    a loop of a caller in sight). A one-off copy on the current stream (set-up, a helper nothing in sight calls
    repeatedly) waits once: nothing to overlap."""
    if chosen(at.stream) or at.entry:
        return True
    if ancestry.loops_around(call):
        return bool(repeating_loops(model, at.function, call, ancestry))
    return bool(calling_loops(model, at, ancestry, Work.QUEUED))


def reuploaded_source(ancestry: Ancestry, call: cst.CSTNode, where: str) -> Optional[str]:
    """The name an upload on every pass of its loop copies from (`batch["rgb"][idx].to(dev)`), where the loop only
    reads that name: the same data, or parts of it, moved again every pass (SL201's), not a new batch the loop takes
    (SL302's). None otherwise."""
    loops = ancestry.loops_around(call)
    if where != "on every iteration" or not loops or not isinstance(call, cst.Call) \
            or not isinstance(call.func, cst.Attribute):
        return None
    root = copied_root(call.func.value)
    function = next((a for a in ancestry.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
    # (a name of the function's own: a parameter or a local, not a module the expression calls into)
    if root is None or function is None or not bound_in(root.value, function):
        return None
    return root.value if unchanged_in(root.value, loops[-1]) else None
