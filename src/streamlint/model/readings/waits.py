"""Waits that order nothing: a stream made to wait for itself (`current_stream().wait_stream(s)` inside
`with stream(s)`), read off the summaries' effects."""

from __future__ import annotations

from dataclasses import dataclass

from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.file_model import FileModel
from streamlint.model.summary.effects import EffectKind


# Streams the program made or holds (a current stream waiting for itself may be code generic over the stream: silent).
_MADE = (StreamRefKind.CREATED, StreamRefKind.PATH)


@dataclass(frozen=True)
class SelfWait:
    function: str  # its function's qualified name in the file ("f", "C.m")
    site: str  # the wait's own site
    stream: StreamRef  # the stream that waits for itself


def self_waits(model: FileModel) -> list[SelfWait]:
    """The function's own waits of a stream for itself, where every reported walk that makes the wait makes it so (a
    stream a caller may hand in as the current one waits for itself only in that caller's walk: not this)."""
    always: dict[tuple[str, str], bool] = {}
    streams: dict[tuple[str, str], StreamRef] = {}
    prefix = model.module + "."
    for (qualname, _), walked in model.solved.reported():
        if not qualname.startswith(prefix):
            continue
        for effect in walked.effects:
            if effect.kind is not EffectKind.WAIT_STREAM or effect.chain or effect.other is None:
                continue
            key = (qualname[len(prefix):], effect.site)
            itself = effect.other == effect.stream and effect.stream.kind in _MADE
            always[key] = always.get(key, True) and itself
            streams.setdefault(key, effect.stream)
    return [SelfWait(function, site, streams[(function, site)]) for (function, site), kept in always.items() if kept]
