"""An order's pending accesses in persistent maps, so that an operation touches only what it can
change (a notebook keeps thousands): by number (the order they joined in), by root (only paths of
one root may alias) and by clock (waits and syncs decide once per clock and move the group)."""

from __future__ import annotations

from operator import itemgetter
from typing import Iterable, Iterator

from streamlint.model.domain.persistent import EMPTY, PMap


def _root(p) -> object:
    return p.access.path.root


def _joined(clocks: PMap, clock: tuple, n: int, p) -> PMap:
    return clocks.set(clock, clocks.get(clock, EMPTY).set(n, p))


def _left(clocks: PMap, clock: tuple, n: int) -> PMap:
    group = clocks[clock].delete(n)
    return clocks.set(clock, group) if group else clocks.delete(clock)


class PendingIndex:
    __slots__ = ("seq", "roots", "by_clock", "next")

    def __init__(self, seq: PMap, roots: PMap, by_clock: PMap, next_number: int) -> None:
        self.seq = seq  # number -> access
        self.roots = roots  # root -> the numbers of its accesses, ascending
        self.by_clock = by_clock  # clock -> {number: access}
        self.next = next_number  # the number the next access gets

    @staticmethod
    def of(pending: Iterable) -> "PendingIndex":
        seq: dict = {}
        roots: dict = {}
        clocks: dict = {}
        for n, p in enumerate(pending):
            seq[n] = p
            roots.setdefault(_root(p), []).append(n)
            clocks.setdefault(p.clock, {})[n] = p
        return PendingIndex(PMap(seq), PMap({r: tuple(ns) for r, ns in roots.items()}),
                            PMap({c: PMap(group) for c, group in clocks.items()}), len(seq))

    def __len__(self) -> int:
        return len(self.seq)

    def in_order(self) -> tuple:
        return tuple(p for _, p in sorted(self.seq.items(), key=itemgetter(0)))

    def items(self) -> Iterator[tuple]:
        """(number, access) pairs, in no particular order."""
        return self.seq.items()

    def same_root(self, root) -> list:
        """(number, access) of the accesses to memory of `root`, in the order they joined."""
        seq = self.seq
        return [(n, seq[n]) for n in self.roots.get(root, ())]

    def has_root(self, root) -> bool:
        return root in self.roots

    def clocks(self) -> Iterator[PMap]:
        """One group per clock: {number: access} of the accesses that share it (any one stands for all)."""
        return self.by_clock.values()

    def streams(self) -> set:
        return {next(iter(group.values())).access.stream for group in self.by_clock.values()}

    def appended(self, p) -> "PendingIndex":
        """`p` joins at the end."""
        n, root = self.next, _root(p)
        return PendingIndex(self.seq.set(n, p), self.roots.set(root, self.roots.get(root, ()) + (n,)),
                            _joined(self.by_clock, p.clock, n, p), n + 1)

    def removed(self, gone: list) -> "PendingIndex":
        """Each (number, access) of `gone` leaves."""
        seq, clocks, by_root = self.seq, self.by_clock, {}
        for n, p in gone:
            seq = seq.delete(n)
            clocks = _left(clocks, p.clock, n)
            by_root.setdefault(_root(p), set()).add(n)
        roots = self.roots
        for root, numbers in by_root.items():
            kept = tuple(n for n in roots[root] if n not in numbers)
            roots = roots.set(root, kept) if kept else roots.delete(root)
        return PendingIndex(seq, roots, clocks, self.next)

    def replaced(self, pairs: list) -> "PendingIndex":
        """Each (number, new): the same access with a new clock, in the same place."""
        seq, clocks = self.seq, self.by_clock
        for n, new in pairs:
            old = seq[n]
            seq = seq.set(n, new)
            clocks = _joined(_left(clocks, old.clock, n), new.clock, n, new)
        return PendingIndex(seq, self.roots, clocks, self.next)
