"""The CUPTI tracer's records, parsed into the same evidence as the PyTorch profiler's:
from raw activity records recorded on the GPU (a Numba-only and a CuPy-only program,
traced without PyTorch), committed as test data."""

from __future__ import annotations

import pytest

from streamlint.runtime import cupti_events
from streamlint.runtime.evidence import Evidence
from streamlint.runtime.streams import stream_map
from streamlint.runtime.trace import MAX_NAME, api_kind, load, parse, read_json

from .rc_data import SCRIPTS


def raw(name: str) -> dict:
    return read_json(SCRIPTS / name / "script" / "cupti_records.json.gz")


def from_raw(name: str):
    data = raw(name)
    return parse(cupti_events.to_chrome(data["records"], [tuple(r) for r in data["ranges"]]))


@pytest.mark.parametrize("name", ["numba_race", "cupy_pipeline"])
def test_raw_records_give_the_trace_the_tracer_wrote(name):
    rebuilt = from_raw(name)
    written = load(SCRIPTS / name / "script" / "trace.json.gz")
    assert len(rebuilt.gpu) == len(written.gpu) > 0
    assert len(rebuilt.api) == len(written.api) and len(rebuilt.ranges) == len(written.ranges)
    assert sorted(o.name[:MAX_NAME] for o in rebuilt.gpu) == sorted(o.name for o in written.gpu)  # trimmed names


def test_numba_copies_and_their_driver_calls():
    t = from_raw("numba_race")
    copies = [o for o in t.gpu if o.kind == "memcpy"]
    assert {o.direction for o in copies} >= {"HtoD", "DtoH"}
    assert any(o.host_memory == "Pageable" for o in copies)
    # every copy has its issuing driver call: Numba's synchronous cuMemcpyHtoD is recorded,
    # so it counts as host blocking (the PyTorch profiler records none of them)
    calls = [t.launch_of(o) for o in copies]
    assert all(c is not None for c in calls)
    assert {c.domain for c in calls} == {"driver"}
    assert all(api_kind(c.name) == "copy" for c in calls)
    kernels = [o for o in t.gpu if o.kind == "kernel"]
    assert any("produce" in o.name for o in kernels) and any("consume" in o.name for o in kernels)


def test_streams_are_named_after_their_creating_lines_through_memset_markers():
    t = from_raw("numba_race")
    labels = {info.label for info in stream_map(t).values()}
    assert "numba stream, line 34" in labels and "numba stream, line 35" in labels
    assert "legacy default stream" in labels
    # the markers are bookkeeping: no marker memset is left among the program's ops
    ev = Evidence(t)
    assert all(o.kind != "memset" for o in ev.ops)


def test_cupy_syncs_and_stream_creations():
    t = from_raw("cupy_pipeline")
    kinds = {c.kind for c in t.api}
    assert {"create", "sync", "launch"} <= kinds
    creates = [c for c in t.api if c.kind == "create" and "Stream" in c.name]
    assert len(creates) >= 12  # one per batch (SL501)
    assert any(s.kind == "Stream Sync" for s in t.syncs)


def test_event_names_follow_kineto():
    assert cupti_events.memcpy_name("HTOD", "PAGEABLE", "DEVICE") == "Memcpy HtoD (Pageable -> Device)"
    assert cupti_events.memcpy_name("DTOH", "DEVICE", "PINNED") == "Memcpy DtoH (Device -> Pinned)"
    sync = cupti_events.event_of({"kind": "synchronization", "type": "STREAM_SYNCHRONIZE", "start": 1000,
                                  "end": 3000, "stream_id": 13, "correlation_id": 5})  # fmt: skip
    assert sync["cat"] == "cuda_sync" and sync["args"]["cuda_sync_kind"] == "Stream Sync"
    assert sync["ts"] == 1.0 and sync["dur"] == 2.0
    assert cupti_events.event_of({"kind": "graph_trace"}) is None
