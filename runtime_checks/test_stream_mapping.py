"""CUPTI stream ids -> the program's streams, through the marker ops (real traces)."""

from __future__ import annotations

from .rc_data import evidence_of, trace_of
from streamlint.runtime.streams import LEGACY_LABEL, marker_ops, parse_marker, stream_map


def test_marker_names_round_trip():
    assert parse_marker("streamlint::stream::cupy stream, line 21::0x5f3a") == ("cupy stream, line 21", 0x5F3A)
    assert parse_marker("streamlint::stream::legacy default stream::0x0") == (LEGACY_LABEL, 0)
    assert parse_marker("SL301:17") is None


def test_cupy_pipeline_streams_are_named_by_their_creating_line():
    t = trace_of("SL101", "bad")
    streams = stream_map(t)
    used = {op.stream for op in evidence_of("SL101", "bad").ops}
    labels = {streams[s].label for s in used}
    # two blocking CuPy streams made on line 21, and the legacy default stream that the
    # flagged fill runs on
    assert labels == {"cupy stream, line 21", LEGACY_LABEL}
    # each call of run() creates its two streams anew: two per traced repetition
    ev = evidence_of("SL101", "bad")
    for rep in ev._reps:
        rep_streams = {op.stream for op in ev.rep_ops(rep)}
        assert sum(1 for s in rep_streams if streams[s].label == "cupy stream, line 21") == 2
    fills = [op for op in t.ops_issued_in(t.ranges_named("SL101:26")[0])]
    assert fills and all(streams[op.stream].is_legacy_default for op in fills)


def test_good_variant_keeps_everything_on_its_streams():
    streams = stream_map(trace_of("SL101", "good"))
    used = {op.stream for op in evidence_of("SL101", "good").ops}
    assert not any(streams[s].is_legacy_default for s in used)


def test_numba_and_torch_streams_are_mapped():
    numba = stream_map(trace_of("SL401", "bad"))
    used = {op.stream for op in evidence_of("SL401", "bad").ops}
    assert {numba[s].label for s in used} == {"numba stream, line 38", "numba stream, line 39"}
    torch_map = stream_map(trace_of("SL301", "good"))
    used = {op.stream for op in evidence_of("SL301", "good").ops}
    assert {torch_map[s].label for s in used} == {"torch stream, line 12"}
    assert all(torch_map[s].handle not in (None, 0) for s in used)


def test_marker_ops_are_not_program_work():
    t = trace_of("SL301", "bad")
    markers = marker_ops(t)
    assert markers
    ev = evidence_of("SL301", "bad")
    assert not any(op.correlation in markers for op in ev.ops)
    assert len(ev.ops) + sum(1 for op in t.gpu if op.correlation in markers) == len(t.gpu)


def test_a_stream_created_per_iteration_gets_a_lane_each():
    # SL501: a new CuPy stream per chunk; every one is a distinct CUPTI stream
    streams = stream_map(trace_of("SL501", "bad"))
    used = {op.stream for op in evidence_of("SL501", "bad").ops}
    assert len(used) >= 256
    assert sum(1 for s in used if streams[s].label == "cupy stream, line 12") >= 256
