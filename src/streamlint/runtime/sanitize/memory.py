"""Per-byte-range access histories: for every byte, the last write and the reads since.

Histories are kept over disjoint segments [lo, hi) of the address space, split where an
access begins or ends, so two views of one buffer conflict exactly where their bytes
overlap (CSAN keys by `data_ptr`, so views starting at different addresses never meet).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Hashable, Iterator, Optional


@dataclass(frozen=True)
class Access:
    seq: int  # the global number of the work (or host step) that made it
    actor: Hashable  # a stream id, or clocks.HOST
    write: bool
    index: int  # the event's position in the log
    name: str
    stack: tuple[str, ...]
    lo: int  # the argument's whole range (one finding per argument, not per segment)
    hi: int


@dataclass
class Segment:
    lo: int
    hi: int
    write: Optional[Access] = None
    reads: list[Access] = field(default_factory=list)


class History:
    def __init__(self) -> None:
        self._segments: list[Segment] = []
        self._starts: list[int] = []

    def _reindex(self) -> None:
        self._starts = [s.lo for s in self._segments]

    def _split_at(self, point: int) -> None:
        i = bisect.bisect_right(self._starts, point) - 1
        if i < 0:
            return
        seg = self._segments[i]
        if seg.lo < point < seg.hi:
            right = Segment(point, seg.hi, seg.write, list(seg.reads))
            seg.hi = point
            self._segments.insert(i + 1, right)
            self._starts.insert(i + 1, point)

    def segments(self, lo: int, hi: int, create: bool) -> Iterator[Segment]:
        """The segments covering [lo, hi), split to its bounds (gaps filled when `create`)."""
        if hi <= lo:
            return iter(())
        self._split_at(lo)
        self._split_at(hi)
        i = bisect.bisect_left(self._starts, lo)
        inside = []
        while i < len(self._segments) and self._segments[i].lo < hi:
            inside.append(self._segments[i])
            i += 1
        if create:
            cursor, filled = lo, []
            for seg in inside:
                if seg.lo > cursor:
                    filled.append(Segment(cursor, seg.lo))
                filled.append(seg)
                cursor = seg.hi
            if cursor < hi:
                filled.append(Segment(cursor, hi))
            if len(filled) != len(inside):
                self._segments = [s for s in self._segments if s.hi <= lo or s.lo >= hi]
                self._segments.extend(filled)
                self._segments.sort(key=lambda s: s.lo)
                self._reindex()
            inside = filled
        return iter(inside)

    def forget(self, lo: int, hi: int) -> list[Access]:
        """Drop the history of [lo, hi) (a free or a fresh allocation); return the accesses
        it held, each once."""
        dropped: dict[int, Access] = {}
        for seg in self.segments(lo, hi, create=False):
            for access in ([seg.write] if seg.write else []) + seg.reads:
                dropped[id(access)] = access
        self._segments = [s for s in self._segments if s.hi <= lo or s.lo >= hi]
        self._reindex()
        return list(dropped.values())
