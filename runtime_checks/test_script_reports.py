"""Script reports: verdict tables in Markdown, a self-contained HTML page, the script's
own output kept, the trace for Perfetto, stream lanes keyed by creation."""

from __future__ import annotations

import io
import json

import pytest

from streamlint.runtime import chrome_export, verify
from streamlint.runtime.hooks import StreamMarkers

from .rc_data import SCRIPTS

PNG = b"\x89PNG"


@pytest.mark.slow  # traces and plots a script's report (PNG timelines)
def test_report_folder_of_a_script(tmp_path):
    out = io.StringIO()
    data = verify.write_report(SCRIPTS / "race_missing_wait", tmp_path, out)
    s = data["script"]
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| Line | Rule | Verdict | Why | Measure | Executions |" in md
    assert "warm-up left out" in md and "provoked" in md
    assert "ran once as `__main__`" in md and "warm-up calls" not in md  # the script header, not the pairs'
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in page and "src='script.png'" not in page
    for name in (s["timeline"], s["timeline_full"], "race_SL401_22.png"):
        assert (tmp_path / name).read_bytes().startswith(PNG)
    assert (tmp_path / "script.stdout.txt").read_text().startswith("checksum")
    assert json.loads((tmp_path / "report.json").read_text())["script"]["summary"]


@pytest.mark.slow  # analyses a script's committed traces
def test_console_prints_a_verdict_per_finding(tmp_path):
    out = io.StringIO()
    data = verify.write_report(SCRIPTS / "race_fixed", tmp_path, out)
    code = verify.summarize(data, out)
    text = out.getvalue()
    assert code == 0
    assert "race_fixed.py:24: SL401 not observed:" in text and "Verdicts:" in text


def test_trace_out_names_stream_lanes(tmp_path):
    target = chrome_export.export(SCRIPTS / "numba_race" / "script" / "trace.json.gz", tmp_path / "t.json")
    events = json.loads(target.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    assert any(n.startswith("numba stream, line 34") for n in names)
    assert any(e.get("ph") == "X" and e.get("cat") == "kernel" for e in events)


def test_every_lane_is_named_once_with_the_pytorch_tracer():
    from collections import Counter

    from .rc_data import PAIRS

    # Kineto puts synchronization records on the GPU process with the stream as lane
    data = chrome_export.with_names(chrome_export.read_json(PAIRS / "SL401" / "bad.trace.json.gz"))
    names = Counter((e["pid"], e["tid"]) for e in data["traceEvents"]
                    if e.get("ph") == "M" and e["name"] == "thread_name")  # fmt: skip
    assert names and max(names.values()) == 1
    lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in data["traceEvents"] if e.get("ph") == "M"
             and e["name"] == "thread_name"}  # fmt: skip
    assert lanes[(0, 47)].startswith("numba stream, line 38")


class _Backend:
    def __init__(self):
        self.marked = []

    def range(self, name):
        from contextlib import nullcontext

        self.marked.append(name)
        return nullcontext()

    def issue_marker(self, handle):
        pass


class _Stream:
    def __init__(self, ptr):
        self.ptr = ptr


def test_a_stream_reusing_a_destroyed_stream_s_handle_gets_its_own_marker():
    backend = _Backend()
    markers = StreamMarkers(backend, __file__)
    markers.start_trace()
    markers.created_stream("cupy", _Stream(0x5000))
    markers.created_stream("cupy", _Stream(0x5000))  # the driver handed out the same handle again
    assert len([m for m in backend.marked if m.endswith("::0x5000")]) == 2
    with markers.quiet():  # a spin kernel's own ExternalStream is not the program's
        markers.created_stream("torch", _Stream(0x6000))
    assert not any(m.endswith("::0x6000") for m in backend.marked)
