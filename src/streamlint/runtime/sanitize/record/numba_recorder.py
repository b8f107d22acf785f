"""Numba-CUDA: kernel launches through the dispatcher's launch configuration (argument
intent from the kernel's source, `intent.numba_kernel_writes`; every array written when
the source is not available), transfers through DeviceNDArray's copy methods, streams
and events through their methods, allocations through the context's memalloc, host
accesses of pinned and mapped arrays through `host_arrays.py`.

Numba's streams are blocking (they synchronize with the legacy default stream); a copy
is asynchronous only with a stream (argument or the array's bound stream) and pinned
host memory; NumPy arrays given to a kernel are copied in and back by Numba.
"""

from __future__ import annotations

from typing import Any

from ..intent import numba_kernel_writes
from .handles import device_range, handle_int, host_range
from .host_arrays import HostArrayHooks
from .log_writer import Recorder, is_pinned_numpy


class NumbaRecorder:
    def __init__(self, recorder: Recorder) -> None:
        self.rec = recorder
        self.undo: list[tuple[Any, str, Any]] = []
        self.host_arrays = HostArrayHooks(recorder.emit, "numba.cuda")

    def _patch(self, owner: Any, name: str, make) -> None:
        original = getattr(owner, name)
        self.undo.append((owner, name, original))
        setattr(owner, name, make(original))

    def _stream(self, stream: Any) -> int:
        key = handle_int(stream) if stream else 0
        return self.rec.stream(key, blocking=True)

    def install(self) -> bool:
        import numpy

        if not hasattr(numpy, "row_stack"):  # numba-cuda 0.30 calls it; NumPy 2.5 removed it (as harness.py)
            numpy.row_stack = numpy.vstack
        from numba import cuda
        from numba.cuda import dispatcher
        from numba.cuda.cudadrv import devicearray, driver

        rec, me = self.rec, self

        def launch(original):
            def __call__(config, *args):
                out = original(config, *args)
                try:
                    me.on_launch(config, args)
                except Exception as bad:
                    rec.problems.append(f"numba launch: {bad!r}")
                return out
            return __call__

        self._patch(dispatcher._LaunchConfiguration, "__call__", launch)

        def to_host(original):
            def copy_to_host(arr, ary=None, stream=0):
                out = original(arr, ary, stream)
                me.on_copy(stream or arr.stream, reads=device_range(arr), writes=host_range(out), host=out)
                return out
            return copy_to_host

        def to_device(original):
            def copy_to_device(arr, ary, stream=0):
                out = original(arr, ary, stream)
                source = device_range(ary) or host_range(ary)
                me.on_copy(stream or arr.stream, reads=source, writes=device_range(arr), host=ary)
                return out
            return copy_to_device

        base = devicearray.DeviceNDArrayBase
        self._patch(base, "copy_to_host", to_host)
        self._patch(base, "copy_to_device", to_device)

        def sync_stream(original):
            def synchronize(stream):
                original(stream)
                rec.emit("sync", scope="stream", stream=me._stream(stream))
            return synchronize

        def record(original):
            def record_(event, stream=0):
                original(event, stream)
                rec.emit("record", event=handle_int(event.handle), stream=me._stream(stream))
            return record_

        def wait(original):
            def wait_(event, stream=0):
                original(event, stream)
                rec.emit("wait", event=handle_int(event.handle), stream=me._stream(stream))
            return wait_

        def sync_event(original):
            def synchronize(event):
                original(event)
                rec.emit("sync", scope="event", event=handle_int(event.handle))
            return synchronize

        def sync_device(original):
            def synchronize(*args, **kwargs):
                out = original(*args, **kwargs)
                rec.emit("sync", scope="device")
                return out
            return synchronize

        def memalloc(original):
            def memalloc_(ctx, bytesize, *args, **kwargs):
                mem = original(ctx, bytesize, *args, **kwargs)
                try:
                    rec.emit("alloc", ptr=handle_int(mem.device_ctypes_pointer), size=int(bytesize))
                except Exception as bad:
                    rec.problems.append(f"numba memalloc: {bad!r}")
                return mem
            return memalloc_

        self._patch(driver.Stream, "synchronize", sync_stream)
        self._patch(driver.Event, "record", record)
        self._patch(driver.Event, "wait", wait)
        self._patch(driver.Event, "synchronize", sync_event)
        self._patch(driver.Context, "synchronize", sync_device)
        self._patch(driver.Context, "memalloc", memalloc)
        self._patch(cuda, "synchronize", sync_device)
        self.host_arrays.install()  # host reads and writes of pinned and mapped NumPy arrays
        return True

    def uninstall(self) -> None:
        self.host_arrays.uninstall()
        for owner, name, original in reversed(self.undo):
            setattr(owner, name, original)
        self.undo.clear()

    # ------------------------------------------------------------ events
    def on_launch(self, config: Any, args: tuple) -> None:
        stream = self._stream(config.stream)
        py_func = getattr(config.dispatcher, "py_func", None)
        writes_at = numba_kernel_writes(py_func) if py_func is not None else None
        reads, writes, host_arrays = [], [], []
        for i, arg in enumerate(args):
            r = device_range(arg)
            if r is None:
                h = host_range(arg)
                if h is not None:
                    host_arrays.append(h)  # Numba copies it in, and back out
                continue
            (writes if writes_at is None or i in writes_at else reads).append(r)
        name = getattr(py_func, "__name__", "kernel")
        self.rec.emit("launch", stream=stream, name=name, reads=reads + host_arrays, writes=writes + host_arrays)
        if host_arrays and stream == 0:
            self.rec.emit("sync", scope="stream", stream=0, name=f"{name} (implicit copy back)")

    def on_copy(self, stream: Any, reads, writes, host: Any) -> None:
        key = self._stream(stream)
        self.rec.emit("copy", stream=key, name="copy", reads=[reads] if reads else [],
                      writes=[writes] if writes else [])
        is_host = host is not None and host_range(host) is not None
        if not stream or (is_host and not is_pinned_numpy(host)):
            # No stream: the synchronous driver call. Pageable memory: the driver blocks.
            self.rec.emit("sync", scope="stream", stream=key, name="copy (blocking)")
