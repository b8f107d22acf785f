"""Two indexes over an order's pending accesses, so that an operation touches only what it
can change, not every access still pending (a long function or a notebook keeps thousands):

- by root: only paths of one root may alias, so an access or a release meets only its
  root's pending accesses (kept in `pending`'s order: conflicts are reported in that order);
- by clock: waits and stream synchronizations decide by an access's clock alone
  (`Pending.clock`), so they decide once per clock and move the whole group;
- by position: where each access sits in `pending`, so that giving some accesses new
  clocks replaces them in place without a search.

Immutable, like the order: each update returns a new index, copying only the groups it
changes. Groups hold the `Pending` objects themselves, matched by identity.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import chain
from typing import Iterable, Optional


def _grouped(pending: Iterable, key) -> dict:
    groups: dict = {}
    for p in pending:
        groups.setdefault(key(p), []).append(p)
    return {k: tuple(group) for k, group in groups.items()}


def _root(p) -> object:
    return p.access.path.root


def _without(groups: dict, gone: list, key) -> dict:
    """`groups` (a copy) with the objects in `gone` taken out of their groups."""
    ids_by_group: dict = {}
    for p in gone:
        ids_by_group.setdefault(key(p), set()).add(id(p))
    for k, ids in ids_by_group.items():
        kept = tuple(p for p in groups[k] if id(p) not in ids)
        if kept:
            groups[k] = kept
        else:
            del groups[k]
    return groups


def _clock_groups(pending: Iterable) -> dict:
    """Clock -> {id: access}: a group is a dict, so taking one access out costs no search."""
    groups: dict = {}
    for p in pending:
        groups.setdefault(p.clock, {})[id(p)] = p
    return groups


def _regrouped(groups: dict, gone: list, added: list) -> dict:
    """The clock groups (a copy) with `gone` taken out and `added` put in; only the groups
    that change are copied."""
    groups = dict(groups)
    copied: set = set()

    def own(clock) -> dict:
        if clock not in copied:
            groups[clock] = dict(groups.get(clock, {}))
            copied.add(clock)
        return groups[clock]

    for p in gone:
        del own(p.clock)[id(p)]
    for p in added:
        own(p.clock)[id(p)] = p
    for clock in copied:
        if not groups[clock]:
            del groups[clock]
    return groups


def _with(groups: dict, added: list, key) -> dict:
    """`groups` (a copy) with `added` appended to their groups, in the order given."""
    for k, group in _grouped(added, key).items():
        groups[k] = groups.get(k, ()) + group
    return groups


class Places:
    """Where each access sits in `pending`: a number given when it joined (`raw`), less the
    numbers of the accesses removed before it since. Shared, not copied, by the orders that
    follow one another, and only ever added to: an entry is looked up only for an access of
    the order asking, which is alive, so no other live access has its id; entries of accesses
    no longer pending are stale and harmless, and the table is rebuilt when they pile up."""

    __slots__ = ("raw", "removed", "length")

    def __init__(self, raw: dict, removed: tuple, length: int) -> None:
        self.raw = raw  # id(access) -> its number
        self.removed = removed  # sorted numbers of the accesses removed since the table was built
        self.length = length  # the next number to give

    @staticmethod
    def of(pending: tuple) -> "Places":
        return Places({id(p): i for i, p in enumerate(pending)}, (), len(pending))

    def place(self, p) -> int:
        raw = self.raw[id(p)]
        return raw - bisect_left(self.removed, raw)

    def appended(self, added: list) -> "Places":
        for i, p in enumerate(added):
            self.raw[id(p)] = self.length + i
        return Places(self.raw, self.removed, self.length + len(added))

    def without(self, gone: list) -> "Places":
        return Places(self.raw, tuple(sorted(self.removed + tuple(self.raw[id(p)] for p in gone))), self.length)

    def renumbered(self, pairs: list) -> "Places":
        """Each (old, new): `new` takes `old`'s place."""
        for old, new in pairs:
            self.raw[id(new)] = self.raw[id(old)]
        return self

    def worn(self, pending: tuple) -> bool:
        return len(self.removed) > 64 + len(pending) // 4 or len(self.raw) > 64 + 4 * len(pending)


