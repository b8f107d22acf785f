"""`--trace-out`: a recorded trace for Perfetto (ui.perfetto.dev) or chrome://tracing.

The records hold trimmed traces (trace.py): complete ("X") events whose GPU work sits on
`tid` = CUPTI stream id. This adds the metadata events that name each lane after the
stream it is (the line that created it, from the stream markers: streams.py), the host
thread, and the two processes, so the trace opens with the same names as the pictures.
"""

from __future__ import annotations

import json
from pathlib import Path

from streamlint.runtime.streams import stream_map
from streamlint.runtime.trace import GPU_CATEGORIES, events_of, parse, read_json


def _meta(name: str, pid, tid, value: str) -> dict:
    return {"ph": "M", "name": name, "pid": pid, "tid": tid, "args": {"name": value}}


def with_names(data: dict | list) -> dict:
    events = [dict(ev) for ev in events_of(data)]
    streams = stream_map(parse(data))
    gpu_pids = {ev.get("pid") for ev in events if ev.get("cat") in GPU_CATEGORIES}
    host = {(ev.get("pid"), ev.get("tid")) for ev in events if ev.get("cat") not in GPU_CATEGORIES}
    meta = []
    lanes: dict[tuple, str] = {}  # each lane named once: a stream's name wins over a host thread's
    for pid in sorted(gpu_pids, key=str):
        meta.append(_meta("process_name", pid, 0, f"GPU {pid}"))
        for info in streams.values():
            lanes[(pid, info.cupti_id)] = f"{info.label} (stream {info.cupti_id})"
    for pid in sorted({pid for pid, _ in host if pid not in gpu_pids}, key=str):
        meta.append(_meta("process_name", pid, 0, "host"))
    for pid, tid in sorted(host, key=str):
        # the PyTorch tracer puts synchronization records on the GPU process, lane = stream
        lanes.setdefault((pid, tid), f"host thread {tid}")
    meta += [_meta("thread_name", pid, tid, name) for (pid, tid), name in lanes.items()]
    for ev in events:  # GPU lanes keyed by stream, whichever tracer wrote the trace
        if ev.get("cat") in GPU_CATEGORIES and isinstance(ev.get("args"), dict) and "stream" in ev["args"]:
            ev["tid"] = ev["args"]["stream"]
    return {"traceEvents": meta + events, "displayTimeUnit": "ms"}


def export(source: str | Path, target: str | Path) -> Path:
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(with_names(read_json(source))), encoding="utf-8")
    return target
