"""PyTorch: every aten op through a TorchDispatchMode (as `torch.cuda._sanitizer` does: the
schema's argument mutability says read or write, fresh outputs are written, aliasing
outputs are views), and streams, events, syncs, allocations and frees through
`torch.cuda._gpu_trace` callbacks.

Beyond CSAN: host accesses to pinned memory (where async copies race the host), copies
marked async only when they are (`non_blocking` with pinned host memory), a blocking
copy or `.item()` recorded as the stream sync it is, byte ranges instead of data_ptrs,
and `record_stream` recorded for the allocator model instead of ignored.
"""

from __future__ import annotations

from typing import Any, Optional

from .log_writer import Recorder

# Ops that allocate without running a kernel: their outputs are not written.
NO_KERNEL = frozenset({"aten::empty", "aten::empty_strided", "aten::empty_like", "aten::new_empty",
                       "aten::new_empty_strided", "aten::_pin_memory", "aten::set_", "aten::resize_"})  # fmt: skip
# Ops that read a device value back to the host: a blocking read, then a stream sync.
READ_BACK = frozenset({"aten::_local_scalar_dense", "aten::nonzero", "aten::masked_select", "aten::is_nonzero",
                       "aten::unique", "aten::_unique2", "aten::equal"})  # fmt: skip
COPIES = frozenset({"aten::copy_", "aten::_to_copy", "aten::_copy_from"})

_ACTIVE: Optional["TorchRecorder"] = None
_CALLBACKS_REGISTERED = False


def _tensors(value: Any):
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)


def tensor_range(t) -> Optional[tuple[int, int]]:
    if t.numel() == 0 or t.data_ptr() == 0:
        return None
    span = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    return (t.data_ptr(), span * t.element_size())


def _stream_of(torch_stream) -> int:
    import torch

    if isinstance(torch_stream, torch.cuda.Stream):
        return torch_stream.cuda_stream
    return torch.cuda.Stream(stream_id=torch_stream.stream_id, device_index=torch_stream.device_index,
                             device_type=torch_stream.device_type).cuda_stream


class TorchRecorder:
    def __init__(self, recorder: Recorder) -> None:
        self.rec = recorder
        self.pending_allocs: dict[int, Any] = {}
        self.mode = None

    # ------------------------------------------------------------ install
    def install(self) -> bool:
        global _ACTIVE
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode

        owner = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                out = func(*args, **kwargs)
                try:
                    owner.on_op(func, args, kwargs, out)
                except Exception as bad:  # never break the program being checked
                    owner.rec.problems.append(f"torch op {func}: {bad!r}")
                return out

        _register_callbacks(torch)
        _ACTIVE = self
        self.mode = Mode()
        self.mode.__enter__()
        return True

    def uninstall(self) -> None:
        global _ACTIVE
        if self.mode is not None:
            self.mode.__exit__(None, None, None)
        _ACTIVE = None

    # ------------------------------------------------------------ ops
    def on_op(self, func, args, kwargs, out) -> None:
        import torch

        schema = func._schema
        name = schema.name
        if name == "aten::record_stream":
            r = tensor_range(args[0])
            if r is not None:
                ptr = args[0].untyped_storage().data_ptr()
                self.rec.emit("record-stream", ptr=ptr, stream=_stream_of(args[1]))
            return
        if _is_view(schema):
            return  # metadata only: the op that later uses the view is what touches memory
        reads, writes, tensors = [], [], []
        for i, arg in enumerate(schema.arguments):
            value = args[i] if i < len(args) else kwargs.get(arg.name)
            written = arg.alias_info is not None and arg.alias_info.is_write
            for t in _tensors(value):
                tensors.append(t)
                (writes if written else reads).append(t)
        fresh = [t for ret, value in zip(schema.returns, out if isinstance(out, (list, tuple))
                                          and len(schema.returns) > 1 else (out,))
                 if ret.alias_info is None for t in _tensors(value)]  # fmt: skip
        self._match_allocs(fresh + writes)
        if name not in NO_KERNEL:
            writes += fresh
        tensors += fresh
        cuda = [t for t in tensors if t.is_cuda]
        if not cuda:
            self._host(name, reads, writes)
            return
        stream = torch.cuda.current_stream(cuda[0].device).cuda_stream
        if name in NO_KERNEL:
            return
        if name in COPIES and any(not t.is_cuda for t in tensors):
            self._copy(name, stream, reads, writes, args, kwargs)
            return
        self.rec.emit("launch", stream=stream, name=name,
                      reads=_ranges(t for t in reads if t.is_cuda), writes=_ranges(t for t in writes if t.is_cuda))
        if name in READ_BACK:
            self.rec.emit("sync", scope="stream", stream=stream, name=name)

    def _host(self, name: str, reads, writes) -> None:
        # Only pinned memory can be touched by asynchronous device work.
        pinned_reads = _ranges(t for t in reads if _pinned(t))
        pinned_writes = _ranges(t for t in writes if _pinned(t))
        if pinned_reads or pinned_writes:
            self.rec.emit("host", name=name, reads=pinned_reads, writes=pinned_writes)

    def _copy(self, name: str, stream: int, reads, writes, args, kwargs) -> None:
        non_blocking = bool(kwargs.get("non_blocking", args[2] if name == "aten::copy_" and len(args) > 2 else False))
        if name == "aten::_to_copy":
            non_blocking = bool(kwargs.get("non_blocking", False))
        host_side = [t for t in reads + writes if not t.is_cuda]
        asynchronous = non_blocking and all(_pinned(t) for t in host_side)
        self.rec.emit("copy", stream=stream, name=name, reads=_ranges(reads), writes=_ranges(writes))
        if not asynchronous:
            self.rec.emit("sync", scope="stream", stream=stream, name=name + " (blocking)")

    def _match_allocs(self, tensors) -> None:
        """Give the allocation callbacks' blocks (pointer only) their size and stream: the
        stream of the op whose output lands in the block first."""
        if not self.pending_allocs:
            return
        import torch

        for t in tensors:
            if not t.is_cuda:
                continue
            storage = t.untyped_storage()
            event = self.pending_allocs.pop(storage.data_ptr(), None)
            if event is not None:
                event.size = storage.nbytes()
                event.stream = torch.cuda.current_stream(t.device).cuda_stream

    # ------------------------------------------------------------ trace callbacks
    def on_alloc(self, ptr: int) -> None:
        event = self.rec.emit("alloc", ptr=ptr)
        if event is not None:
            self.pending_allocs[ptr] = event

    def on_free(self, ptr: int) -> None:
        self.pending_allocs.pop(ptr, None)
        self.rec.emit("free", ptr=ptr)


