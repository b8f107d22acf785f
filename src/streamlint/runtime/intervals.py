"""Interval arithmetic on a timeline, the way Holistic Trace Analysis computes overlap:
merge the intervals of each class, then intersect or sweep the merged lists.

An interval is a `(start, end)` pair of floats with start <= end; lists need not be
sorted. Every function returns merged, sorted, non-overlapping intervals or a length.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterable, Mapping, Sequence

Interval = tuple[float, float]


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted union of the intervals; touching intervals are joined."""
    out: list[Interval] = []
    for start, end in sorted((s, e) for s, e in intervals if e > s):
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def total(intervals: Iterable[Interval]) -> float:
    """Length of the union."""
    return sum(e - s for s, e in merge(intervals))


def intersect(a: Iterable[Interval], b: Iterable[Interval]) -> list[Interval]:
    """Where both classes are busy."""
    ma, mb = merge(a), merge(b)
    out: list[Interval] = []
    i = j = 0
    while i < len(ma) and j < len(mb):
        start = max(ma[i][0], mb[j][0])
        end = min(ma[i][1], mb[j][1])
        if end > start:
            out.append((start, end))
        if ma[i][1] < mb[j][1]:
            i += 1
        else:
            j += 1
    return out


def overlap(a: Iterable[Interval], b: Iterable[Interval]) -> float:
    return sum(e - s for s, e in intersect(a, b))


def subtract(a: Iterable[Interval], b: Iterable[Interval]) -> list[Interval]:
    """The parts of `a` where `b` is not busy."""
    out: list[Interval] = []
    mb = merge(b)
    for start, end in merge(a):
        cursor = start
        for bs, be in mb:
            if be <= cursor:
                continue
            if bs >= end:
                break
            if bs > cursor:
                out.append((cursor, bs))
            cursor = max(cursor, be)
            if cursor >= end:
                break
        if cursor < end:
            out.append((cursor, end))
    return out


def clip(intervals: Iterable[Interval], lo: float, hi: float) -> list[Interval]:
    return merge((max(s, lo), min(e, hi)) for s, e in intervals if min(e, hi) > max(s, lo))


def gaps(intervals: Iterable[Interval], lo: float, hi: float) -> list[Interval]:
    """Idle intervals inside [lo, hi]."""
    return subtract([(lo, hi)], intervals)


class Busy:
    """A merged interval list with prefix sums: busy time between two instants in
    O(log n), for queries repeated over many windows."""

    def __init__(self, intervals: Iterable[Interval]) -> None:
        self.merged = merge(intervals)
        self.starts = [s for s, _ in self.merged]
        self.prefix = [0.0]
        for s, e in self.merged:
            self.prefix.append(self.prefix[-1] + (e - s))

    def _until(self, t: float) -> float:
        """Busy time before instant t."""
        i = bisect_right(self.starts, t)
        if i == 0:
            return 0.0
        s, e = self.merged[i - 1]
        return self.prefix[i - 1] + (min(e, t) - s)

    def between(self, lo: float, hi: float) -> float:
        return max(0.0, self._until(hi) - self._until(lo)) if hi > lo else 0.0

    def idle_between(self, lo: float, hi: float) -> float:
        return max(0.0, (hi - lo) - self.between(lo, hi)) if hi > lo else 0.0


def concurrency(classes: Mapping[object, Sequence[Interval]]) -> dict[int, float]:
    """Sweep: {k: time during which exactly k classes are busy}, for k >= 1.

    Each class is merged first, so a class counts once however many of its own
    intervals overlap (one stream running two kernels at once is one busy stream).
    """
    points: list[tuple[float, int]] = []
    for intervals in classes.values():
        for start, end in merge(intervals):
            points.append((start, 1))
            points.append((end, -1))
    points.sort(key=lambda p: (p[0], p[1]))  # ends before starts at the same instant
    out: dict[int, float] = {}
    active, last = 0, None
    for time, delta in points:
        if last is not None and active > 0 and time > last:
            out[active] = out.get(active, 0.0) + (time - last)
        active += delta
        last = time
    return out


def at_least(classes: Mapping[object, Sequence[Interval]], k: int) -> float:
    """Time during which at least k classes are busy (k=2: cross-stream overlap)."""
    return sum(t for n, t in concurrency(classes).items() if n >= k)
