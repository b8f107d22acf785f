"""Stream markers, issued inside the traced process.

Every stream the program creates through `torch.cuda.Stream`, `cupy.cuda.Stream` or
`numba.cuda.stream` gets, at creation and while tracing, a marker (a one-element kernel
with the torch tracer, a 4-byte memset with CUPTI: backends.py) inside a
`streamlint::stream::<label>::<handle>` range; so do the legacy default stream and
PyTorch's current stream at the start of each traced repetition. The label names the
framework and the line of the traced file that created the stream. streams.py reads
them back.

Streams are keyed by creation, not by handle: a stream created where a destroyed one
was gets a marker (and a lane) of its own, even when the driver reuses the handle.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Any, Iterator

from streamlint.runtime.streams import LEGACY_LABEL, marker_name


def handle_of(obj: Any) -> int | None:
    """The integer `cudaStream_t` of a CuPy, Numba or cuda-bindings handle."""
    for attr in ("ptr", "cuda_stream"):
        value = getattr(obj, attr, None)
        if isinstance(value, int):
            return value
    handle = getattr(obj, "handle", obj)
    for attempt in (lambda h: h.value, int, lambda h: int(h.getPtr())):
        try:
            value = attempt(handle)
        except Exception:
            continue
        if isinstance(value, int):
            return value
    return None


class StreamMarkers:
    def __init__(self, backend: Any, traced_file: str) -> None:
        self.backend = backend
        self.torch = sys.modules.get("torch")
        self.traced_file = traced_file
        self.active = False
        self.marked: set[int] = set()
        self.created: list[dict] = []
        self.installed: dict[str, bool] = {}
        self._busy = False

    # -- markers ---------------------------------------------------------------
    def start_trace(self) -> None:
        self.active = True
        self.marked.clear()

    def stop_trace(self) -> None:
        self.active = False

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Streams made here are ours (a spin's `ExternalStream`), not the program's."""
        busy, self._busy = self._busy, True
        try:
            yield
        finally:
            self._busy = busy

    def mark(self, handle: int | None, label: str) -> None:
        if not self.active or handle is None or handle in self.marked or self._busy:
            return
        self.marked.add(handle)
        self._busy = True
        try:
            with self.backend.range(marker_name(label, handle)):
                self.backend.issue_marker(handle)
        finally:
            self._busy = False

    def mark_defaults(self) -> None:
        self.mark(0, LEGACY_LABEL)
        if self.torch is not None and self.torch.cuda.is_initialized():
            current = self.torch.cuda.current_stream().cuda_stream
            if current != 0:
                self.mark(current, "torch current stream")

    def created_stream(self, framework: str, obj: Any) -> None:
        if self._busy:
            return
        handle = handle_of(obj)
        line = self._creating_line()
        label = LEGACY_LABEL if handle == 0 else f"{framework} stream" + (f", line {line}" if line else "")
        self.created.append({"framework": framework, "handle": handle, "line": line})
        if handle:
            self.marked.discard(handle)  # a new stream, even if its handle was used before
        self.mark(handle, label)

    def _creating_line(self) -> int | None:
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.traced_file:
                return frame.f_lineno
            frame = frame.f_back
        return None

    # -- creation hooks -------------------------------------------------------------
    def install(self) -> dict[str, bool]:
        self.torch = sys.modules.get("torch")
        if self.torch is not None:
            self.installed["torch"] = self._hook_torch()
        if "cupy" in sys.modules:
            self.installed["cupy"] = self._hook_cupy(sys.modules["cupy"])
        if "numba.cuda" in sys.modules:
            self.installed["numba"] = self._hook_numba(sys.modules["numba.cuda"])
        return self.installed

    def _hook_torch(self) -> bool:
        cls = self.torch.cuda.Stream
        original = cls.__new__
        markers = self

        def __new__(kind, *args, **kwargs):
            stream = original(kind, *args, **kwargs)
            markers.created_stream("torch", stream)
            return stream

        try:
            cls.__new__ = staticmethod(__new__)
        except (TypeError, AttributeError):
            return False
        return True

    def _hook_cupy(self, cupy: Any) -> bool:
        cls = cupy.cuda.Stream
        original = cls.__init__
        markers = self

        def __init__(stream, *args, **kwargs):
            original(stream, *args, **kwargs)
            markers.created_stream("cupy", stream)

        try:
            cls.__init__ = __init__
        except (TypeError, AttributeError):
            return False
        return True

    def _hook_numba(self, cuda: Any) -> bool:
        original = getattr(cuda, "stream", None)
        if original is None:
            return False
        markers = self

        def stream(*args, **kwargs):
            made = original(*args, **kwargs)
            markers.created_stream("numba", made)
            return made

        cuda.stream = stream
        return True
