"""Metrics per repetition and per flagged statement, from real traces."""

from __future__ import annotations

import pytest

from .rc_data import evidence_of, summary_of

MB = 1 << 20


def med(code, variant):
    return summary_of(code, variant)["median"]


@pytest.mark.slow
def test_three_traced_repetitions_each():
    for code in ("SL101", "SL301", "SL502"):
        for variant in ("bad", "good"):
            assert len(summary_of(code, variant)["reps"]) == 3


def test_pageable_pipeline_copies_pageable_bytes_and_holds_the_host():
    bad, good = med("SL301", "bad"), med("SL301", "good")
    assert bad["pageable_bytes"] == 8 * 16 * MB
    assert good["pageable_bytes"] == 0 and good["pinned_bytes"] == 2 * 8 * 16 * MB
    # the "asynchronous" pageable copies hold the host about as long as they run
    assert bad["pageable_call_ms"] >= 0.5 * bad["pageable_gpu_ms"] > 0
    assert good["copy_call_ms"] < 0.1 * good["host_copy_gpu_ms"]


def test_default_stream_barrier_kills_cross_stream_overlap():
    bad, good = med("SL101", "bad"), med("SL101", "good")
    assert bad["cross_stream_fraction"] < 0.05
    assert good["cross_stream_fraction"] > 0.3
    assert good["copy_kernel_overlap_ms"] > bad["copy_kernel_overlap_ms"]
    assert bad["span_ms"] > 1.3 * good["span_ms"]


def test_device_synchronize_per_chunk_stalls_the_host():
    bad, good = med("SL103", "bad"), med("SL103", "good")
    assert bad["syncs"] >= 8  # one per chunk at least
    assert bad["stall_ms"] > good["stall_ms"]
    assert bad["cross_stream_fraction"] < good["cross_stream_fraction"]


def test_implicit_numba_transfers_are_counted_from_call_less_copies():
    bad, good = med("SL102", "bad"), med("SL102", "good")
    # 10 launches with two NumPy arrays: each copied in and back
    assert bad["copies"] == 40
    assert good["copies"] == 3  # two uploads, one download
    assert bad["copy_ms"] > 5 * good["copy_ms"]


@pytest.mark.slow
def test_stream_creations_and_syncs_per_iteration_are_counted():
    assert med("SL501", "bad")["creates"] == 256 and med("SL501", "good")["creates"] <= 1
    assert med("SL501", "bad")["destroys"] >= 255
    assert med("SL502", "bad")["syncs"] >= 100 and med("SL502", "good")["syncs"] <= 2


def test_numba_host_syncs_come_from_sync_records():
    # Numba's synchronous copies wait through driver calls Kineto does not record as API
    # calls; the synchronization records still show them.
    bad = med("SL202", "bad")
    assert bad["syncs"] >= 1


def test_finding_cost_of_the_pageable_copy():
    cost = summary_of("SL301", "bad")["findings"]["SL301:17"]
    assert cost["occurrences"] == 24  # 8 chunks x 3 traced calls
    assert cost["pageable_bytes"] == 24 * 16 * MB
    assert cost["copies"] == 24
    assert cost["host_blocked_ms"] > 0.5 * cost["host_ms"]


def test_finding_cost_of_item_in_a_loop():
    cost = summary_of("SL502", "bad")["findings"]["SL502:19"]
    assert cost["occurrences"] == 300  # 100 steps x 3 traced calls
    assert cost["syncs"] >= 300
    assert cost["gpu_idle_ms"] > 0  # the GPU drains while the host waits and prepares the next step


def test_the_sl502_fix_overlaps_host_work_with_the_gpu():
    # each step has host work of its own (NumPy) and GPU work: with the per-step .item()
    # they take turns; without it the host prepares the next step while the GPU runs
    bad, good = med("SL502", "bad"), med("SL502", "good")
    assert good["span_ms"] < 0.8 * bad["span_ms"]
    assert bad["gpu_idle_ms"] > 2 * good["gpu_idle_ms"]


def test_reference_ranges_are_costed_separately():
    findings = summary_of("SL401", "bad")["findings"]
    assert set(findings) == {"SL401:48", "SL401:48:ref:47"}
    assert findings["SL401:48:ref:47"]["ops"] >= 3  # the producer kernel, once per call


def test_span_is_the_gpu_window_of_one_call():
    ev = evidence_of("SL301", "good")
    rows = summary_of("SL301", "good")["reps"]
    for rep, row in zip(ev._reps, rows):
        ops = ev.rep_ops(rep)
        assert row["span_ms"] == pytest.approx((max(o.end for o in ops) - min(o.start for o in ops)) * 1e-3)
        assert row["gpu_busy_ms"] <= row["span_ms"] + 1e-9


def test_a_default_stream_barrier_is_measured_by_the_overlap_it_cost_between_streams():
    # SL101's bad variant clears each chunk's output on the legacy default stream between
    # the two streams' work: the next chunk's ready copy waits for the clear each time
    ev = evidence_of("SL101", "bad")
    cost = ev.finding_cost("SL101:26")
    assert cost["barrier_ops"] == cost["occurrences"] == 24
    assert cost["barrier_lost_ms"] / cost["occurrences"] > 0.5  # ms per clear: the other stream's copy held back
    # a synchronize queues nothing on the default stream: no barrier measure, only its host time
    sync = evidence_of("SL103", "bad").finding_cost("SL103:23")
    assert sync["barrier_ops"] == 0 and sync["barrier_lost_ms"] == 0.0 and sync["host_blocked_ms"] > 1.0
