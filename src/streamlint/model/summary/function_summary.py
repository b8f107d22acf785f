"""`FunctionSummary`: frozen, serialisable, with the digest the cache's early cutoff compares."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Union

from streamlint.model.domain.streams import StreamRef
from streamlint.model.domain.values import UNKNOWN, AbsValue
from streamlint.model.summary.effects import Effect, EffectKind


class Evidence:
    """Tags for what a parameter is, each from a kind of evidence (the design's `evidence`)."""

    CUDA_BUFFER = "cuda_buffer"  # used with a method that exists on CUDA tensors only
    ENTERED = "entered"  # entered as the current stream (`with torch.cuda.stream(p):`): what the caller hands is entered
    HOST_BUFFER = "host_buffer"
    TENSOR = "tensor"  # a tensor, device not told (an in-place kernel on it)
    SELF = "self."  # the key of evidence about an attribute of the receiver ("self.x")


@dataclass(frozen=True)
class FunctionSummary:
    qualname: str
    params: tuple[str, ...]
    effects: tuple[Effect, ...] = ()
    returns: AbsValue = UNKNOWN
    self_stores: tuple[tuple[str, AbsValue], ...] = ()  # what `self.<attr>` holds when it returns
    evidence: tuple[tuple[str, tuple[str, ...]], ...] = ()  # parameter (or "self.<attr>") -> evidence tags
    hot: bool = False  # runs on every step of a hot path (a `forward`, a training step)
    # A generator's current streams where it yields: entered as a context manager, its body runs there
    enters: tuple[tuple[str, StreamRef], ...] = ()
    truncated: bool = False  # accesses were dropped to keep it small (waits and syncs never are)
    # What it leaves on objects its parameters reach (`node.state.x = t`): per attribute, the tensor
    # stored there, on the stream it was made on or else the current one at the store (D-16)
    holder_stores: tuple[tuple[str, AbsValue], ...] = field(default=(), metadata={"omit_default": True})
    # What it keeps in containers its parameters are (`out.append(t)`, `q.put(t)`): per parameter, the items put there,
    # which the caller's container holds after the call
    param_stores: tuple[tuple[str, AbsValue], ...] = field(default=(), metadata={"omit_default": True})
    # What it stores under keys written out in objects its parameters are (`batch["img"] = batch["img"].cuda()`): per
    # parameter and key, what the caller's object holds there after the call
    param_keys: tuple[tuple[str, Union[int, str], AbsValue], ...] = field(default=(), metadata={"omit_default": True})
    digest: str = field(default="", compare=False)  # filled by codec.sealed when asked (it costs a serialisation)


# The budget of one summary: past it, accesses are dropped (which can only remove reports);
# waits and synchronizations are always kept (dropping them could only add reports).
MAX_EFFECTS = 400


# Past this many copies of one operation (the same kind, site, memory and streams) met through different call paths
# and test sides, the rest are one copy under no test: a helper called from everywhere (a timer read, a device sync in
# a garbage-collect helper) would otherwise multiply its copies at every level of the call graph.
MAX_VARIANTS = 16


def bounded(effects: tuple[Effect, ...]) -> tuple[tuple[Effect, ...], bool]:
    effects = _variants_bounded(effects)
    if len(effects) <= MAX_EFFECTS:
        return effects, False
    room = max(0, MAX_EFFECTS - sum(e.kind is not EffectKind.ACCESS for e in effects))
    kept = {id(e) for e in [e for e in effects if e.kind is EffectKind.ACCESS][:room]}
    return tuple(e for e in effects if e.kind is not EffectKind.ACCESS or id(e) in kept), True


def _variants_bounded(effects: tuple[Effect, ...]) -> tuple[Effect, ...]:
    """Each operation, wait or sync kept in at most MAX_VARIANTS copies (path and sides of tests); the copies past
    that are one, under no test (a wait or sync then holds on every path: that can only remove reports)."""
    if len(effects) <= MAX_EFFECTS:
        return effects
    counts: dict = {}
    kept: list[Effect] = []
    for e in effects:
        if e.kind is EffectKind.ACCESS:
            kept.append(e)
            continue
        key = (e.kind, e.site, e.path, e.stream, e.other, e.write, e.operation)
        seen = counts.get(key, 0)
        counts[key] = seen + 1
        if seen < MAX_VARIANTS - 1:
            kept.append(e)
        elif seen == MAX_VARIANTS - 1:
            kept.append(replace(e, branch=()))
    return tuple(kept)
