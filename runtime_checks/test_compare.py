"""Trial comparison: the fraction of values that differ."""

from __future__ import annotations

import numpy as np

from streamlint.runtime.compare import compare_trials, load_result, wrong_fraction


def test_wrong_fraction_counts_values():
    ref = [np.arange(10, dtype=np.float32)]
    bad = [ref[0].copy()]
    bad[0][:3] = -1
    assert wrong_fraction(bad, ref) == 0.3
    assert wrong_fraction([ref[0] + 1e-7], ref) == 0.0  # within tolerance
    assert wrong_fraction([ref[0][:5]], ref) == 1.0  # shapes differ
    assert wrong_fraction([np.array([1, 2])], [np.array([1, 3])]) == 0.5


def test_compare_trials_against_the_first_good_trial():
    good = [[np.ones(4)], [np.ones(4)]]
    bad = [[np.ones(4)], [np.array([1, 0, 0, 1.0])]]
    out = compare_trials(bad, good)
    assert out["trials"] == 2 and out["differing_trials"] == 1
    assert out["wrong_fraction_max"] == 0.5 and out["wrong_fraction_mean"] == 0.25
    assert out["good_consistent"] is True
    assert compare_trials(bad, [[np.ones(4)], [np.zeros(4)]])["good_consistent"] is False


def test_results_round_trip_through_npz(tmp_path):
    path = tmp_path / "result_0.npz"
    arrays = [np.arange(3), np.ones((2, 2))] + [np.zeros(1)] * 10
    np.savez(path, **{f"a_{i}": a for i, a in enumerate(arrays)})
    loaded = load_result(path)
    assert len(loaded) == 12 and np.array_equal(loaded[1], arrays[1])  # a_10 sorts after a_2
