"""The library API facts (model/api/*.py: torch_api, torch_modules, cuda_core, interop,
per_thread) as the v3 model applies them: what each call does in a function's summary, read
through `streamlint explain`'s rendering (ported from the v2 test of the operation record,
whose cases it keeps)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from streamlint.commands.explain_text import explain
from streamlint.model.file_model import analyze_file
from streamlint.model.syntax.per_thread import settings
from streamlint.rules.sl101_default_stream_barrier import per_thread_switched


def summary(source: str, qualname: str) -> list[str]:
    """The effects of `qualname`'s summary in its first (root) context, one line each, without
    their site tags."""
    model = analyze_file(cst.parse_module(textwrap.dedent(source)), "lib.py")
    first = explain(model, qualname).split("\n\n")[0]
    assert "context: any caller" in first or "context: hot" in first, first
    if "  effects: none" in first:
        return []
    lines = first.split("  effects:\n", 1)[1].split("\n  returns:")[0].split("\n  digest:")[0]
    return [line.strip().rsplit("  [", 1)[0] for line in lines.splitlines() if line.startswith("    ")]


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
    module = cst.parse_module(line + "\n")
    assert per_thread_switched(module) == frameworks
    assert bool(settings(module)) is (line != "x = 1")


@pytest.mark.xfail(strict=True, reason="docs/model-cases.md 1.10: the per-thread default-stream dimension is "
                   "decided, not built: the model still takes a switched framework's stream 0 as the legacy one "
                   "(SL101 reads the switch from the syntax layer)")
def test_per_thread_switch_makes_module_level_work_per_thread():
    effects = summary("""
    import os
    os.environ["CUPY_CUDA_PER_THREAD_DEFAULT_STREAM"] = "1"
    import cupy as cp
    a = cp.zeros(4)
    """, "<module>")
    assert "cupy.zeros: kernel on the default stream" not in effects


def test_module_to_nonblocking_writes_parameters_on_the_current_stream():
    effects = summary("""
    import torch
    def f(model, s):
        with torch.cuda.stream(s):
            model.to("cuda", non_blocking=True)
        model.half()
        model.cpu()
    """, "f")
    assert effects[0] == "write model on s"  # the move, on the stream current there
    assert "torch.operation: kernel on the current stream" in effects  # `half()` converts in place
    assert "torch.Tensor.to: D2H copy on the current stream, host waits, host memory pageable" in effects
    assert effects[-1] == "host waits for the current stream"  # `cpu()` blocks


def test_optimizer_step_reads_and_writes_the_parameters():
    effects = summary("""
    import torch
    def f(model):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        opt.step()
        opt.zero_grad()
    """, "f")
    assert effects == ["read model on the current stream", "write model on the current stream"] * 2


def test_optimizer_subclass_step_is_a_hot_path():
    model = analyze_file(cst.parse_module(textwrap.dedent("""
    import torch
    class MyOpt(torch.optim.Optimizer):
        def step(self, closure=None):
            x = torch.zeros(3, device="cuda")
            return x.item()
    """)), "lib.py")
    text = explain(model, "MyOpt.step")
    assert "context: hot: on every call of MyOpt.step" in text
    assert "torch.Tensor.item: implicit synchronization on the current stream, host waits" in text


def test_foreach_inplace_writes_its_first_list_only():
    effects = summary("""
    import torch
    def f():
        a = [torch.zeros(3, device="cuda")]
        b = [torch.ones(3, device="cuda")]
        torch._foreach_add_(a, b)
    """, "f")
    assert effects[2:] == ["read <allocation lib.f#1> on the current stream",
                           "read <allocation lib.f#3> on the current stream",
                           "write <allocation lib.f#1> on the current stream"]


def test_foreach_on_lists_of_unknown_tensors_is_silent():
    assert summary("""
    import torch
    def f(a, b):
        torch._foreach_add_(a, b)
    """, "f") == []  # unknown stays silent: nothing shows the lists hold CUDA tensors


def test_linalg_and_fft_are_kernels():
    effects = summary("""
    import torch
    def f():
        x = torch.ones(3, 3, device="cuda")
        y = torch.linalg.inv(x)
        z = torch.fft.fft(y)
    """, "f")
    kernels = [i for i, e in enumerate(effects) if e == "torch.operation: kernel on the current stream"]
    assert len(kernels) == 2
    assert effects[kernels[0] + 1] == "read <allocation lib.f#1> on the current stream"  # inv reads x
    assert effects[kernels[1] + 1] == "read <allocation lib.f#3> on the current stream"  # fft reads y


def test_cross_framework_views_keep_the_buffer_identity():
    effects = summary("""
    import cupy as cp
    import torch
    from numba import cuda
    def f():
        t = torch.zeros(4, device="cuda")
        a = cp.asarray(t)
        b = torch.as_tensor(a)
        c = cuda.as_cuda_array(b)
        d = torch.from_dlpack(c)
        return a.sum(), d.sum()
    """, "f")
    # every view is `t`'s memory: CuPy's sum reads it on CuPy's stream, torch's on torch's
    assert "read <allocation lib.f#1> on the default stream" in effects
    assert "read <allocation lib.f#1> on the current stream" in effects


def test_cuda_core_stream_wait_on_a_stream_is_wait_stream():
    effects = summary("""
    from cuda.core.experimental import Device
    def f():
        dev = Device()
        a = dev.create_stream()
        b = dev.create_stream()
        e = a.record()
        b.wait(e)
        b.wait(a)
        b.sync()
    """, "f")
    assert "the stream made at lib.f#3 records event <allocation lib.f#7>" in effects
    assert "the stream made at lib.f#5 waits for event <allocation lib.f#7>" in effects
    assert "the stream made at lib.f#5 waits for the stream made at lib.f#3" in effects  # `b.wait(a)`
    assert effects[-1] == "host waits for the stream made at lib.f#5"


def test_unknown_call_given_a_stream_is_work_on_it():
    effects = summary("""
    import cupy as cp
    import mylib
    def f(n):
        s = cp.cuda.Stream()
        x = cp.ones(n)
        mylib.scale(x, 2.0, stream=s)
        mylib.scale(x, 2.0, stream=None)
        mylib.launch(s, x)
        mylib.log("done", stream=s)
    """, "f")
    on_s = [e for e in effects if e.endswith("on the stream made at lib.f#1")]
    assert on_s == ["read <allocation lib.f#3> on the stream made at lib.f#1"] * 2  # `scale(stream=s)`, `launch(s, x)`


def test_storage_resize_zero_is_a_release():
    effects = summary("""
    import torch
    def f(s):
        t = torch.empty(4, device="cuda")
        with torch.cuda.stream(s):
            u = t * 2
        t.untyped_storage().resize_(0)
        return u
    """, "f")
    released = "<allocation lib.f#1> released, made on the current stream"
    assert effects.count(released) == 2  # at `resize_(0)`, and at the return


def test_advanced_indexing_is_a_fresh_pageable_array():
    effects = summary("""
    import numpy as np
    import cupy as cp
    import cupyx
    def f(idx):
        h = cupyx.empty_pinned((8,), dtype=np.float32)
        s = cp.cuda.Stream()
        d = cp.empty(3)
        d.set(h[[1, 2, 3]], stream=s)
        d.set(h[1:4], stream=s)
    """, "f")
    sets = [e for e in effects if e.startswith("cupy.ndarray.set:")]
    assert [e.rsplit("host memory ", 1)[1] for e in sets] == ["pageable", "pinned"]


def test_a_device_copy_into_an_untold_tensor_under_a_chosen_stream_is_device_to_device():
    # `out` has a device the code never shows; under the side stream the code chose it is CUDA memory, so the copy
    # from the model's output is queued there and the host does not wait. Outside a chosen stream it stays untold.
    source = """
        import torch

        def stage(model, x, out, side):
            with torch.cuda.stream(side):
                out.copy_(model(x))

        def plain(model, x, out):
            out.copy_(model(x).cuda())
    """
    staged = [line for line in summary(source, "stage") if "copy_" in line]
    assert staged and all("D2D copy" in line and "host waits" not in line for line in staged), staged
    plain = [line for line in summary(source, "plain") if "copy_" in line]
    assert plain and all("D2D copy" not in line for line in plain), plain


def test_a_queue_is_a_container_of_what_is_put_on_it():
    # what one put on a queue is what `get` hands back: a CUDA tensor, read on the current stream
    source = """
        import queue
        import torch

        def relay(x, side):
            q = queue.Queue(maxsize=2)
            with torch.cuda.stream(side):
                q.put(x.cuda(non_blocking=True))
            y = q.get()
            return y * 2
    """
    lines = summary(source, "relay")
    assert any(line.startswith("read <allocation") and "on the current stream" in line for line in lines), lines


def test_a_function_started_on_a_thread_begins_on_the_default_stream():
    # `threading.Thread(target=self._refresh)`, an executor's `submit(fn)`: the new thread's current stream is
    # PyTorch's default stream, not the one the starting code had current; a function nobody starts keeps the
    # caller's current stream. (That default stream is no stream the code chose: a tensor of a device not told stays
    # untold there, so the kernel here is made on memory the code places on the GPU.)
    source = textwrap.dedent("""
        import threading
        from concurrent.futures import ThreadPoolExecutor
        import torch

        class Refresher:
            def __init__(self, model):
                self.model = model
                self.thread = threading.Thread(target=self._refresh, daemon=True)

            def _refresh(self):
                for p in self.model.parameters():
                    torch.ones(8, device="cuda").mul_(2)

        def offload(x):
            return x.detach().clone()

        def start(pool, x):
            return pool.submit(offload, x)

        def plain(x):
            return x.detach().clone()
    """)
    model = analyze_file(cst.parse_module(source), "lib.py")
    refresh = explain(model, "Refresher._refresh")
    assert "on a thread of its own" in refresh and "kernel on the default stream" in refresh, refresh
    assert "on a thread of its own" in explain(model, "offload")
    plain = explain(model, "plain")
    assert "on a thread of its own" not in plain and "on the default stream" not in plain, plain