def _is_view(schema) -> bool:
    returns_alias = bool(schema.returns) and all(r.alias_info is not None for r in schema.returns)
    writes = any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)
    return returns_alias and not writes


def _pinned(t) -> bool:
    try:
        return (not t.is_cuda) and t.is_pinned()
    except RuntimeError:
        return False


def _ranges(tensors) -> list:
    out = []
    for t in tensors:
        r = tensor_range(t)
        if r is not None and r not in out:
            out.append(r)
    return out


def _register_callbacks(torch) -> None:
    """`_gpu_trace` callbacks cannot be removed, so they are registered once and forward to
    the active recorder."""
    global _CALLBACKS_REGISTERED
    if _CALLBACKS_REGISTERED:
        return
    import importlib

    try:  # PyTorch 2.2 and later
        trace = importlib.import_module("torch.cuda._gpu_trace")
    except ImportError:
        trace = importlib.import_module("torch.utils._cuda_trace")

    def forward(handler):
        def callback(*args):
            if _ACTIVE is not None:
                try:
                    handler(_ACTIVE, *args)
                except Exception as bad:
                    _ACTIVE.rec.problems.append(f"trace callback: {bad!r}")
        return callback

    hooks = {
        "register_callback_for_event_creation": lambda r, e: r.rec.emit("event-create", event=e),
        "register_callback_for_event_deletion": lambda r, e: r.rec.emit("event-delete", event=e),
        "register_callback_for_event_record": lambda r, e, s: r.rec.emit("record", event=e, stream=s),
        "register_callback_for_event_wait": lambda r, e, s: r.rec.emit("wait", event=e, stream=s),
        "register_callback_for_memory_allocation": lambda r, p: r.on_alloc(p),
        "register_callback_for_memory_deallocation": lambda r, p: r.on_free(p),
        "register_callback_for_stream_creation": lambda r, s: r.rec.stream(s, blocking=False),
        "register_callback_for_device_synchronization": lambda r: r.rec.emit("sync", scope="device"),
        "register_callback_for_stream_synchronization": lambda r, s: r.rec.emit("sync", scope="stream", stream=s),
        "register_callback_for_event_synchronization": lambda r, e: r.rec.emit("sync", scope="event", event=e),
    }
    for register, handler in hooks.items():
        getattr(trace, register)(forward(handler))
    torch._C._activate_gpu_trace()
    _CALLBACKS_REGISTERED = True
