"""The receiver state a class's methods start from: what its methods store on `self`, in `self`'s own terms."""

from __future__ import annotations

from dataclasses import replace

from streamlint.model.domain.paths import Index, Path, Root, RootKind
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.values import (HOST_MADE, ITEMS_ONLY, NO_ITEMS, OF_ARGUMENTS, OPTION, UNBOUND, AbsValue,
                                           HostBuilt, Memory, ValueKind)
from streamlint.model.summary.effects import Effect, EffectKind
from streamlint.model.summary.function_summary import Evidence


def as_receiver_state(stores: tuple[tuple[str, AbsValue], ...], known: tuple = ()) -> tuple[tuple[str, AbsValue], ...]:
    """`stores` in `self`'s terms; `known`: the receiver state the method was walked from."""
    owners = {value.identity: attr for attr, value in stores
              if attr and (value.is_buffer or value.kind is ValueKind.OBJECT) and value.identity is not None
              and not value.identity.steps}
    kept_at = {value.stream: Path(Root.self_()).attr(attr) for attr, value in stores
               if attr and value.kind is ValueKind.STREAM and value.stream is not None}
    kept_whole = frozenset(attr for attr, value in stores if attr and _kept_argument(value))
    restated = tuple((attr, _at_self(attr, value, owners, kept_at, kept_whole)) for attr, value in stores if attr)
    made = {Path(Root.self_()).attr(attr): value.stream for attr, value in known + restated
            if value.kind is ValueKind.STREAM and value.stream is not None and value.stream.fresh}
    return tuple((attr, _on_made_stream(value, made)) for attr, value in restated)


def _on_made_stream(value: AbsValue, made: dict) -> AbsValue:
    """A value on the stream at `self.<attr>` where the class keeps a stream it made: on that one."""
    stream = value.stream
    if value.kind is ValueKind.STREAM or stream is None or stream.kind is not StreamRefKind.PATH or stream.fresh:
        return value
    return replace(value, stream=made.get(stream.path, stream))


def _held_at(attr: str, value: AbsValue, owners: dict) -> Path:
    """Where `self` holds the memory: its own attribute, or the path to a view of memory another attribute holds."""
    identity = value.identity
    if value.is_buffer and identity is not None and identity.steps:
        owner = owners.get(Path(identity.root))
        if owner is not None and owner != attr:
            return Path(Root.self_(), (owner,) + identity.steps)
    return Path(Root.self_()).attr(attr)


def _kept(stream: StreamRef, here: Path, kept_at: dict) -> StreamRef:
    """A stream the class made, named by the attribute keeping it, its site kept (of two: each, D-14)."""
    if stream.kind is StreamRefKind.EITHER:
        return StreamRef.either_of(_kept(m, kept_at.get(stream, here), kept_at) for m in stream.members) or stream
    if stream.kind is not StreamRefKind.CREATED:
        return stream
    return StreamRef(StreamRefKind.PATH, stream.framework, kept_at.get(stream, here), stream.site, stream.blocking, True)


def _kept_argument(value: AbsValue) -> bool:
    """An argument kept as it was given (or of them): an option the object was made with."""
    return value.kind is ValueKind.UNKNOWN and (value.target == OF_ARGUMENTS or value.identity is not None
                                               and value.identity.root.kind is RootKind.PARAM and not value.identity.steps)


def _field_of_an_option(value: AbsValue, kept_whole: frozenset) -> bool:
    """A field read off an argument, or off one kept as an option (`self.mode = config["odometry_type"]`,
    `self.mode = self.config["odometry_type"]`): an option the object was made with too."""
    identity = value.identity
    if value.kind is not ValueKind.UNKNOWN or value.target or value.element is not None or value.either \
            or identity is None or not identity.steps:
        return False
    return identity.root.kind is RootKind.PARAM or (identity.root.kind is RootKind.SELF and len(identity.steps) > 1
                                                    and identity.steps[0] in kept_whole)


def _at_self(attr: str, value: AbsValue, owners: dict, kept_at: dict, kept_whole: frozenset = frozenset()) -> AbsValue:
    value = replace(value, either=_named_on_self(value.either)) if value.either else value
    here = _held_at(attr, value, owners)
    stream = _kept(value.stream, here, kept_at) if value.stream is not None else None
    if value.kind is ValueKind.STREAM:
        return replace(value, stream=stream, identity=None)
    if value.kind in (ValueKind.BUFFER, ValueKind.EVENT, ValueKind.OBJECT):
        owned = value.identity is not None and value.identity.root.kind is not RootKind.SELF
        return replace(value, identity=here if owned or value.identity is None else value.identity, stream=stream)
    if _kept_argument(value) or _field_of_an_option(value, kept_whole):
        return replace(value, identity=here, target=OPTION)
    element = _item_at(value.element, here.element(Index.any_())) if value.element is not None else None
    # (an optimizer over a module the object keeps: its members are that attribute's memory)
    members = frozenset(Path(Root.self_()).attr(owners[m]) if m in owners else m for m in value.members)
    return replace(value, identity=here, element=element, members=members)


