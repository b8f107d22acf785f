"""The library API facts (model/library.py over api/torch_modules.py, cuda_core.py,
interop.py, per_thread.py): what each call becomes in the operation record."""

from __future__ import annotations

import textwrap

import pytest

from streamlint.checker import analyze
from streamlint.model.library import per_thread_switched
from streamlint.model.ops import OpKind
from streamlint.model.values import StreamKind


def record(source: str, name: str):
    analysis = analyze(textwrap.dedent(source))
    return next(r for r in analysis.functions if r.name == name)


@pytest.mark.parametrize("line, frameworks", [
    ('os.environ["CUPY_CUDA_PER_THREAD_DEFAULT_STREAM"] = "1"', {"cupy"}),
    ("os.environ['CUPY_CUDA_PER_THREAD_DEFAULT_STREAM']='1'", {"cupy"}),
    ('os.environ.setdefault("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM", "1")', {"numba"}),
    ("numba.config.CUDA_PER_THREAD_DEFAULT_STREAM = 1", {"numba"}),
    ("config.CUDA_PER_THREAD_DEFAULT_STREAM = True", {"numba"}),
    ('os.environ["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] = "1"', {"numba", "cuda-python"}),
    ('os.environ["CUPY_CUDA_PER_THREAD_DEFAULT_STREAM"] = "0"', set()),
    ("x = 1", set()),
])
def test_per_thread_switches(line, frameworks):
    assert per_thread_switched(line + "\n") == frameworks


def test_per_thread_switch_makes_module_level_work_per_thread():
    src = """
    import os
    os.environ["CUPY_CUDA_PER_THREAD_DEFAULT_STREAM"] = "1"
    import cupy as cp
    a = cp.zeros(4)
    """
    (op,) = [o for o in record(src, "<module>").ops if o.kind is OpKind.KERNEL]
    assert op.stream.kind is StreamKind.PER_THREAD


def test_module_to_nonblocking_writes_parameters_on_the_current_stream():
    src = """
    import torch
    def f(model, s):
        with torch.cuda.stream(s):
            model.to("cuda", non_blocking=True)
        model.half()
        model.cpu()
    """
    ops = record(src, "f").ops
    assert [o.kind for o in ops] == [OpKind.COPY, OpKind.KERNEL, OpKind.COPY_D2H]
    assert ops[0].stream.explicit and ops[0].non_blocking is True
    assert ops[0].accesses[0].key == ("n", "model", "") and ops[0].accesses[0].write
    assert not ops[2].accesses[0].write and ops[2].host_blocking is True


def test_optimizer_step_reads_and_writes_the_parameters():
    src = """
    import torch
    def f(model):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        opt.step()
        opt.zero_grad()
    """
    step, zero = record(src, "f").ops
    assert step.kind is OpKind.KERNEL
    assert [(a.key[1], a.write) for a in step.accesses] == [("model", False), ("model", True)]
    assert [(a.key[1], a.write) for a in zero.accesses] == [("model", True)]


def test_optimizer_subclass_step_is_a_hot_path():
    src = """
    import torch
    class MyOpt(torch.optim.Optimizer):
        def step(self, closure=None):
            x = torch.zeros(3, device="cuda")
            return x.item()
    """
    ops = record(src, "MyOpt.step").ops
    assert all(o.in_forward for o in ops) and any(o.kind is OpKind.IMPLICIT_SYNC for o in ops)


def test_foreach_inplace_writes_its_first_list_only():
    src = """
    import torch
    def f(a, b):
        torch._foreach_add_(a, b)
    """
    (op,) = record(src, "f").ops
    assert {(a.key[1], a.write) for a in op.accesses} == {("a", False), ("b", False), ("a", True)}


def test_linalg_and_fft_are_kernels():
    src = """
    import torch
    def f():
        x = torch.ones(3, 3, device="cuda")
        y = torch.linalg.inv(x)
        z = torch.fft.fft(y)
    """
    kinds = [o.api for o in record(src, "f").ops if o.kind is OpKind.KERNEL]
    assert kinds == ["torch.ones", "torch.linalg.inv", "torch.fft.fft"]


def test_cross_framework_views_keep_the_buffer_identity():
    src = """
    import cupy as cp
    import torch
    from numba import cuda
    def f():
        t = torch.zeros(4, device="cuda")
        a = cp.asarray(t)
        b = torch.as_tensor(a)
        c = cuda.as_cuda_array(b)
        d = torch.from_dlpack(c)
        e = torch.tensor(a)
        return a.sum(), d.sum(), e
    """
    rec = record(src, "f")
    (copy,) = [o for o in rec.ops if o.kind is OpKind.COPY_D2D]  # torch.tensor copies
    assert copy.api == "torch.tensor"
    made = next(o for o in rec.ops if o.api == "torch.zeros")
    site = made.accesses[0].key[1]
    reads = [o for o in rec.ops if o.api in ("a.sum", "d.sum")]
    assert all(o.accesses[0].key[1] == site for o in reads)


def test_cuda_core_stream_wait_on_a_stream_is_wait_stream():
    src = """
    from cuda.core.experimental import Device
    def f():
        dev = Device()
        a = dev.create_stream()
        b = dev.create_stream()
        e = a.record()
        b.wait(e)
        b.wait(a)
        b.sync()
    """
    kinds = [o.kind for o in record(src, "f").ops]
    assert kinds == [OpKind.STREAM_CREATE, OpKind.STREAM_CREATE, OpKind.EVENT_RECORD,
                     OpKind.STREAM_WAIT_EVENT, OpKind.WAIT_STREAM, OpKind.STREAM_SYNC]


def test_unknown_call_given_a_stream_is_work_on_it():
    src = """
    import cupy as cp
    import mylib
    def f(n):
        s = cp.cuda.Stream()
        x = cp.ones(n)
        mylib.scale(x, 2.0, stream=s)
        mylib.scale(x, 2.0, stream=None)
        mylib.launch(s, x)
        mylib.log("done", stream=s)
    """
    ops = [o for o in record(src, "f").ops if o.api.startswith("mylib")]
    assert [o.api for o in ops] == ["mylib.scale", "mylib.launch"]
    assert all(o.kind is OpKind.KERNEL and o.stream.explicit for o in ops)


def test_storage_resize_zero_is_a_release():
    src = """
    import torch
    def f(s):
        t = torch.empty(4, device="cuda")
        with torch.cuda.stream(s):
            u = t * 2
        t.untyped_storage().resize_(0)
        return u
    """
    analysis = analyze(textwrap.dedent(src))
    rec = next(r for r in analysis.functions if r.name == "f")
    assert any(h.kind.name == "RELEASE" or "releas" in h.kind.value for h in rec.hazards)


def test_advanced_indexing_is_a_fresh_pageable_array():
    src = """
    import numpy as np
    import cupy as cp
    import cupyx
    def f(idx):
        h = cupyx.empty_pinned((8,), dtype=np.float32)
        s = cp.cuda.Stream()
        d = cp.empty(3)
        d.set(h[[1, 2, 3]], stream=s)
        d.set(h[1:4], stream=s)
    """
    sets = [o for o in record(src, "f").ops if o.kind is OpKind.COPY_H2D]
    assert [o.host_buffer.mem.name for o in sets] == ["PAGEABLE", "PINNED"]
