"""An immutable mapping for the abstract state: lookups and updates that cost what they touch
(a persistent hash map shares all but one path with the map it came from: domain/persistent.py),
a cached hash, and iteration as (key, value) pairs in one fixed order (by the key's repr), so that
whatever walks a state's bindings sees them in the same order whichever path built them."""

from __future__ import annotations

from collections.abc import Set
from typing import Any, Iterator, Mapping

from streamlint.model.domain.persistent import PMap


class _Keys(Set):
    """A map's keys, as a set (`left.keys() | right.keys()` gives a plain set)."""

    __slots__ = ("_map",)

    def __init__(self, items: PMap) -> None:
        self._map = items

    def __contains__(self, key: Any) -> bool:
        return key in self._map

    def __iter__(self) -> Iterator[Any]:
        return self._map.keys()

    def __len__(self) -> int:
        return len(self._map)

    @classmethod
    def _from_iterable(cls, it) -> set:
        return set(it)


class FrozenMap:
    """Iterating gives (key, value) pairs, as the sorted tuples the state held before did
    (`for k, v in m` works on both, and `dict(m)` through `keys`). Never mutated after
    construction."""

    __slots__ = ("_items", "_hash", "_pairs")

    def __init__(self, items: Mapping = ()) -> None:
        self._items: PMap = items if isinstance(items, PMap) else PMap.of(dict(items))
        self._hash: int | None = None
        self._pairs: tuple | None = None

    @classmethod
    def owning(cls, items: "dict | PMap") -> "FrozenMap":
        """A map of `items` (a dict the caller hands over, or a persistent map)."""
        made = cls.__new__(cls)
        made._items, made._hash, made._pairs = items if isinstance(items, PMap) else PMap.of(items), None, None
        return made

    def get(self, key: Any, default: Any = None) -> Any:
        return self._items.get(key, default)

    def __contains__(self, key: Any) -> bool:
        return key in self._items

    def __getitem__(self, key: Any) -> Any:
        return self._items[key]

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.pairs())

    def pairs(self) -> tuple:
        if self._pairs is None:
            self._pairs = tuple(sorted(self._items.items(), key=lambda item: repr(item[0])))
        return self._pairs

    def items(self):
        """The pairs in no particular order (for what does not depend on it)."""
        return self._items.items()

    def keys(self) -> _Keys:
        return _Keys(self._items)

    def values(self):
        return self._items.values()

    def set(self, key: Any, value: Any) -> "FrozenMap":
        items = self._items.set(key, value)
        return self if items is self._items else FrozenMap.owning(items)

    def delete(self, key: Any) -> "FrozenMap":
        items = self._items.delete(key)
        return self if items is self._items else FrozenMap.owning(items)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, FrozenMap):
            return self._items == other._items  # shared subtrees are not compared
        if isinstance(other, tuple):
            return self.pairs() == other
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._items)
        return self._hash

    def __reduce__(self) -> tuple:
        return (FrozenMap, (dict(self._items.items()),))  # the hash is not kept: another process hashes strings differently

    def __repr__(self) -> str:
        return repr(self.pairs())


EMPTY = FrozenMap()