def _item_at(item: AbsValue, slot: Path) -> AbsValue:
    """An item of a container the object keeps: tuple position `i` is the memory at `slot[i]` (D-12)."""
    positions = tuple(_made_at(p, slot.element(Index.const_(i))) for i, p in enumerate(item.positions))
    return replace(item, positions=positions, either=_named_on_self(item.either))


def _named_on_self(either: tuple) -> tuple:
    """Of the memory an item is on some path (D-20), what the object's other methods can name."""
    return tuple(v for v in either if v.identity.root.kind in (RootKind.FRESH, RootKind.SELF, RootKind.GLOBAL))


def _made_at(value: AbsValue, here: Path) -> AbsValue:
    made = value.identity is not None and value.identity.root.kind is RootKind.FRESH and not value.identity.steps
    return replace(value, identity=here) if made and value.kind in (ValueKind.BUFFER, ValueKind.EVENT) else value


def join_stores(a: tuple, b: tuple) -> tuple:
    merged = dict(a)
    for attr, value in b:
        merged[attr] = _joined(merged[attr], value) if attr in merged else value
    return tuple(sorted(merged.items()))


def _joined(a: AbsValue, b: AbsValue) -> AbsValue:
    """Two methods' stores at one attribute; `ITEMS_ONLY` stores are the items of the container kept there; a method
    that deletes the attribute (`del self.frontend` at teardown) leaves nothing another method reads."""
    if UNBOUND.target in (a.target, b.target):
        return b if a.target == UNBOUND.target else a
    if ITEMS_ONLY in (a.target, b.target):
        items, held = (a, b) if a.target == ITEMS_ONLY else (b, a)
        if held.target == ITEMS_ONLY:
            return replace(held, element=held.element.join(items.element))  # type: ignore[union-attr]
        if held.kind is ValueKind.UNKNOWN and items.element is not None:  # an object not seen into keeps them
            return replace(held, element=items.element if held.element is None else held.element.join(items.element))
        if held.kind is not ValueKind.CONTAINER or items.element is None:
            return held
        element = items.element if held.element is None or held.target == NO_ITEMS else held.element.join(items.element)
        return replace(held, element=element, target="" if held.target == NO_ITEMS else held.target)
    return a.join(b)


def as_global(name: str, value: AbsValue) -> AbsValue:
    """A module-level name's value as functions see it: its memory is the global's."""
    if value.kind in (ValueKind.BUFFER, ValueKind.EVENT, ValueKind.OBJECT):
        return replace(value, identity=Path(Root.global_(name)))
    return value


def placeholders_given_way(state: tuple) -> tuple:
    """An attribute every method leaves None is set from outside: unknown there (maybe None), told by its use."""
    return tuple((attr, AbsValue(identity=Path(Root.self_()).attr(attr), may_be_none=True)
                  if value.kind is ValueKind.NONE else value) for attr, value in state)


def shown_by_use(stores: tuple, evidence: list) -> tuple:
    """The receiver state with what the methods' use showed of attributes whose stored value is unknown."""
    state = dict(stores)
    for key, tags in evidence:
        if not key.startswith(Evidence.SELF) or Evidence.CUDA_BUFFER not in tags:
            continue
        attr = key[len(Evidence.SELF):]
        held = state.get(attr, AbsValue(identity=Path(Root.self_()).attr(attr)))
        if held.kind is ValueKind.UNKNOWN:
            state[attr] = replace(held, kind=ValueKind.BUFFER, framework="torch", memory=Memory.DEVICE)
    return tuple(sorted(state.items()))


def host_written_attributes(effects: tuple[Effect, ...]) -> set[str]:
    """The attributes of `self` whose memory the effects write on the host (`self.buf.copy_(x)`, `self.buf[i] = v`)."""
    return {effect.path.steps[0] for effect in effects
            if effect.kind is EffectKind.ACCESS and effect.write and effect.path is not None
            and effect.path.root.kind is RootKind.SELF and effect.path.steps and isinstance(effect.path.steps[0], str)
            and (effect.host_memory or effect.stream is None)}


def kept_on_the_host(constructed: tuple, others: tuple, written: frozenset[str]) -> tuple:
    """The constructor's stores, where one is a PyTorch tensor in pageable host memory: made once and kept, so each
    upload of it copies the same values (`HostBuilt.KEPT`), where no other method stores it again or writes into it;
    where one does, a staging tensor, whose values are no longer the ones its factory made (`HOST_MADE` dropped)."""
    restored = {attr for attr, _ in others}
    return tuple((attr, _as_kept(value, attr in written or attr in restored)) for attr, value in constructed)


def _as_kept(value: AbsValue, changed: bool) -> AbsValue:
    if not value.is_buffer or value.memory is not Memory.PAGEABLE or (value.framework or "torch") != "torch" \
            or value.loader_batch:
        return value
    if changed:
        return replace(value, target="") if value.target == HOST_MADE else value
    return replace(value, built=HostBuilt.KEPT) if value.built is None else value
