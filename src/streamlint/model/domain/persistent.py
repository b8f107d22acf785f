"""A persistent hash map (a hash array mapped trie), so that a state that binds one name, or an
order that adds one access, costs what it touches, not what it holds (a dict copied on each change
made the 3,000-cell notebook of benchmarks/v3_speed.py 3.5x slower, session 18). A small map is a
plain dict; past `SMALL` keys, a trie of 32-slot lists, never changed once a map holds them, whose
slots are empty (None), an entry `(hash, key, value)`, a child node, or a bucket of equal hashes."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

_MASK64 = (1 << 64) - 1
_LAST_SHIFT = 60  # the deepest level's shift: 13 levels of 5 bits cover a 64-bit hash
_ABSENT = object()


def _empty() -> list:
    return [None] * 32


def _pair(shift: int, a: tuple, b: tuple) -> Any:
    """A subtree holding the two entries `a` and `b` (different keys), from level `shift`."""
    if shift > _LAST_SHIFT:
        bucket = {}  # keys whose 64-bit hashes are equal
        bucket[a[1]], bucket[b[1]] = a[2], b[2]
        return bucket
    node = _empty()
    ia, ib = (a[0] >> shift) & 31, (b[0] >> shift) & 31
    if ia == ib:
        node[ia] = _pair(shift + 5, a, b)
    else:
        node[ia], node[ib] = a, b
    return node


def _copied(node: list, i: int, slot: Any) -> list:
    new = node.copy()
    new[i] = slot
    return new


def _assoc(node: list, shift: int, h: int, key: Any, value: Any) -> tuple[list, int]:
    """`node` with key set to value; how many keys were added (0 or 1). `node` itself when
    the key already holds this very value."""
    i = (h >> shift) & 31
    slot = node[i]
    if slot is None:
        return _copied(node, i, (h, key, value)), 1
    kind = type(slot)
    if kind is list:
        child, added = _assoc(slot, shift + 5, h, key, value)
        return (node, 0) if child is slot else (_copied(node, i, child), added)
    if kind is tuple:
        if slot[0] == h and (slot[1] is key or slot[1] == key):
            return (node, 0) if slot[2] is value else (_copied(node, i, (h, key, value)), 0)
        return _copied(node, i, _pair(shift + 5, slot, (h, key, value))), 1
    if slot.get(key, _ABSENT) is value:
        return node, 0
    bucket = dict(slot)
    added = key not in bucket
    bucket[key] = value
    return _copied(node, i, bucket), int(added)


def _dissoc(node: list, shift: int, h: int, key: Any) -> Optional[list]:
    """`node` without key (None when nothing is left); `node` itself when key is absent."""
    i = (h >> shift) & 31
    slot = node[i]
    if slot is None:
        return node
    kind = type(slot)
    if kind is list:
        child = _dissoc(slot, shift + 5, h, key)
        if child is slot:
            return node
        new = _copied(node, i, child)
    elif kind is tuple:
        if not (slot[0] == h and (slot[1] is key or slot[1] == key)):
            return node
        new = _copied(node, i, None)
    else:
        if key not in slot:
            return node
        bucket = dict(slot)
        del bucket[key]
        new = _copied(node, i, bucket or None)
    return None if new.count(None) == 32 else new


def _items(node: list) -> Iterator[tuple]:
    for slot in node:
        if slot is None:
            continue
        kind = type(slot)
        if kind is tuple:
            yield slot[1], slot[2]
        elif kind is list:
            yield from _items(slot)
        else:
            yield from slot.items()


def _subtree_items(slot: Any) -> dict:
    if slot is None:
        return {}
    if type(slot) is tuple:
        return {slot[1]: slot[2]}
    return dict(_items(slot)) if type(slot) is list else dict(slot)


def _equal(a: list, b: list) -> bool:
    """Two nodes at the same level hold equal entries; shared subtrees are not looked into."""
    for x, y in zip(a, b):
        if x is y:
            continue
        if type(x) is list and type(y) is list:
            if not _equal(x, y):
                return False
        elif type(x) is tuple and type(y) is tuple:
            if not (x[0] == y[0] and x[1] == y[1] and x[2] == y[2]):
                return False
        elif _subtree_items(x) != _subtree_items(y):  # the same keys may sit at different depths
            return False
    return True


def _trie(pairs: Iterable) -> tuple[list, int]:
    root, length = _empty(), 0
    for key, value in pairs:
        root, added = _assoc(root, 0, hash(key) & _MASK64, key, value)
        length += added
    return root, length


# Up to this many keys a map is a plain dict, copied whole on each change: cheaper than the
# trie's path copying at that size (most functions' states are this small).
SMALL = 24


class PMap:
    """An immutable mapping with a cached hash; `set` and `delete` return new maps sharing all but
    one path. Iterating gives (key, value) pairs sorted by the key's repr, so that whatever walks a
    state's bindings sees them in one order whichever path built them; `items` in no order."""

    __slots__ = ("_root", "_len", "_hash", "_pairs")

    def __init__(self, items: Any = ()) -> None:
        """A map of a mapping's items or of (key, value) pairs."""
        small = dict(items.items() if hasattr(items, "items") else items)
        root, length = (small, len(small)) if len(small) <= SMALL else _trie(small.items())
        self._root, self._len, self._hash, self._pairs = root, length, None, None

    @staticmethod
    def _at(root: "list | dict", length: int) -> "PMap":
        made = PMap.__new__(PMap)
        made._root, made._len, made._hash, made._pairs = root, length, None, None
        return made

    def get(self, key: Any, default: Any = None) -> Any:
        node = self._root
        if type(node) is dict:
            return node.get(key, default)
        h = hash(key) & _MASK64
        shift = 0
        while True:
            slot = node[(h >> shift) & 31]
            kind = type(slot)
            if kind is list:
                node, shift = slot, shift + 5
                continue
            if slot is None:
                return default
            if kind is tuple:
                return slot[2] if slot[0] == h and (slot[1] is key or slot[1] == key) else default
            return slot.get(key, default)

    def __contains__(self, key: Any) -> bool:
        return self.get(key, _ABSENT) is not _ABSENT

    def __getitem__(self, key: Any) -> Any:
        value = self.get(key, _ABSENT)
        if value is _ABSENT:
            raise KeyError(key)
        return value

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def set(self, key: Any, value: Any) -> "PMap":
        root = self._root
        if type(root) is dict:
            if root.get(key, _ABSENT) is value:
                return self
            if self._len < SMALL or key in root:
                small = root.copy()
                small[key] = value
                return PMap._at(small, len(small))
            root = _trie(root.items())[0]
        root, added = _assoc(root, 0, hash(key) & _MASK64, key, value)
        return self if root is self._root else PMap._at(root, self._len + added)

    def delete(self, key: Any) -> "PMap":
        root = self._root
        if type(root) is dict:
            if key not in root:
                return self
            small = root.copy()
            del small[key]
            return PMap._at(small, len(small))
        root = _dissoc(root, 0, hash(key) & _MASK64, key)
        if root is self._root:
            return self
        return PMap._at(root if root is not None else _empty(), self._len - 1)  # once a trie, stays one

    def items(self) -> Iterator[tuple]:
        root = self._root
        return iter(root.items()) if type(root) is dict else _items(root)

    def keys(self) -> Iterator[Any]:
        root = self._root
        return iter(root) if type(root) is dict else (key for key, _ in _items(root))

    def values(self) -> Iterator[Any]:
        root = self._root
        return iter(root.values()) if type(root) is dict else (value for _, value in _items(root))

    def pairs(self) -> tuple:
        if self._pairs is None:
            self._pairs = tuple(sorted(self.items(), key=lambda item: repr(item[0])))
        return self._pairs

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.pairs())

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, tuple):
            return self.pairs() == other
        if not isinstance(other, PMap):
            return NotImplemented
        if self._len != other._len:
            return False
        a, b = self._root, other._root
        if type(a) is list and type(b) is list:
            return _equal(a, b)  # shared subtrees are not compared
        return dict(self.items()) == dict(other.items())

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self.items()))
        return self._hash

    def __reduce__(self) -> tuple:
        return (PMap, (dict(self.items()),))  # rebuilt: another process hashes strings differently

    def __repr__(self) -> str:
        return repr(self.pairs())


EMPTY = PMap()