# Below this many pending accesses, scanning them costs less than keeping the indexes.
INDEXED_FROM = 48


def index_of(pending: tuple) -> "PendingIndex | Scan":
    return PendingIndex.of(pending) if len(pending) >= INDEXED_FROM else Scan(pending)


class Scan:
    """The same questions as `PendingIndex`, answered by looking at every pending access: for
    the few accesses most functions keep pending. Nothing to keep up to date."""

    __slots__ = ("_pending",)

    def __init__(self, pending: tuple) -> None:
        self._pending = pending

    def same_root(self, root) -> tuple:
        return tuple(p for p in self._pending if p.access.path.root == root)

    def clocks(self) -> Iterable[Iterable]:
        return ((p,) for p in self._pending)

    def streams(self) -> set:
        return {p.access.stream for p in self._pending}

    def without(self, gone: list) -> tuple:
        ids = {id(p) for p in gone}
        return tuple(p for p in self._pending if id(p) not in ids)

    def changed(self, pending: tuple, removed: list, added: list) -> Optional["Scan"]:
        return Scan(pending) if len(pending) < INDEXED_FROM else None  # None: index it when asked

    def replaced(self, pairs: list) -> tuple[tuple, "Scan"]:
        new_of = {id(old): new for old, new in pairs}
        pending = tuple(new_of.get(id(p), p) for p in self._pending)
        return pending, Scan(pending)


class PendingIndex:
    __slots__ = ("by_root", "by_clock", "_places", "_pending")

    def __init__(self, by_root: dict, by_clock: dict, pending: tuple, places: Optional[Places] = None) -> None:
        self.by_root = by_root
        self.by_clock = by_clock
        self._pending = pending  # what the places are places in
        self._places = places if places is None or not places.worn(pending) else None

    @staticmethod
    def of(pending: tuple) -> "PendingIndex":
        return PendingIndex(_grouped(pending, _root), _clock_groups(pending), pending)

    def places(self) -> Places:
        """Built when first asked for."""
        if self._places is None:
            self._places = Places.of(self._pending)
        return self._places

    def same_root(self, root) -> tuple:
        return self.by_root.get(root, ())

    def clocks(self) -> Iterable[Iterable]:
        """One group per clock: the accesses that share it (any one stands for all)."""
        return (group.values() for group in self.by_clock.values())

    def streams(self) -> set:
        return {next(iter(group.values())).access.stream for group in self.by_clock.values()}

    def without(self, gone: list) -> tuple:
        """`pending` less `gone`, cut at their places (no search)."""
        places = self.places()
        kept, start = [], 0
        for place in sorted(places.place(p) for p in gone):
            kept.append(self._pending[start:place])
            start = place + 1
        kept.append(self._pending[start:])
        return tuple(chain.from_iterable(kept))

    def changed(self, pending: tuple, removed: list, added: list) -> "PendingIndex":
        """For `pending`: `removed` left the order and `added` joined it at its end."""
        places = self._places
        if places is not None:
            places = places.without(removed).appended(added) if removed else places.appended(added)
        return PendingIndex(_with(_without(dict(self.by_root), removed, _root), added, _root),
                            _regrouped(self.by_clock, removed, added), pending, places)

    def replaced(self, pairs: list) -> tuple[tuple, "PendingIndex"]:
        """Each (old, new): the same access with a new clock, in the same place. Returns the
        new pending tuple and its index."""
        places = self.places()
        pending = list(self._pending)
        new_of: dict = {}
        for old, new in pairs:
            pending[places.place(old)] = new
            new_of.setdefault(_root(old), {})[id(old)] = new
        by_root = dict(self.by_root)
        for root, news in new_of.items():
            by_root[root] = tuple(news.get(id(p), p) for p in by_root[root])
        pending_tuple = tuple(pending)
        by_clock = _regrouped(self.by_clock, [old for old, _ in pairs], [new for _, new in pairs])
        return pending_tuple, PendingIndex(by_root, by_clock, pending_tuple, places.renumbered(pairs))
