"""Capabilities of the v3 model, each as a positive and a negative program written the way
projects write them: which hazards the model finds (kind and function), and that the fix
silences them."""

import textwrap

import libcst as cst
import pytest

from streamlint.model.file_model import analyze_file


def found(source: str) -> list[tuple[str, str]]:
    model = analyze_file(cst.parse_module(textwrap.dedent(source)), "prog.py")
    return sorted((h.kind.value, h.function.rsplit(".", 1)[1]) for h in model.hazards)


# name: (program with {fix} as the deciding spot, the bug's text there, the fix's text there, hazards of the bug)
CASES = {
    "cupy stream entered by with, read on another stream": ("""
        import cupy as cp
        def f(n):
            s1 = cp.cuda.Stream(non_blocking=True)
            s2 = cp.cuda.Stream(non_blocking=True)
            with s1:
                a = cp.random.random(n)
            {fix}
            with s2:
                b = cp.sqrt(a)
            s2.synchronize()
            return b
        """, "pass", "s2.wait_event(s1.record())", [("read_after_write", "f")]),
    # non-blocking: s1 reads `noise` the legacy stream made, and the legacy stream reads `left`
    "blocking cupy streams and the legacy stream order each other": ("""
        import cupy as cp
        def f(x, n):
            s1 = cp.cuda.Stream({fix})
            noise = cp.random.standard_normal(n)
            left = cp.empty(n)
            with s1:
                cp.add(x, noise, out=left)
            return cp.linalg.norm(left)
        """, "non_blocking=True", "", [("read_after_write", "f"), ("read_after_write", "f")]),
    "numba kernel writes what its body stores into": ("""
        import numpy as np
        from numba import cuda

        @cuda.jit
        def scale(x, out):
            i = cuda.grid(1)
            out[i] = 2 * x[i]

        def f(n):
            s1 = cuda.stream()
            s2 = cuda.stream()
            d_x = cuda.device_array(n, dtype=np.float32)
            d_y = cuda.device_array(n, dtype=np.float32)
            scale[64, 256, s1](d_x, d_y)
            {fix}
            scale[64, 256, s2](d_y, d_x)
            s2.synchronize()
        """, "pass", "s1.synchronize()", [("read_after_write", "f"), ("write_after_read", "f")]),
    "slices are regions": ("""
        import cupy as cp
        def f(n, half):
            s1 = cp.cuda.Stream(non_blocking=True)
            s2 = cp.cuda.Stream(non_blocking=True)
            img = cp.zeros(n)
            cp.cuda.runtime.deviceSynchronize()
            with s1:
                img[:half] = cp.random.random(half)
            with s2:
                img[{fix}] = cp.random.random(n - half)
            cp.cuda.runtime.deviceSynchronize()
        """, ":half", "half:", [("write_after_write", "f")]),
    "a sync every few iterations leaves the last ones unwaited": ("""
        import torch
        def f(model, n, batch):
            out = torch.empty(n, batch, pin_memory=True)
            for i in range(n):
                x = torch.randn(batch, device="cuda")
                out[i].copy_(model(x), non_blocking=True)
                if {fix}:
                    torch.cuda.synchronize()
            return out.mean().item()
        """, "(i + 1) % 8 == 0", "True", [("host_read_before_sync", "f")]),
    "a project's @contextmanager that enters a side stream": ("""
        from contextlib import contextmanager
        import torch

        class Overlap:
            def __init__(self):
                self.stream = torch.cuda.Stream()

            @contextmanager
            def side(self):
                with torch.cuda.stream(self.stream):
                    yield

            def run(self, encoder, batch_cpu):
                batch = batch_cpu.cuda()
                {fix}
                with self.side():
                    feats = encoder(batch)
                torch.cuda.current_stream().wait_stream(self.stream)
                feats.record_stream(torch.cuda.current_stream())
                return feats
        """, "pass", "self.stream.wait_stream(torch.cuda.current_stream())", [("read_after_write", "run")]),
    "a model passed in runs on the stream it is called under": ("""
        import torch
        def step(model, batch):
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                logits = model(batch)
            {fix}
            top = logits.topk(5)
            logits.record_stream(torch.cuda.current_stream())
            return top
        """, "pass", "torch.cuda.current_stream().wait_stream(side)", [("read_after_write", "step")]),
    "an async collective's work handle orders the current stream when waited": ("""
        import torch
        import torch.distributed as dist
        def reduce(grad, out):
            comm = torch.cuda.Stream()
            comm.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(comm):
                work = dist.all_reduce(grad, async_op=True)
            {fix}
            out.copy_(grad)
            grad.record_stream(comm)
        """, "pass", "work.wait()", [("read_after_write", "reduce")]),
    "numba's auto_synchronize waits at the end of the with": ("""
        import numpy as np
        from numba import cuda
        def f(n):
            stream = cuda.stream()
            h = cuda.pinned_array(n, dtype=np.float32)
            with stream.auto_synchronize():
                d = cuda.to_device(h, stream=stream)
                d.copy_to_host(h, stream=stream)
                {fix}
            return float(h[0])
        """, "return float(h[0])", "pass", [("host_read_before_sync", "f")]),
    "a CUDA graph's launch runs the work it captured": ("""
        import cupy
        def f(func, n):
            s = cupy.cuda.Stream(non_blocking=True)
            a = cupy.random.random((n,))
            {fix}
            with s:
                s.begin_capture()
                out = func(a)
                graph = s.end_capture()
                graph.launch()
            s.synchronize()
            return out
        """, "pass", "cupy.cuda.Device().synchronize()", [("read_after_write", "f")]),  # at the launch
    "cuda-python copies by argument, events named by argument": ("""
        from cuda.bindings import runtime as cudart
        D2D = cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice
        def f(nbytes):
            err, s1 = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
            err, s2 = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
            err, ev = cudart.cudaEventCreate()
            err, d_a = cudart.cudaMalloc(nbytes)
            err, d_b = cudart.cudaMalloc(nbytes)
            err, = cudart.cudaMemsetAsync(d_a, 0, nbytes, s1)
            err, = cudart.cudaEventRecord(ev, {fix})
            err, = cudart.cudaStreamWaitEvent(s2, ev, 0)
            err, = cudart.cudaMemcpyAsync(d_b, d_a, nbytes, D2D, s2)
            err, = cudart.cudaDeviceSynchronize()
        """, "s2", "s1", [("read_after_write", "f")]),
    "memory returned while still written, with no caller in sight": ("""
        import torch
        def features(batch):
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                out = batch.cuda(non_blocking=True) * 2
                done = side.record_event()
            return {fix}
        """, "out", "out, done", [("read_after_write", "features")]),
    "a public method's next call meets what the last one left pending on self": ("""
        import torch
        class Reducer:
            def __init__(self, n):
                self.grads = torch.zeros(n, device="cuda")
                self.stream = torch.cuda.Stream()

            def reduce(self, grad):
                {fix}
                self.grads.add_(grad)
                self.stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(self.stream):
                    self.grads.div_(8)
        """, "pass", "torch.cuda.current_stream().wait_stream(self.stream)", [("write_after_write", "reduce")]),
    "testing a CUDA tensor's truth waits for its stream": ("""
        import torch
        def f(x):
            host = torch.empty(4, pin_memory=True)
            d = torch.ones(4, device="cuda")
            host.copy_(d, non_blocking=True)
            {fix}
            return float(host[0])
        """, "pass", "if torch.isfinite(d).all(): pass", [("host_read_before_sync", "f")]),
    "a wait for an event the caller does not name still waits": ("""
        import torch
        class Offloader:
            def __init__(self, n):
                self.stream = torch.cuda.Stream()
                self.host = torch.empty(n, pin_memory=True)

            def offload(self, grads: torch.Tensor, copied: torch.cuda.Event) -> float:
                self.stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(self.stream):
                    self.host.copy_(grads, non_blocking=True)
                    copied.record(self.stream)
                {fix}
                return float(self.host.norm())
        """, "pass", "copied.synchronize()", [("host_read_before_sync", "offload")]),
    "views a class keeps of its staging buffer are that buffer's memory": ("""
        import torch
        class Bookkeeping:
            def __init__(self, n: int, device: torch.device):
                self.cpu_buf = torch.zeros(2 * n, dtype=torch.int32, pin_memory=True)
                self.lengths = self.cpu_buf[:n]
                self.gpu_buf = torch.empty(2 * n, dtype=torch.int32, device=device)

            def upload(self, lengths: torch.Tensor, n: int) -> torch.Tensor:
                self.lengths[:n] = lengths
                self.gpu_buf.copy_(self.cpu_buf, non_blocking={fix})
                return self.gpu_buf
        """, "True", "False", [("host_write_before_sync", "upload")]),
    "memory allocated in a module-level loop is another iteration's on the next": ("""
        import torch
        load_stream = torch.cuda.Stream()
        host_batches = [torch.randn(512, 768).pin_memory() for _ in range(16)]
        for host_batch in host_batches:
            with torch.cuda.stream(load_stream):
                batch = host_batch.to("cuda", non_blocking=True)
            torch.cuda.current_stream().wait_stream(load_stream)
            out = batch * 2
            {fix}
        """, "pass", "batch.record_stream(torch.cuda.current_stream())", [("release_without_record", "<module>")]),
    "del drops a tensor's memory where it stands": ("""
        import torch
        def offload(model, x, host):
            side = torch.cuda.Stream()
            act = model(x.cuda())
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                host.copy_(act, non_blocking=True)
            {fix}
            del act
            side.synchronize()
            return host
        """, "pass", "side.synchronize()", [("release_without_record", "offload")]),
    "a tensor carried to the next iteration is still the body's allocation": ("""
        import torch
        def offload_every_step(block, n: int, host_acts):
            side = torch.cuda.Stream()
            x = torch.randn(64, 64, device="cuda")
            for i in range(n):
                x = block(x)
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    host_acts[i].copy_(x, non_blocking=True)
                {fix}
            side.synchronize()
            return host_acts
        """, "pass", "x.record_stream(side)", [("release_without_record", "offload_every_step")]),
    "an operation given a list of tensors reads each of them": ("""
        import torch
        def concat_and_offload(n: int, dim: int):
            side = torch.cuda.Stream()
            host = torch.empty(n, 2 * dim, pin_memory=True)
            left = torch.randn(n, dim, device="cuda")
            right = torch.randn(n, dim, device="cuda")
            feats = torch.cat([left, right], dim=1)
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                host.copy_(feats, non_blocking=True)
                {fix}
                copied = side.record_event()
            return host, copied
        """, "pass", "feats.record_stream(side)", [("release_without_record", "concat_and_offload")]),
    "a side stream forked and never joined back is reported at the fork": ("""
        import torch
        import torch.distributed as dist
        class GradBucketer:
            def __init__(self, numel: int):
                self.bucket = torch.empty(numel, device="cuda")
                self.reduction_stream = torch.cuda.Stream()

            def add_grad(self, grad: torch.Tensor) -> None:
                self.bucket.copy_(grad)
                self._flush()

            def _flush(self) -> None:
                self.reduction_stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(self.reduction_stream):
                    dist.all_reduce(self.bucket)
                {fix}
        """, "pass", "torch.cuda.current_stream().wait_stream(self.reduction_stream)",
        [("write_after_read", "_flush")]),
    "a public method hands out what its side stream may still write": ("""
        import torch
        class Evaluator:
            def __init__(self, model):
                self.model = model
                self.eval_stream = torch.cuda.Stream()

            def evaluate(self, x: torch.Tensor) -> torch.Tensor:
                self.eval_stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(self.eval_stream):
                    logits = x.softmax(-1)
                    x.record_stream(self.eval_stream)
                {fix}
                return logits
        """, "pass", "torch.cuda.current_stream().wait_stream(self.eval_stream)", [("read_after_write", "evaluate")]),
    "a module a class holds reads its parameters on the stream it runs on": ("""
        import torch
        class Evaluator:
            def __init__(self, model):
                self.model = model
                self.eval_stream = torch.cuda.Stream()

            def evaluate_then_offload(self, x: torch.Tensor) -> None:
                self.eval_stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(self.eval_stream):
                    self.model(x)
                    x.record_stream(self.eval_stream)
                {fix}
                self.model.to("cpu")
        """, "pass", "torch.cuda.current_stream().wait_stream(self.eval_stream)",
        [("write_after_read", "evaluate_then_offload")]),
    "a tensor flattened from a list lives where the list's tensors do": ("""
        import torch
        import torch.distributed as dist
        from torch._utils import _flatten_dense_tensors
        class Reducer:
            def __init__(self, n: int):
                self.comm_stream = torch.cuda.Stream()
                self.host_norms = torch.empty(n, pin_memory=True)

            def _reduce(self, bucket):
                flat = _flatten_dense_tensors(bucket)
                dist.all_reduce(flat)
                {fix}

            def reduce(self, grads, norms: torch.Tensor) -> float:
                self.comm_stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(self.comm_stream):
                    self.host_norms.copy_(norms, non_blocking=True)
                    self._reduce(grads)
                return self.host_norms.max().item()
        """, "pass", "assert torch.isfinite(flat).all()", [("host_read_before_sync", "reduce")]),
    "resizing a tensor's storage to nothing releases its memory now": ("""
        import torch
        class Offloader:
            def __init__(self):
                self.copy_stream = torch.cuda.Stream()

            def offload(self, shape):
                full = torch.empty(shape, device="cuda")
                self.copy_stream.wait_stream(torch.cuda.current_stream())
                host = torch.empty(shape, pin_memory=True)
                with torch.cuda.stream(self.copy_stream):
                    host.copy_(full, non_blocking=True)
                {fix}
                full.untyped_storage().resize_(0)
                self.copy_stream.synchronize()
                return host
        """, "pass", "self.copy_stream.synchronize()", [("release_without_record", "offload")]),
    "memory an object keeps on its side stream, handed out, needs the caller's stream recorded": ("""
        import torch
        class Prefetcher:
            def __init__(self, loader):
                self.loader = iter(loader)
                self.stream = torch.cuda.Stream()
                self.preload()

            def preload(self):
                batch = next(self.loader)
                with torch.cuda.stream(self.stream):
                    self.next_input = batch.cuda(non_blocking=True).float()

            def next(self):
                torch.cuda.current_stream().wait_stream(self.stream)
                input = self.next_input
                {fix}
                self.preload()
                return input
        """, "pass", "input.record_stream(torch.cuda.current_stream())", [("release_without_record", "next")]),
    "a tensor operation under a chosen stream shows its receiver is a tensor there": ("""
        import torch
        class NormReducer:
            def __init__(self):
                self._norm_stream = torch.cuda.Stream()

            def reduce(self, flat_grads):
                {fix}
                with torch.cuda.stream(self._norm_stream):
                    return flat_grads.norm(p=2)
        """, "pass", "self._norm_stream.wait_stream(torch.cuda.current_stream())", [("read_after_write", "reduce")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_capability(name: str) -> None:
    source, bug, fix, expected = CASES[name]
    assert found(source.replace("{fix}", bug)) == expected
    assert found(source.replace("{fix}", fix)) == []


def test_operations_of_a_helper_run_in_the_callers_loop():
    from streamlint.model.readings.operations import operations

    source = textwrap.dedent("""
        import torch
        def loss_value(loss):
            return loss.item()
        def train(model, batches):
            total = 0.0
            for batch in batches:
                loss = model(batch.cuda())
                total += loss_value(loss)
            once = loss_value(model(torch.zeros(1, device="cuda")))
            return total + once
        """)
    model = analyze_file(cst.parse_module(source), "prog.py")
    ops = [(o.operation.op, o.in_loop, bool(o.chain)) for o in operations(model, "train")]
    assert ("implicit synchronization", True, True) in ops  # the helper's .item(), per step
    assert ("implicit synchronization", False, True) in ops  # the same helper once, after the loop
    assert all(op != "implicit synchronization" for op, _, chain in ops if not chain)


def test_a_callees_use_of_a_parameter_is_evidence_for_the_caller():
    source = textwrap.dedent("""
        import torch
        def keep_for(t, s):
            t.record_stream(s)
        def f(x):
            keep_for(x, torch.cuda.current_stream())
            return x
        def g(x):
            return x
        """)
    model = analyze_file(cst.parse_module(source), "prog.py")
    summaries = {q.rsplit(".", 1)[1]: w.summary for (q, c), w in model.solved.walks.items() if not c.args}
    assert summaries["keep_for"].evidence == (("t", ("cuda_buffer",)),)
    assert summaries["f"].returns.kind.value == "buffer" and summaries["f"].returns.memory.value == "device"
    assert summaries["g"].returns.kind.value == "unknown"


def test_an_address_into_raw_memory_is_that_memory():
    source = textwrap.dedent("""
        import cupy as cp
        def f(n, src):
            s1 = cp.cuda.Stream(non_blocking=True)
            mem = cp.cuda.alloc(n)
            dst = mem + 64
            dst.copy_from_device_async(src, n, s1)
        """)
    model = analyze_file(cst.parse_module(source), "prog.py")
    (summary,) = [w.summary for (q, _), w in model.solved.walks.items() if q == "prog.f"]
    accesses = [e for e in summary.effects if e.kind.value == "access"]
    # the copy through the offset pointer touches the allocation itself; the `+` launched nothing
    assert accesses and all(e.path.root.site == "prog.f#3" and e.site == "prog.f#6" for e in accesses)
