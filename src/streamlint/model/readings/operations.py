"""The API operations of a function as its summary records them (its own and its callees',
placed at its own call sites), with whether each runs on every iteration of a loop there."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from streamlint.model.domain.paths import RootKind
from streamlint.model.domain.streams import StreamRef
from streamlint.model.file_model import FileModel
from streamlint.model.summary.effects import EffectKind, Operation
from streamlint.model.transfer.frame import ROOT_CONTEXT


@dataclass(frozen=True)
class OperationAt:
    site: str  # where it shows in the function: the operation, or the call it came through
    operation: Operation
    stream: Optional[StreamRef]
    chain: tuple[str, ...]  # the calls it came through, outermost first
    hot: bool = False  # the function runs on every step of a hot path (its summary says so)
    reads: frozenset = frozenset()  # the memory (Paths) its own accesses at its site read

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
    for (qualname, _), walked in sorted(walks, key=lambda item: item[0][1] != ROOT_CONTEXT):
        summary = walked.summary
        reads: dict[str, set] = {}
        for effect in summary.effects:
            if effect.kind is EffectKind.ACCESS and not effect.write and not effect.chain and effect.path is not None:
                reads.setdefault(effect.site, set()).add(effect.path)
        for effect in summary.effects:
            if effect.kind is EffectKind.OPERATION and effect.operation is not None and not effect.chain:
                at = OperationAt(effect.site, effect.operation, effect.stream, (), summary.hot,
                                 frozenset(reads.get(effect.site, ())))
                found.append((qualname, at))
    return found
