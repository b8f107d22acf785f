"""The receiver state a class's methods start from: what its methods store on `self`,
restated in `self`'s own terms (a buffer is the memory at `self.<attr>`, a stream the class
made is the stream at `self.<attr>`, made for the program's own work)."""

from __future__ import annotations

from dataclasses import replace

from streamlint.model.domain.paths import Path, Root, RootKind
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.values import AbsValue, ValueKind


def as_receiver_state(stores: tuple[tuple[str, AbsValue], ...]) -> tuple[tuple[str, AbsValue], ...]:
    return tuple((attr, _at_self(attr, value)) for attr, value in stores if attr)


def _at_self(attr: str, value: AbsValue) -> AbsValue:
    here = Path(Root.self_()).attr(attr)
    stream = value.stream
    if stream is not None and stream.kind is StreamRefKind.CREATED:
        stream = StreamRef(StreamRefKind.PATH, stream.framework, here, stream.site, stream.blocking, True)
    if value.kind is ValueKind.STREAM:
        return replace(value, stream=stream, identity=None)
    if value.kind in (ValueKind.BUFFER, ValueKind.EVENT, ValueKind.OBJECT):
        owned = value.identity is not None and value.identity.root.kind is not RootKind.SELF
        return replace(value, identity=here if owned or value.identity is None else value.identity, stream=stream)
    return replace(value, identity=here)


def join_stores(a: tuple, b: tuple) -> tuple:
    merged = dict(a)
    for attr, value in b:
        merged[attr] = merged[attr].join(value) if attr in merged else value
    return tuple(sorted(merged.items()))


def as_global(name: str, value: AbsValue) -> AbsValue:
    """A module-level name's value as functions see it: its memory is the global's."""
    if value.kind in (ValueKind.BUFFER, ValueKind.EVENT, ValueKind.OBJECT):
        return replace(value, identity=Path(Root.global_(name)))
    return value
