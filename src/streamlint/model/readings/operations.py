"""The API operations of a function as its summary records them (its own and its callees',
placed at its own call sites), with whether each runs on every iteration of a loop there."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from streamlint.model.domain.order import HOST
from streamlint.model.domain.paths import RootKind
from streamlint.model.domain.streams import StreamRef
from streamlint.model.file_model import FileModel
from streamlint.model.summary.effects import EffectKind, Operation
from streamlint.model.transfer.frame import ROOT_CONTEXT, CallContext


@dataclass(frozen=True)
class OperationAt:
    site: str  # where it shows in the function: the operation, or the call it came through
    operation: Operation
    stream: Optional[StreamRef]
    chain: tuple[str, ...]  # the calls it came through, outermost first
    hot: bool = False  # the function runs on every step of a hot path (its summary says so)
    reads: frozenset = frozenset()  # the memory (Paths) its own accesses at its site read
    context: CallContext = ROOT_CONTEXT  # the calling context of the walk that saw it

    def reads_made_at(self, site: str) -> bool:
        """Does it read memory allocated at `site` (this iteration's)?"""
        return any(p.root.kind is RootKind.FRESH and p.root.site == site and not p.root.age for p in self.reads)

    @property
    def in_loop(self) -> bool:
        return self.operation.in_loop


def operations(model: FileModel, qualname: str) -> list[OperationAt]:
    """`qualname` as written in the file ("f", "C.m"), under any caller (the root context)."""
    walked = model.solved.walks.get((f"{model.module}.{qualname}", ROOT_CONTEXT))
    if walked is None:
        return []
    found = []
    for effect in walked.summary.effects:
        if effect.kind is EffectKind.OPERATION and effect.operation is not None:
            site = effect.chain[0] if effect.chain else effect.site
            found.append(OperationAt(site, effect.operation, effect.stream, effect.chain))
    return found


def own_operations(model: FileModel) -> list[tuple[str, OperationAt]]:
    """Every operation each function of the file performs itself (not through a call it makes),
    under every context it was walked in, the root context first: (function, operation)."""
    prefix = f"{model.module}."
    walks = [(key, w) for key, w in model.solved.walks.items() if key[0].startswith(prefix)]
    found = []
    for (qualname, context), walked in sorted(walks, key=lambda item: item[0][1] != ROOT_CONTEXT):
        summary = walked.summary
        reads: dict[str, set] = {}
        for effect in summary.effects:
            if effect.kind is EffectKind.ACCESS and not effect.write and not effect.chain and effect.path is not None:
                reads.setdefault(effect.site, set()).add(effect.path)
        for effect in summary.effects:
            if effect.kind is EffectKind.OPERATION and effect.operation is not None and not effect.chain:
                at = OperationAt(effect.site, effect.operation, effect.stream, (), summary.hot,
                                 frozenset(reads.get(effect.site, ())), context)
                found.append((qualname, at))
    return found


def host_writes_into(model: FileModel, qualname: str, at: OperationAt) -> list[tuple[str, bool]]:
    """The host's writes into memory the operation reads: (site, comes after it). Writes in its
    own function, and for memory on `self`, by any method of the class (a later call: after)."""
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
        for effect in walked.summary.effects:
            after = after or effect.site == at.site
            if effect.kind is not EffectKind.ACCESS or not effect.write or effect.stream != HOST:
                continue
            path = effect.path
            if path is None or effect.site == at.site or (not same and path.root.kind is not RootKind.SELF):
                continue
            if any(path.may_alias(p) and p.root.kind is path.root.kind for p in sources):
                found.append((effect.chain[0] if effect.chain else effect.site, after))
    return found


def leaves_unordered(model: FileModel, qualname: str, at: OperationAt) -> bool:
    """Nothing after the operation in its function orders its stream: no stream waits for it,
    no event is recorded on it, the host does not wait for it."""
    stream = at.stream
    walked = model.solved.walks.get((qualname, at.context))
    if stream is None or walked is None:
        return False
    after = False
    for effect in walked.summary.effects:
        if effect.site == at.site and effect.kind is EffectKind.OPERATION:
            after = True
            continue
        if not after:
            continue
        if effect.kind is EffectKind.SYNC_DEVICE or (effect.kind is EffectKind.SYNC_STREAM and effect.stream == stream):
            return False
        if effect.kind is EffectKind.WAIT_STREAM and effect.other in (stream, None):
            return False
        if effect.kind is EffectKind.RECORD_EVENT and effect.stream == stream:
            return False
    return True
