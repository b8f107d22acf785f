"""Interval arithmetic: merge per class, intersect, sweep (the HTA way)."""

from __future__ import annotations

import random

import pytest

from .rc_data import evidence_of
from streamlint.runtime import intervals as iv


def test_merge_joins_overlapping_and_touching_and_drops_empty():
    assert iv.merge([(5, 7), (0, 2), (1, 3), (3, 4), (9, 9)]) == [(0, 4), (5, 7)]


def test_total_counts_overlap_once():
    assert iv.total([(0, 10), (5, 15), (20, 21)]) == 16


def test_intersect_and_overlap():
    a = [(0, 10), (20, 30)]
    b = [(5, 25)]
    assert iv.intersect(a, b) == [(5, 10), (20, 25)]
    assert iv.overlap(a, b) == 10


def test_subtract_and_gaps():
    assert iv.subtract([(0, 10)], [(2, 3), (5, 7)]) == [(0, 2), (3, 5), (7, 10)]
    assert iv.gaps([(2, 3), (5, 12)], 0, 10) == [(0, 2), (3, 5)]
    assert iv.clip([(0, 5), (8, 20)], 3, 10) == [(3, 5), (8, 10)]


def test_sweep_counts_each_class_once():
    # stream "a" runs two overlapping ops: still one busy stream
    classes = {"a": [(0, 10), (2, 4)], "b": [(5, 15)], "c": [(8, 9)]}
    counts = iv.concurrency(classes)
    assert counts == {1: 10.0, 2: 4.0, 3: 1.0}
    assert iv.at_least(classes, 2) == 5.0


def test_busy_prefix_sums_match_the_plain_computation():
    rng = random.Random(4)
    spans = [(s, s + rng.uniform(0, 5)) for s in (rng.uniform(0, 100) for _ in range(200))]
    busy = iv.Busy(spans)
    for _ in range(100):
        lo = rng.uniform(-5, 105)
        hi = lo + rng.uniform(0, 30)
        assert busy.between(lo, hi) == pytest.approx(iv.total(iv.clip(spans, lo, hi)))
        assert busy.idle_between(lo, hi) == pytest.approx(iv.total(iv.gaps(spans, lo, hi)))


def test_on_a_real_trace_union_never_exceeds_the_sum_of_streams():
    ev = evidence_of("SL103", "good")
    per_stream: dict[int, list] = {}
    for op in ev.ops:
        per_stream.setdefault(op.stream, []).append((op.start, op.end))
    union = iv.total(s for spans in per_stream.values() for s in spans)
    by_stream = sum(iv.total(spans) for spans in per_stream.values())
    counts = iv.concurrency(per_stream)
    assert sum(counts.values()) == pytest.approx(union)
    assert sum(k * t for k, t in counts.items()) == pytest.approx(by_stream)
    assert iv.at_least(per_stream, 2) > 0  # the good pipeline overlaps its streams
