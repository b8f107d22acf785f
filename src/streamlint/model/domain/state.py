"""The abstract state at one program point: what names and paths hold, each framework's
current stream, and the happens-before order of pending work. Immutable; `join` merges
two paths' states, and loops iterate until `join` stops changing the head state."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Optional

from streamlint.model.api.facts import LEGACY_BY_DEFAULT
from streamlint.model.domain.order import Order
from streamlint.model.domain.paths import Path
from streamlint.model.domain.streams import UNKNOWN_STREAM, StreamRef
from streamlint.model.domain.values import UNKNOWN, AbsValue


def _frozen(mapping: Mapping) -> tuple:
    return tuple(sorted(mapping.items(), key=lambda item: repr(item[0])))


@dataclass(frozen=True)
class State:
    names: tuple[tuple[str, AbsValue], ...] = ()  # local and global names
    heap: tuple[tuple[Path, AbsValue], ...] = ()  # what attribute and element paths hold
    current: tuple[tuple[str, StreamRef], ...] = ()  # framework -> its current stream
    order: Order = Order()
    reachable: bool = True  # False after `return`/`raise` on this path
    # streams whose work is recorded into a graph, and the events recorded in such a capture
    capturing: frozenset = frozenset()
    # the accesses recorded in a capture, by the capturing stream, then by the graph made of them
    recorded: tuple[tuple[object, tuple], ...] = ()

    # -- reads ---------------------------------------------------------------------
    def value(self, name: str) -> AbsValue:
        return dict(self.names).get(name, UNKNOWN)

    def at(self, path: Path) -> AbsValue:
        return dict(self.heap).get(path, UNKNOWN)

    def stored(self, path: Path) -> Optional[AbsValue]:
        """What was stored at `path`, None when nothing was."""
        return dict(self.heap).get(path)

    def current_stream(self, framework: str) -> StreamRef:
        return dict(self.current).get(framework, entry_stream(framework))

    # -- updates -------------------------------------------------------------------
    def bind(self, name: str, value: AbsValue) -> "State":
        names = dict(self.names)
        names[name] = value
        return replace(self, names=_frozen(names))

    def store(self, path: Path, value: AbsValue) -> "State":
        heap = {p: v for p, v in self.heap if not (p != path and path.may_alias(p) and len(p.steps) > len(path.steps))}
        heap[path] = value
        return replace(self, heap=_frozen(heap))

    def with_current(self, framework: str, stream: StreamRef) -> "State":
        current = dict(self.current)
        current[framework] = stream
        return replace(self, current=_frozen(current))

    def with_order(self, order: Order) -> "State":
        return replace(self, order=order)

    def unreachable(self) -> "State":
        return replace(self, reachable=False)

    def renamed(self, rename) -> "State":
        """Every path in the state renamed: the names' and the heap's values, the heap's keys,
        the order's accesses and events."""
        names = tuple((n, _renamed_value(v, rename)) for n, v in self.names)
        heap = _frozen({rename(p): _renamed_value(v, rename) for p, v in self.heap})
        return State(names, heap, self.current, self.order.renamed(rename), self.reachable, self.capturing, self.recorded)

    def holds(self, identity: Path) -> bool:
        """Some name or heap entry still holds this memory."""
        return any(_refers(v, identity) for _, v in self.names) or any(_refers(v, identity) for _, v in self.heap)

    # -- lattice -------------------------------------------------------------------
    def join(self, other: "State", every_path: bool = False) -> "State":
        if not other.reachable:
            return self
        if not self.reachable or self == other:
            return other
        return State(
            _join_maps(self.names, other.names, lambda a, b: a.join(b)),
            _join_maps(self.heap, other.heap, lambda a, b: a.join(b)),
            _join_current(self.current, other.current),
            self.order.join(other.order, every_path),
            True,
            self.capturing | other.capturing,
            _join_recorded(self.recorded, other.recorded),
        )


def _join_maps(a: tuple, b: tuple, join) -> tuple:
    left, right = dict(a), dict(b)
    merged = {}
    for key in left.keys() | right.keys():
        if key in left and key in right:
            merged[key] = join(left[key], right[key])
        else:
            merged[key] = left.get(key, right.get(key))  # bound on one path only: what that path bound
    return _frozen(merged)


def _join_current(a: tuple, b: tuple) -> tuple:
    """A framework missing on one side is at its entry stream there."""
    left, right = dict(a), dict(b)
    merged = {}
    for framework in left.keys() | right.keys():
        x = left.get(framework, entry_stream(framework))
        y = right.get(framework, entry_stream(framework))
        merged[framework] = x if x == y else UNKNOWN_STREAM
    return _frozen(merged)


def _renamed_value(value: AbsValue, rename) -> AbsValue:
    if value.identity is None and value.element is None and not value.members:
        return value
    identity = rename(value.identity) if value.identity is not None else None
    element = _renamed_value(value.element, rename) if value.element is not None else None
    return replace(value, identity=identity, element=element, members=frozenset(rename(m) for m in value.members))


def _refers(value: AbsValue, identity: Path) -> bool:
    if value.identity == identity or identity in value.members:
        return True
    return value.element is not None and _holds_item(value.element, identity)


def _holds_item(item: AbsValue, identity: Path) -> bool:
    """A container's items: every allocation of a site it was filled from, whatever the iteration."""
    mine = item.identity
    if mine is not None and mine.steps == identity.steps and mine.root.site and mine.root.site == identity.root.site:
        return True
    return _refers(item, identity)


def entry_stream(framework: str) -> StreamRef:
    """A framework's current stream when a function is entered: the caller's (PyTorch's may be a
    side stream), or the legacy default stream for frameworks that have no setting of their own."""
    return StreamRef.legacy() if framework in LEGACY_BY_DEFAULT else StreamRef.ambient(framework)


def _join_recorded(a: tuple, b: tuple) -> tuple:
    merged = dict(a)
    for key, accesses in b:
        merged[key] = tuple(dict.fromkeys(merged.get(key, ()) + accesses))
    return tuple(merged.items())
