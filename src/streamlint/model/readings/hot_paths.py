"""Is an operation on a hot path: a loop of its function that queues GPU work every pass, or a hot
entry (a `forward`, an optimizer's `step`) reaching its function every call (the context's hot
dimension); read off the summaries' effects and contexts, no walking here."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator, Optional

import libcst as cst

from streamlint.model.domain.order import HOST
from streamlint.model.domain.streams import StreamRef
from streamlint.model.domain.values import UNKNOWN
from streamlint.model.file_model import FileModel
from streamlint.model.findings import shown_at
from streamlint.model.api.op_kinds import OpKind
from streamlint.model.summary.effects import Effect, EffectKind, Operation
from streamlint.model.syntax.ancestry import Ancestry

# Operations that make a loop's passes GPU work (creations and allocations alone make a set-up loop).
_WORK_OPS = frozenset(k.value for k in (
    OpKind.COPY_H2D, OpKind.COPY_D2H, OpKind.COPY_D2D, OpKind.COPY, OpKind.KERNEL, OpKind.MEMSET,
    OpKind.STREAM_SYNC, OpKind.EVENT_SYNC, OpKind.DEVICE_SYNC, OpKind.IMPLICIT_SYNC, OpKind.EVENT_RECORD,
    OpKind.WAIT_STREAM, OpKind.STREAM_WAIT_EVENT,
))
_WORK_EFFECTS = frozenset({EffectKind.WAIT_STREAM, EffectKind.RECORD_EVENT, EffectKind.WAIT_EVENT,
                           EffectKind.SYNC_STREAM, EffectKind.SYNC_EVENT, EffectKind.SYNC_DEVICE,
                           EffectKind.LAUNCH_GRAPH})


@dataclass(frozen=True)
class OwnOperation:
    """An operation a function performs itself (not through a call), once whatever the context."""

    function: str  # its qualified name in the file ("f", "C.m")
    site: str
    operation: Operation
    stream: Optional[StreamRef]
    entry: str  # the hot entry that reaches the function on every call ("C.forward"), "" when none
    framework: str = ""  # whose array it reads, when the operation is no framework call (`if t:`, `int(t)`)
    first_pass: bool = False  # of its loop's first pass only (Effect.first_pass)


def own_operations(model: FileModel) -> list[OwnOperation]:
    """Every function's own operations, once each, in the order of the walks, with its hot entry."""
    found: dict[tuple, OwnOperation] = {}
    entries = _entries(model)
    prefix = model.module + "."
    # (the reported walks: one made under one caller's facts while callers are searched is no context)
    for (qualname, _), walked in sorted(model.solved.reported(), key=_informed_first):
        if not qualname.startswith(prefix):
            continue
        name = qualname[len(prefix):]
        for effect in walked.summary.effects:
            if effect.kind is EffectKind.OPERATION and effect.operation is not None and not effect.chain:
                key = (effect.site, effect.operation.api, effect.operation.op)
                if key not in found:
                    found[key] = OwnOperation(name, effect.site, effect.operation, effect.stream,
                                              entries.get(qualname, ""), effect.framework, effect.first_pass)
                elif effect.first_pass and not found[key].first_pass:
                    # the upload of a loop's first pass (later rounds see its source built before the loop)
                    found[key] = replace(found[key], first_pass=True)
    return list(found.values())


# The receiver state of a method's bare walks (the solver's first round, before the class's stores are known).
_BARE = (("", UNKNOWN),)


def _informed_first(item) -> bool:
    """A method's walks from its class's stores first: what `self.<attr>` holds decides its stream."""
    (_, context), _ = item
    return context.receiver_state in ((), _BARE)


def _entries(model: FileModel) -> dict[str, str]:
    entries: dict[str, str] = {}
    for (qualname, context), _ in model.solved.walks.items():
        if context.hot and (qualname not in entries or context.hot < entries[qualname]):
            entries[qualname] = context.hot
    return entries


def hot_entry_name(entry: str, function: str) -> str:
    """The entry as a message names it: `forward` for the entry itself, `Block.forward` for a helper's."""
    return entry.rsplit(".", 1)[-1] if entry == function else entry


def queues_work(model: FileModel, function: str, loop: cst.CSTNode, ancestry: Ancestry) -> bool:
    """Does the loop (a statement of `function`) queue GPU work or wait for it on every pass:
    kernels, copies, event records, waits and synchronizations, its callees' included?"""
    return any(_is_work(e) and _inside(model, e, loop, ancestry) for e in _effects_of(model, function))


def _effects_of(model: FileModel, function: str) -> Iterator[Effect]:
    qualname = f"{model.module}.{function}"
    for (name, _), walked in model.solved.walks.items():
        if name == qualname:
            yield from walked.summary.effects


def _inside(model: FileModel, effect: Effect, within: cst.CSTNode, ancestry: Ancestry) -> bool:
    """Does the effect show (itself, or the call it came through) inside `within`?"""
    node = model.node_of(shown_at(effect))
    return node is not None and ancestry.inside(node, within)


def _is_work(effect: Effect) -> bool:
    if effect.kind is EffectKind.OPERATION:
        return effect.operation is not None and effect.operation.op in _WORK_OPS
    if effect.kind is EffectKind.ACCESS:
        return effect.stream is not None and effect.stream != HOST and effect.stream.known
    return effect.kind in _WORK_EFFECTS


# Work queued on a stream (what a loop's syncs stall): kernels, fills, uploads, device copies.
_QUEUED_OPS = frozenset(k.value for k in (OpKind.KERNEL, OpKind.MEMSET, OpKind.COPY_H2D, OpKind.COPY_D2D))
# Orderings queued on a stream (a stream's wait, an event record).
_QUEUED_ORDERING = frozenset({EffectKind.WAIT_STREAM, EffectKind.WAIT_EVENT, EffectKind.RECORD_EVENT})
# Operations whose stream accesses are reads back or waits, not queued work.
_READ_BACK_OPS = frozenset(k.value for k in (OpKind.COPY_D2H, OpKind.IMPLICIT_SYNC, OpKind.COPY))


def queues_work_each_pass(model: FileModel, function: str, within: cst.CSTNode, ancestry: Ancestry,
                          stream_waits: bool = False) -> bool:
    """Does `within` (a loop, a comprehension) queue kernels, fills, uploads or device copies, its
    callees' included (not reads back or waits; with `stream_waits`, stream waits and records too)?"""
    effects = list(_effects_of(model, function))
    read_backs = {e.site for e in effects if e.kind is EffectKind.OPERATION and e.operation is not None
                  and e.operation.op in _READ_BACK_OPS}
    for effect in effects:
        if effect.kind is EffectKind.OPERATION:
            queued = effect.operation is not None and effect.operation.op in _QUEUED_OPS
        elif effect.kind in _QUEUED_ORDERING:
            queued = stream_waits
        else:
            queued = (effect.kind is EffectKind.ACCESS and effect.stream is not None and effect.stream != HOST
                      and effect.stream.known and effect.site not in read_backs and not effect.host_memory)
        if queued and _inside(model, effect, within, ancestry):
            return True
    return False


def uploads_in(model: FileModel, function: str, loop: cst.CSTNode, ancestry: Ancestry) -> bool:
    """Does the loop upload data on every pass (a host-to-device copy)?"""
    return any(e.kind is EffectKind.OPERATION and e.operation is not None and e.operation.op == OpKind.COPY_H2D.value
               and _inside(model, e, loop, ancestry) for e in _effects_of(model, function))
