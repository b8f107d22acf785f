"""Compare the results of repeated trials: what fraction of values differs.

A result is whatever `run()` returned, turned into a list of NumPy arrays by the harness
(tensors, CuPy and Numba arrays copied to the host; scalars and lists of numbers as
arrays). Two results agree when they have the same shapes and every value is within a
tight tolerance (the two variants run the same kernels on the same data).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

RTOL = 1e-5
ATOL = 1e-6


def load_result(path: str | Path) -> list[np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return [data[k] for k in sorted(data.files, key=lambda k: int(k.split("_")[-1]))]


def wrong_fraction(result: Sequence[np.ndarray], reference: Sequence[np.ndarray]) -> float:
    """Fraction of values that differ (1.0 when the shapes do not even match)."""
    if len(result) != len(reference):
        return 1.0
    total = wrong = 0
    for a, b in zip(result, reference):
        if a.shape != b.shape:
            return 1.0
        if a.size == 0:
            continue
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            same = np.isclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True)
        else:
            same = a == b
        total += a.size
        wrong += int(a.size - np.count_nonzero(same))
    return wrong / total if total else 0.0


def compare_trials(bad: Sequence[Sequence[np.ndarray]], good: Sequence[Sequence[np.ndarray]]) -> dict:
    """Each bad trial against the good variant's first trial; the good trials among
    themselves (a fixture whose fix is not deterministic proves nothing)."""
    if not good:
        return {"trials": 0}
    reference = good[0]
    fractions = [wrong_fraction(r, reference) for r in bad]
    good_fractions = [wrong_fraction(r, reference) for r in good[1:]]
    differing = [f for f in fractions if f > 0]
    return {
        "trials": len(fractions),
        "differing_trials": len(differing),
        "wrong_fraction_max": max(fractions) if fractions else 0.0,
        "wrong_fraction_mean": (sum(fractions) / len(fractions)) if fractions else 0.0,
        "wrong_fractions": [round(f, 6) for f in fractions],
        "good_trials": len(good),
        "good_consistent": all(f == 0 for f in good_fractions),
    }
