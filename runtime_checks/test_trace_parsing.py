"""Parsing real Kineto traces (recorded on the GPU, committed trimmed)."""

from __future__ import annotations

import gzip
import json

import pytest

from .rc_data import PAIRS, trace_of
from streamlint.runtime import trace as T


def test_memcpy_names_give_direction_and_host_memory_kind():
    assert T.parse_memcpy_name("Memcpy HtoD (Pageable -> Device)") == ("HtoD", "Pageable")
    assert T.parse_memcpy_name("Memcpy DtoH (Device -> Pinned)") == ("DtoH", "Pinned")
    assert T.parse_memcpy_name("Memcpy DtoD (Device -> Device)") == ("DtoD", "")
    assert T.parse_memcpy_name("Memset (Device)") == ("", "")


def test_api_calls_are_classified_by_what_they_do():
    assert T.api_kind("cudaStreamSynchronize") == "sync"
    assert T.api_kind("cudaDeviceSynchronize") == "sync"
    assert T.api_kind("cudaStreamWaitEvent") == "wait"
    assert T.api_kind("cudaMemcpyAsync") == "copy"
    assert T.api_kind("cuLaunchKernelEx") == "launch"
    assert T.api_kind("cudaStreamCreateWithPriority") == "create"
    assert T.api_kind("cudaStreamDestroy") == "destroy"
    assert T.api_kind("cudaHostAlloc") == "alloc"
    assert T.api_kind("cudaGetDeviceCount") == "other"


def test_pageable_copies_of_the_sl301_pipeline():
    bad, good = trace_of("SL301", "bad"), trace_of("SL301", "good")
    bad_h2d = [o for o in bad.gpu if o.direction == "HtoD"]
    good_h2d = [o for o in good.gpu if o.direction == "HtoD"]
    assert bad_h2d and all(o.host_memory == "Pageable" for o in bad_h2d)
    assert good_h2d and all(o.host_memory == "Pinned" for o in good_h2d)
    assert {o.bytes for o in bad_h2d} == {(1 << 22) * 4}  # one 4M-float chunk per copy
    # D2H copies land in pinned memory in both variants
    assert all(o.host_memory == "Pinned" for o in bad.gpu if o.direction == "DtoH")


def test_torch_kernels_are_linked_to_their_launch_calls():
    t = trace_of("SL103", "bad")
    kernels = [o for o in t.gpu if o.kind == "kernel"]
    assert kernels
    for op in kernels:
        call = t.launch_of(op)
        assert call is not None and call.kind == "launch"
        assert call.start <= op.start  # issued before it ran


def test_numba_copies_have_no_recorded_call_but_are_kept():
    # Kineto records Numba's kernel launches (cuLaunchKernelEx) but not its cuMemcpy* calls.
    t = trace_of("SL102", "bad")
    launches = [c for c in t.api if c.name.startswith("cuLaunchKernel")]
    assert launches
    copies = [o for o in t.gpu if o.is_copy]
    assert copies and all(t.launch_of(o) is None for o in copies)
    assert all(t.issue_time(o) == o.start for o in copies)


def test_sync_records_carry_kind_and_stream():
    t = trace_of("SL502", "bad")
    kinds = {s.kind for s in t.syncs}
    assert "Stream Sync" in kinds
    stream_syncs = [s for s in t.syncs if s.kind == "Stream Sync"]
    assert all(s.stream is not None and s.stream >= 0 for s in stream_syncs)
    # each one has the cudaStreamSynchronize call of the same correlation id
    calls = {c.correlation: c for c in t.api if c.name == "cudaStreamSynchronize"}
    assert sum(1 for s in stream_syncs if s.correlation in calls) >= 0.9 * len(stream_syncs)


def test_record_function_ranges_nest_inside_repetitions():
    t = trace_of("SL301", "bad")
    reps = t.ranges_named("streamlint::rep::", prefix=True)
    flagged = t.ranges_named("SL301:17")
    assert len(reps) == 3
    assert len(flagged) == 3 * 8  # the flagged copy runs once per chunk
    for r in flagged:
        outer = [o.name for o in t.enclosing_ranges(r.start + 1e-3, r.tid)]
        assert any(name.startswith("streamlint::rep::") for name in outer)
        assert "SL301:17" in outer


def test_ops_issued_in_a_range_are_the_work_of_that_statement():
    t = trace_of("SL301", "bad")
    for r in t.ranges_named("SL301:17"):
        ops = t.ops_issued_in(r)
        assert [o.direction for o in ops if o.is_copy] == ["HtoD"]


def test_trimmed_traces_are_a_fixed_point_of_trim():
    path = PAIRS / "SL101" / "bad.trace.json.gz"
    with gzip.open(path, "rt") as fh:
        data = json.load(fh)
    again = T.trim(data)
    assert again["traceEvents"] == data["traceEvents"]
    assert {ev["cat"] for ev in data["traceEvents"]} <= T.KEPT_CATEGORIES


def test_trim_drops_what_is_not_read_and_rebases_time():
    raw = {"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 100.0, "dur": 1.0, "pid": 1, "tid": 1},
        {"ph": "X", "cat": "kernel", "name": "k" * 500, "ts": 150.5, "dur": 2.0, "pid": 0, "tid": 7,
         "args": {"stream": 7, "correlation": 3, "grid": [1, 1, 1]}},
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "ts": 150.0, "pid": 1, "tid": 1},
    ]}  # fmt: skip
    out = T.trim(raw)["traceEvents"]
    assert len(out) == 1
    assert out[0]["ts"] == 0.0 and out[0]["args"] == {"stream": 7, "correlation": 3}
    assert len(out[0]["name"]) == T.MAX_NAME


def test_write_and_read_round_trip(tmp_path):
    data = {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0.0, "dur": 1.0, "pid": 0,
                             "tid": 7, "args": {"stream": 7, "correlation": 1}}]}  # fmt: skip
    for name in ("t.json", "t.json.gz"):
        T.write_json(data, tmp_path / name)
        assert T.read_json(tmp_path / name) == data


@pytest.mark.parametrize("code", ["SL101", "SL202", "SL401", "SL501"])
def test_every_committed_trace_has_gpu_work_and_repetitions(code):
    for variant in ("bad", "good"):
        t = trace_of(code, variant)
        assert t.gpu and t.api
        assert len(t.ranges_named("streamlint::rep::", prefix=True)) >= 1
