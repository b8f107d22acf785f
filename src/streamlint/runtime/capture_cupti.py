"""The tracer without PyTorch: CUPTI's activity API through NVIDIA's `cupti-python`
(`pip install 'streamlint[cupti]'`).

It records kernels, memcpys (with the host memory kind), memsets, synchronizations and
every runtime and driver call, each as a plain dict the moment its buffer completes
(cupti_events.py turns them into the Chrome trace the rest of the module reads). The
ranges that PyTorch's `record_function` would give (flagged statements, repetitions,
stream markers) are timed here with `cupti.get_timestamp()`, the clock of the activity
records, on the thread's system id, the id CUPTI is told to record for API calls.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from streamlint.runtime import cupti_events
from streamlint.runtime.trace import write_json

BUFFER_BYTES = 8 << 20


def available() -> bool:
    import importlib.util

    return importlib.util.find_spec("cupti") is not None


def _enum_name(enum: Any, value: int) -> str:
    try:
        return enum(value).name
    except ValueError:
        return str(value)


class CuptiCapture:
    """Collects activity records between `start()` and `stop()`, and ranges on request."""

    def __init__(self) -> None:
        from cupti import cupti

        self.cupti = cupti
        self.records: list[dict] = []
        self.ranges: list[tuple[str, float, float, int]] = []
        self._names: dict[tuple[int, int], str] = {}
        self._lock = threading.Lock()
        kinds = cupti.ActivityKind
        self.kinds = [kinds.CONCURRENT_KERNEL, kinds.MEMCPY, kinds.MEMSET, kinds.RUNTIME, kinds.DRIVER,
                      kinds.SYNCHRONIZATION]  # fmt: skip
        self.started = False

    # -- ranges ----------------------------------------------------------------------
    def now(self) -> int:
        return self.cupti.get_timestamp()

    @contextmanager
    def range(self, name: str) -> Iterator[None]:
        """A named range, kept only when it opens while the activity records are
        collected (as `record_function` is seen only by a running profiler): a fixture's
        untraced calls run the same instrumented statements before tracing starts."""
        recording = self.started
        start = self.now()
        try:
            yield
        finally:
            if recording:
                with self._lock:
                    self.ranges.append((name, start, self.now(), threading.get_native_id()))

    # -- activity records ----------------------------------------------------------
    def _api_name(self, kind: str, cbid: int) -> str:
        key = (0 if kind == "driver" else 1, cbid)
        name = self._names.get(key)
        if name is None:
            cupti = self.cupti
            domain = cupti.CallbackDomain.DRIVER_API if kind == "driver" else cupti.CallbackDomain.RUNTIME_API
            try:
                name = str(cupti.get_callback_name(domain, cbid))
            except Exception:
                name = f"cbid {cbid}"
            self._names[key] = name
        return name

    def record_of(self, a: Any) -> dict | None:
        cupti = self.cupti
        kinds = cupti.ActivityKind
        k = a.kind
        if k in (kinds.CONCURRENT_KERNEL, kinds.KERNEL):
            return {"kind": "kernel", "name": str(a.name), "start": a.start, "end": a.end,
                    "stream_id": a.stream_id, "correlation_id": a.correlation_id, "device_id": a.device_id}  # fmt: skip
        if k == kinds.MEMCPY:
            return {"kind": "memcpy", "start": a.start, "end": a.end, "bytes": a.bytes,
                    "copy_kind": _enum_name(cupti.ActivityMemcpyKind, a.copy_kind),
                    "src_kind": _enum_name(cupti.ActivityMemoryKind, a.src_kind),
                    "dst_kind": _enum_name(cupti.ActivityMemoryKind, a.dst_kind),
                    "stream_id": a.stream_id, "correlation_id": a.correlation_id, "device_id": a.device_id}  # fmt: skip
        if k == kinds.MEMSET:
            return {"kind": "memset", "start": a.start, "end": a.end, "bytes": a.bytes, "stream_id": a.stream_id,
                    "correlation_id": a.correlation_id, "device_id": a.device_id}  # fmt: skip
        if k in (kinds.RUNTIME, kinds.DRIVER):
            kind = "runtime" if k == kinds.RUNTIME else "driver"
            return {"kind": kind, "name": self._api_name(kind, a.cbid), "cbid": a.cbid, "start": a.start,
                    "end": a.end, "correlation_id": a.correlation_id, "process_id": a.process_id,
                    "thread_id": a.thread_id}  # fmt: skip
        if k == kinds.SYNCHRONIZATION:
            return {"kind": "synchronization", "type": _enum_name(cupti.ActivitySynchronizationType, a.type),
                    "start": a.start, "end": a.end, "stream_id": a.stream_id,
                    "correlation_id": a.correlation_id}  # fmt: skip
        return None

    def _completed(self, activities: list) -> None:
        kept = [r for r in (self.record_of(a) for a in activities) if r is not None]
        with self._lock:
            self.records.extend(kept)

    def start(self) -> None:
        cupti = self.cupti
        try:  # record API calls under the thread's system id (threading.get_native_id)
            cupti.set_thread_id_type(cupti.ActivityThreadIdType.SYSTEM)
        except Exception:
            pass
        for kind in self.kinds:
            cupti.activity_enable(kind)
        cupti.activity_register_callbacks(lambda: (BUFFER_BYTES, 0), self._completed)
        self.started = True

    def stop(self) -> None:
        if not self.started:
            return
        cupti = self.cupti
        cupti.activity_flush_all(1)
        for kind in self.kinds:
            try:
                cupti.activity_disable(kind)
            except Exception:
                pass
        self.started = False

    def chrome(self) -> dict:
        with self._lock:
            return cupti_events.to_chrome(list(self.records), list(self.ranges))


@contextmanager
def tracing(capture: CuptiCapture, path: str | Path, raw_path: str | Path | None = None,
            synchronize=None) -> Iterator[CuptiCapture]:  # fmt: skip
    """Record the block and write its Chrome trace to `path` (and the raw records to
    `raw_path`, for test data), also when the block raises."""
    capture.start()
    try:
        yield capture
    finally:
        if synchronize is not None:
            try:
                synchronize()
            except Exception:
                pass
        capture.stop()
        write_json(capture.chrome(), path)
        if raw_path is not None:
            write_json({"records": capture.records, "ranges": capture.ranges}, raw_path)
