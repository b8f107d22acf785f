"""The API operations of a function as its summary records them (its own and its callees',
placed at its own call sites), with whether each runs on every iteration of a loop there."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

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
