"""cuda-python (`cuda.bindings.driver`): the driver calls a program makes through the module
(installed before the program imports it, so `driver.cuX(...)` and names imported later
both see the wrappers). Copies and memsets know their ranges from their arguments; a
kernel launched with cuLaunchKernel reads and writes every allocation its pointer
arguments fall in (the driver knows no argument intent).
"""

from __future__ import annotations

from typing import Any, Optional

from .handles import handle_int, host_range
from .log_writer import Recorder


def _ptr(value: Any) -> int:
    r = host_range(value)
    return r[0] if r else handle_int(value)


class DriverRecorder:
    def __init__(self, recorder: Recorder) -> None:
        self.rec = recorder
        self.undo: list[tuple[Any, str, Any]] = []
        self.blocks: dict[int, int] = {}  # ptr -> size, from cuMemAlloc

    def _block(self, ptr: int) -> Optional[tuple[int, int]]:
        for base, size in self.blocks.items():
            if base <= ptr < base + size:
                return (base, size)
        return None

    def _stream(self, stream: Any, flags: int = 0) -> int:
        return self.rec.stream(handle_int(stream), blocking=True)

    def install(self) -> bool:
        from cuda.bindings import driver

        rec, me = self.rec, self

        def wrap(name, after):
            original = getattr(driver, name, None)
            if original is None:
                return

            def call(*args):
                result = original(*args)
                try:
                    after(result, *args)
                except Exception as bad:
                    rec.problems.append(f"driver {name}: {bad!r}")
                return result
            self.undo.append((driver, name, original))
            setattr(driver, name, call)

        def ok(result) -> bool:
            err = result[0] if isinstance(result, tuple) else result
            return int(err) == 0

        def copy(name, dst_host: bool, src_host: bool):
            def after(result, dst, src, nbytes, stream=None):
                if not ok(result):
                    return
                key = me._stream(stream) if stream is not None else 0
                rec.emit("copy", stream=key, name=name, reads=[(_ptr(src), int(nbytes))],
                         writes=[(_ptr(dst), int(nbytes))])
                if stream is None:
                    rec.emit("sync", scope="stream", stream=0, name=f"{name} (synchronous)")
            return after

        for name, dst_host, src_host in (("cuMemcpyHtoDAsync", False, True), ("cuMemcpyDtoHAsync", True, False),
                                         ("cuMemcpyDtoDAsync", False, False), ("cuMemcpyAsync", False, False),
                                         ("cuMemcpyHtoD", False, True), ("cuMemcpyDtoH", True, False)):
            wrap(name, copy(name, dst_host, src_host))

        def memset(width):
            def after(result, dst, value, count, stream=None):
                if ok(result):
                    rec.emit("memset", stream=me._stream(stream) if stream is not None else 0,
                             writes=[(handle_int(dst), int(count) * width)], name=f"cuMemsetD{width * 8}")
            return after

        wrap("cuMemsetD8Async", memset(1))
        wrap("cuMemsetD32Async", memset(4))

        def alloc(result, nbytes):
            if ok(result):
                ptr = handle_int(result[1])
                me.blocks[ptr] = int(nbytes)
                rec.emit("alloc", ptr=ptr, size=int(nbytes))

        def free(result, ptr):
            me.blocks.pop(handle_int(ptr), None)

        wrap("cuMemAlloc", alloc)
        wrap("cuMemFree", free)  # cuMemFree synchronizes: a later cuMemAlloc forgets the block's history

        def stream_create(result, flags, *rest):
            if ok(result):
                rec.stream(handle_int(result[1]), blocking=not (int(flags) & 1))  # CU_STREAM_NON_BLOCKING

        wrap("cuStreamCreate", stream_create)
        wrap("cuStreamCreateWithPriority", stream_create)
        wrap("cuStreamSynchronize", lambda r, s: rec.emit("sync", scope="stream", stream=me._stream(s)))
        wrap("cuEventRecord", lambda r, e, s: rec.emit("record", event=handle_int(e), stream=me._stream(s)))
        wrap("cuStreamWaitEvent", lambda r, s, e, *f: rec.emit("wait", event=handle_int(e), stream=me._stream(s)))
        wrap("cuEventSynchronize", lambda r, e: rec.emit("sync", scope="event", event=handle_int(e)))
        wrap("cuCtxSynchronize", lambda r: rec.emit("sync", scope="device"))

        def launch(result, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra=0):
            if not ok(result):
                return
            touched = []
            values = params[0] if isinstance(params, tuple) and len(params) == 2 else ()
            for value in values if isinstance(values, (list, tuple)) else ():
                try:
                    block = me._block(handle_int(value))
                except Exception:
                    block = None
                if block is not None and block not in touched:
                    touched.append(block)
            rec.emit("launch", stream=me._stream(stream), name="cuLaunchKernel", reads=touched, writes=touched)

        wrap("cuLaunchKernel", launch)
        return True

    def uninstall(self) -> None:
        for owner, name, original in reversed(self.undo):
            setattr(owner, name, original)
        self.undo.clear()
