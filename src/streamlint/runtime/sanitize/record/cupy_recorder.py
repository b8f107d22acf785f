"""CuPy: what its Python layer lets a recorder see. Kernel objects made after install
(`cupy.RawKernel`, `cupy.ElementwiseKernel`) are wrapped: a raw kernel's `const` pointer
parameters are read, its other pointers written (`intent.c_kernel_readonly`); an
elementwise kernel reads its inputs and writes its outputs. Transfers through
`cupy.asarray` and `cupy.asnumpy`; host accesses of pinned arrays made by `cupyx`'s
pinned allocators (`host_arrays.py`); streams and events through their (Python) classes;
allocations and frees through a memory hook (CuPy's pool has no `record_stream`: a block
freed while another stream still uses it is reused at once, cupy/cupy#8068).

Not seen (they live in Cython types that cannot be wrapped): ufuncs and operators on
arrays (`a * 2`, `cupy.tanh`), reductions, and the ndarray methods `get`/`set` called
directly; the report lists the hooks that were installed.
"""

from __future__ import annotations

from typing import Any

from ..intent import c_kernel_readonly
from .handles import device_range, handle_int, host_range
from .host_arrays import HostArrayHooks
from .log_writer import Recorder, is_pinned_numpy


class CupyRecorder:
    def __init__(self, recorder: Recorder) -> None:
        self.rec = recorder
        self.undo: list[tuple[Any, str, Any]] = []
        self.hook = None
        self.host_arrays = HostArrayHooks(recorder.emit, "cupyx")

    def _patch(self, owner: Any, name: str, replacement) -> None:
        self.undo.append((owner, name, getattr(owner, name)))
        setattr(owner, name, replacement)

    def current(self) -> int:
        import cupy

        return self._stream(cupy.cuda.get_current_stream())

    def _stream(self, stream: Any) -> int:
        key = handle_int(stream)
        if key not in self.rec.streams and key != 0:
            try:
                blocking = not stream.is_non_blocking
            except Exception:
                blocking = True
            self.rec.stream(key, blocking)
        return key

    def install(self) -> bool:
        import cupy
        from cupy.cuda import memory_hook
        from cupy.cuda import stream as stream_module

        rec, me = self.rec, self
        raw_original, elementwise_original = cupy.RawKernel, cupy.ElementwiseKernel

        class RawKernel:
            """cupy.RawKernel, recorded."""

            def __init__(self, code, name, *args, **kwargs):
                self._kernel = raw_original(code, name, *args, **kwargs)
                self._name = name
                self._readonly = c_kernel_readonly(code, name)

            def __call__(self, grid, block, args, **kwargs):
                out = self._kernel(grid, block, args, **kwargs)
                reads, writes = [], []
                for i, arg in enumerate(args):
                    r = device_range(arg)
                    if r is not None:
                        (reads if self._readonly is not None and i in self._readonly else writes).append(r)
                rec.emit("launch", stream=me.current(), name=self._name, reads=reads, writes=writes)
                return out

            def __getattr__(self, attr):
                return getattr(self._kernel, attr)

        class ElementwiseKernel:
            """cupy.ElementwiseKernel, recorded."""

            def __init__(self, in_params, out_params, operation, name="kernel", *args, **kwargs):
                self._kernel = elementwise_original(in_params, out_params, operation, name, *args, **kwargs)
                self._name = name
                self._nin = len([p for p in in_params.split(",") if p.strip()])

            def __call__(self, *args, **kwargs):
                out = self._kernel(*args, **kwargs)
                results = out if isinstance(out, tuple) else (out,)
                reads = [r for r in map(device_range, args[: self._nin]) if r]
                writes = [r for r in map(device_range, tuple(args[self._nin:]) + results) if r]
                rec.emit("launch", stream=me.current(), name=self._name, reads=reads, writes=list(dict.fromkeys(writes)))
                return out

            def __getattr__(self, attr):
                return getattr(self._kernel, attr)

        self._patch(cupy, "RawKernel", RawKernel)
        self._patch(cupy, "ElementwiseKernel", ElementwiseKernel)

        asarray_original, asnumpy_original = cupy.asarray, cupy.asnumpy

        def asarray(a, *args, **kwargs):
            out = asarray_original(a, *args, **kwargs)
            source = host_range(a)
            if source is not None:
                stream = me.current()
                pinned = is_pinned_numpy(a)
                rec.emit("copy", stream=stream, name="asarray", reads=[source] if pinned else [],
                         writes=[r for r in [device_range(out)] if r])
                if kwargs.get("blocking"):
                    rec.emit("sync", scope="stream", stream=stream, name="asarray (blocking)")
            return out

        def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
            result = asnumpy_original(a, stream=stream, order=order, out=out, blocking=blocking)
            key = me._stream(stream) if stream is not None else me.current()
            dest = host_range(result)
            rec.emit("copy", stream=key, name="asnumpy", reads=[r for r in [device_range(a)] if r],
                     writes=[dest] if dest else [])
            if blocking or not is_pinned_numpy(result):
                rec.emit("sync", scope="stream", stream=key, name="asnumpy (blocking)")
            return result

        self._patch(cupy, "asarray", asarray)
        self._patch(cupy, "asnumpy", asnumpy)

        base, event_cls = stream_module._BaseStream, stream_module.Event
        sync_o, record_o, wait_o = base.synchronize, base.record, base.wait_event
        ev_record_o, ev_sync_o = event_cls.record, event_cls.synchronize

        def stream_sync(stream):
            sync_o(stream)
            rec.emit("sync", scope="stream", stream=me._stream(stream))

        def stream_record(stream, event=None):
            event = record_o(stream, event)
            rec.emit("record", event=handle_int(event.ptr), stream=me._stream(stream))
            return event

        def stream_wait(stream, event):
            wait_o(stream, event)
            rec.emit("wait", event=handle_int(event.ptr), stream=me._stream(stream))

        def event_record(event, stream=None):
            ev_record_o(event, stream)
            key = me._stream(stream) if stream is not None else me.current()
            rec.emit("record", event=handle_int(event.ptr), stream=key)

        def event_sync(event):
            ev_sync_o(event)
            rec.emit("sync", scope="event", event=handle_int(event.ptr))

        self._patch(base, "synchronize", stream_sync)
        self._patch(base, "record", stream_record)
        self._patch(base, "wait_event", stream_wait)
        self._patch(event_cls, "record", event_record)
        self._patch(event_cls, "synchronize", event_sync)
        device_sync_o = cupy.cuda.runtime.deviceSynchronize

        def device_sync():
            device_sync_o()
            rec.emit("sync", scope="device")

        self._patch(cupy.cuda.runtime, "deviceSynchronize", device_sync)

        class Hook(memory_hook.MemoryHook):
            name = "streamlint-sanitize"

            def malloc_postprocess(self, device_id, size, mem_size, mem_ptr, pmem_id):
                rec.emit("alloc", ptr=int(mem_ptr), size=int(mem_size), stream=me.current())

            def free_preprocess(self, device_id, mem_size, mem_ptr, pmem_id):
                rec.emit("free", ptr=int(mem_ptr), size=int(mem_size))

        self.hook = Hook()
        self.hook.__enter__()
        self.host_arrays.install()  # host reads and writes of pinned NumPy arrays
        return True

    def uninstall(self) -> None:
        self.host_arrays.uninstall()
        if self.hook is not None:
            self.hook.__exit__(None, None, None)
            self.hook = None
        for owner, name, original in reversed(self.undo):
            setattr(owner, name, original)
        self.undo.clear()
