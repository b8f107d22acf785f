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
    # `self(x)` runs the class's own `__call__` (a functor calling itself): its side-stream copy is seen
    "self(x) runs the class's own __call__": ("""
        import torch
        class Prefetcher:
            def __init__(self):
                self.stream = torch.cuda.Stream()
            def __call__(self, batch):
                with torch.cuda.stream(self.stream):
                    return batch.to("cuda", non_blocking=True)
            def first_loss(self, model, batch):
                moved = self(batch)
                {fix}
                return model(moved).sum()
        """, "pass", "torch.cuda.current_stream().wait_stream(self.stream); moved.record_stream(torch.cuda.current_stream())",
        [("read_after_write", "__call__"), ("release_without_record", "first_loss")]),
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
            d_z = cuda.device_array(n, dtype=np.float32)
            scale[64, 256, s1](d_x, d_y)
            {fix}
            scale[64, 256, s2](d_z, d_x)
            s2.synchronize()
        """, "pass", "s1.synchronize()", [("write_after_read", "f")]),  # s1 only reads d_x: no write to meet
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
    "two streams a class made at two sites are two streams": ("""
        import cupy as cp
        class Pipeline:
            def __init__(self):
                self.load = cp.cuda.Stream(non_blocking=True)
                self.compute = cp.cuda.Stream(non_blocking=True)
            def step(self, n):
                with self.load:
                    x = cp.random.random(n)
                {fix}
                with self.compute:
                    y = cp.exp(x)
                self.compute.synchronize()
                return y
        """, "pass", "self.compute.wait_event(self.load.record())", [("read_after_write", "step")]),
    "chainer's cuda backend is cupy under chainer's names": ("""
        from chainer.backends import cuda
        def f(n):
            side = cuda.Stream(non_blocking=True)
            x = cuda.cupy.zeros(n)
            {fix}
            with side:
                y = cuda.cupy.exp(x)
            side.synchronize()
            return y
        """, "pass", "side.wait_event(cuda.Stream.null.record())", [("read_after_write", "f")]),
    "an array made over raw memory is that memory, and a kernel set up lazily on self runs": ("""
        import cupy as cp
        class Scaler:
            def __init__(self, nbytes):
                self.stream = cp.cuda.Stream(non_blocking=True)
                self.memory = cp.cuda.alloc(nbytes)
                self.kernel = None
            def run(self, n):
                if self.kernel is None:
                    self.kernel = cp.ElementwiseKernel("float32 x", "float32 y", "y = x * 2", "double")
                out = cp.ndarray((n,), dtype="float32", memptr=self.memory)
                self.kernel(out, out, stream=self.stream)
                {fix}
                again = cp.ndarray((n,), dtype="float32", memptr=self.memory)
                total = again.sum()
                cp.cuda.runtime.deviceSynchronize()
                return total
        """, "pass", "self.stream.synchronize()", [("read_after_write", "run")]),
    "a view through the CUDA array interface is the same memory": ("""
        import torch
        from numba import cuda
        @cuda.jit
        def clip(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] = min(x[i], 1.0)
        def f(n):
            side = torch.cuda.Stream()
            t = torch.ones(n, device="cuda")
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                t.mul_(2)
            {fix}
            clip[1, 256](cuda.as_cuda_array(t))
        """, "pass", "side.synchronize()",
        # one problem: the kernel's store into `t` (a second writer: its updates may be lost),
        # its read and its release after are all ordered by the one wait the store needs (a
        # reported race is taken as waited for)
        [("write_after_write", "f")]),
    "a cuda.core kernel may write every buffer it is given": ("""
        from cuda.core.experimental import Device, LaunchConfig, launch
        def run(kernel, n):
            dev = Device()
            compute = dev.create_stream()
            copy = dev.create_stream()
            buf = dev.allocate(n * 4, stream=compute)
            out = dev.allocate(n * 4, stream=copy)
            launch(compute, LaunchConfig(grid=n // 256, block=256), kernel, buf, n)
            {fix}
            buf.copy_to(out, stream=copy)
            copy.sync()
            return out
        """, "pass", "copy.wait(compute)", [("read_after_write", "run")]),
    "driver copies name their destination first and their source second": ("""
        from cuda.bindings import driver
        def stage(nbytes):
            err, h_in = driver.cuMemAllocHost(nbytes)
            err, d_in = driver.cuMemAlloc(nbytes)
            err, d_work = driver.cuMemAlloc(nbytes)
            err, load = driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING)
            err, work = driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING)
            err, = driver.cuMemcpyHtoDAsync(d_in, h_in, nbytes, load)
            {fix}
            err, = driver.cuMemcpyDtoDAsync(d_work, d_in, nbytes, work)
            err, = driver.cuStreamSynchronize(work)
            return d_work
        """, "pass", "err, = driver.cuStreamSynchronize(load)", [("read_after_write", "stage")]),
    "streams made with flags 0 block: the legacy stream orders them": ("""
        from cuda.bindings import driver
        def stage(h_out, nbytes):
            err, h_in = driver.cuMemAllocHost(nbytes)
            err, d_in = driver.cuMemAlloc(nbytes)
            err, load = driver.cuStreamCreate({fix})
            err, = driver.cuMemcpyHtoDAsync(d_in, h_in, nbytes, load)
            err, = driver.cuMemcpyDtoH(h_out, d_in, nbytes)
            return h_out
        """, "driver.CUstream_flags.CU_STREAM_NON_BLOCKING", "0", [("read_after_write", "stage")]),
    "a numba kernel's atomic operations store into their first argument": ("""
        import numpy as np
        from numba import cuda

        @cuda.jit
        def count(values, counts):
            i = cuda.grid(1)
            if i < values.size:
                cuda.atomic.add(counts, int(values[i]), 1)

        @cuda.jit
        def scale(counts, out):
            i = cuda.grid(1)
            if i < counts.size:
                out[i] = counts[i] * 2

        def f(n, bins):
            s1 = cuda.stream()
            s2 = cuda.stream()
            values = cuda.device_array(n, dtype=np.float32)
            counts = cuda.device_array(bins, dtype=np.int32)
            out = cuda.device_array(bins, dtype=np.int32)
            count[n // 256, 256, s1](values, counts)
            {fix}
            scale[1, bins, s2](counts, out)
            s2.synchronize()
            s1.synchronize()
            return out
        """, "pass", "s1.synchronize()", [("read_after_write", "f")]),
    "an instance of a declared library class is memory its declared methods move": ("""
        import cupy as cp
        import rmm
        def upload(host, nbytes):
            stream = cp.cuda.Stream(non_blocking=True)
            buf = rmm.DeviceBuffer(size=nbytes)
            buf.copy_from_host(host, stream=stream)
            {fix}
            return buf.copy_to_host()
        """, "pass", "stream.synchronize()", [("read_after_write", "upload")]),
    "an upload from pageable memory leaves the device side to its stream": ("""
        import cupy as cp
        def f(batch):
            s = cp.cuda.Stream(non_blocking=True)
            with s:
                dev = cp.asarray(batch)
            {fix}
            return cp.sqrt(dev)
        """, "pass", "s.synchronize()", [("read_after_write", "f")]),
    "cuda-aware MPI reads a device parameter the caller's stream may still write": ("""
        import cupy as cp
        from mpi4py import MPI
        def broadcast(comm: MPI.Comm, weights: cp.ndarray, stream: cp.cuda.Stream):
            {fix}
            comm.Bcast(weights, root=0)
            return weights
        """, "pass", "stream.synchronize()", [("host_read_before_sync", "broadcast")]),
    "a numba array made on a stream copies back on it, asynchronously": ("""
        import numpy as np
        from numba import cuda
        def readback(n):
            stream = cuda.stream()
            h_res = cuda.pinned_array(n, dtype=np.float32)
            d_res = cuda.device_array(n, dtype=np.float32, stream=stream)
            d_res.copy_to_host(h_res)
            {fix}
            print(h_res[:8])
            return h_res
        """, "pass", "stream.synchronize()", [("host_read_before_sync", "readback"), ("host_read_before_sync", "readback")]),
    # (the NumPy array handed out is read by the host, wherever the callers use it: a host read, not a stream's)
    "a ring of buffers made by a comprehension, indexed by a named slot of the step": ("""
        import cupy as cp
        import cupyx
        def stream_frames(frames, n):
            streams = [cp.cuda.Stream(non_blocking=True) for _ in range(2)]
            staging = [cupyx.zeros_pinned(n, dtype=cp.float32) for _ in range(2)]
            device = [cp.empty(n, dtype=cp.float32) for _ in range(2)]
            for i, frame in enumerate(frames):
                slot = i % 2
                s = streams[slot]
                {fix}
                staging[slot][:] = frame
                device[slot].set(staging[slot], stream=s)
            cp.cuda.runtime.deviceSynchronize()
            return device
        """, "pass", "s.synchronize()", [("host_write_before_sync", "stream_frames")]),
    "a sync of one event of a list the walk cannot tell apart orders what it may capture": ("""
        import torch
        def prefetch(batches, n):
            copy = torch.cuda.Stream()
            staged = [torch.empty(n, pin_memory=True) for _ in range(2)]
            done = [torch.cuda.Event(), torch.cuda.Event()]
            outputs = []
            for k, batch in enumerate(batches):
                slot = k % 2
                {fix}
                staged[slot].copy_(batch)
                with torch.cuda.stream(copy):
                    outputs.append(staged[slot].to("cuda", non_blocking=True))
                    done[slot].record(copy)
            copy.synchronize()
            return outputs
        """, "pass", "done[slot].synchronize()", [("host_write_before_sync", "prefetch")]),
    "a type-tested helper hands out the device array on its device side": ("""
        import cupy as cp
        import numpy as np
        from mpi4py import MPI
        def device_or_host(x):
            if cp.get_array_module(x) is not np:
                return x
            return np.ascontiguousarray(x)
        def gather(comm, local, out):
            {fix}
            comm.Allgather(device_or_host(local), out)
        """, "pass", "cp.cuda.Device().synchronize()", [("host_read_before_sync", "gather")]),
    "a device sync on one path of a branch orders on the may clock": ("""
        import cupy as cp
        from mpi4py import MPI
        def send(comm, grads: cp.ndarray, flush: bool):
            if flush:
                {fix}
            comm.Send(grads, dest=1)
        """, "pass", "cp.cuda.Device().synchronize()", [("host_read_before_sync", "send")]),
    "a helper's `stream is None` branch is decided by the stream its caller passes": ("""
        import cupy as cp
        def fill(buf, stream=None):
            if stream is None:
                buf.fill(0)
            else:
                with stream:
                    buf.fill(0)
        def f(n):
            s = cp.cuda.Stream(non_blocking=True)
            buf = cp.empty(n)
            fill(buf, {fix})
            with s:
                total = cp.sum(buf)
            s.synchronize()
            return total
        """, "None", "s", [("read_after_write", "f")]),
    "pointer arithmetic on raw memory is the same allocation": ("""
        import cupy as cp
        def f(src, n):
            s = cp.cuda.Stream(non_blocking=True)
            mem = cp.cuda.alloc(n * 4)
            (mem + 0).copy_from_device_async(src.data, n * 4, s)
            {fix}
            view = cp.ndarray((n,), dtype="float32", memptr=mem)
            return view.sum()
        """, "pass", "s.synchronize()", [("read_after_write", "f")]),
    "numba's device-array test narrows the tested name": ("""
        from numba import cuda
        from mpi4py import MPI
        def send(comm, x):
            if cuda.is_cuda_array(x):
                {fix}
                comm.Send(x, dest=1)
        """, "pass", "cuda.synchronize()", [("host_read_before_sync", "send")]),
    "torch's current stream and cupy's default stream may be one stream": ("""
        import cupy as cp
        import torch
        def f(host, n):
            side = torch.cuda.Stream()
            buf = torch.empty(n, device="cuda")
            with torch.cuda.stream(side):
                buf.copy_(host, non_blocking=True)
            {fix}
            return cp.fft.fft(cp.asarray(buf))
        """, "pass", "torch.cuda.current_stream().wait_stream(side)",
        [("read_after_write", "f")]),  # (the release after the read is ordered by the same wait)
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
                batch = batch_cpu.cuda() * 2  # a kernel on the current stream (a blocking upload alone is done at return)
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
    # the logits and the loss are read on the current stream with no wait for the side stream:
    # one wait, placed before the first read, orders both, so it is one problem, reported once
    "one missing wait is reported once, at the first access that needs it": ("""
        import torch
        def eval_step(model, loss_fn, batch, labels):
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                logits = model(batch)
                loss = loss_fn(logits, labels)
            {fix}
            top = logits.topk(5).indices
            return loss.item(), top
        """, "pass", "torch.cuda.current_stream().wait_stream(side)", [("read_after_write", "eval_step")]),
    # the EMA's tensors are updated in place on the side stream, then read by the norm on the
    # current stream
    "foreach functions write the tensors of their first list": ("""
        import torch
        def ema_update(ema_params, params, decay):
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                torch._foreach_mul_(ema_params, decay)
                torch._foreach_add_(ema_params, params, alpha=1 - decay)
            {fix}
            return torch._foreach_norm(ema_params)
        """, "pass", "torch.cuda.current_stream().wait_stream(side)", [("read_after_write", "ema_update")]),
    # the next call's move finds the model on the device already: it does nothing, so it does
    # not overwrite what the last call's forward pass read
    "moving a module to where it is does nothing": ("""
        import torch
        class Trainer:
            def __init__(self, model):
                self.model = model
                self.loader_stream = torch.cuda.Stream()

            def warm_start(self, batch):
                with torch.cuda.stream(self.loader_stream):
                    self.model.to("cuda", non_blocking=True)
                {fix}
                return self.model(batch.cuda())
        """, "pass", "torch.cuda.current_stream().wait_stream(self.loader_stream)",
        [("read_after_write", "warm_start")]),
    # the chunk's buffer is what the Chunk class keeps on its objects: the prefetcher's read of
    # `self.chunk.cuda_global` is a CUDA tensor the prefetch stream wrote
    "an object's attributes are what its class keeps there": ("""
        import torch
        class Chunk:
            def __init__(self, n):
                self.shard = torch.empty(n, device="cuda")
                self.full = torch.empty(4 * n, device="cuda")

            def gather(self):
                torch.distributed.all_gather_into_tensor(self.full, self.shard)

        class Prefetcher:
            def __init__(self, n):
                self.stream = torch.cuda.Stream()
                self.chunk = Chunk(n)

            def forward_with(self, module, x):
                self.stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(self.stream):
                    self.chunk.gather()
                {fix}
                out = module(x, self.chunk.full)
                self.stream.wait_stream(torch.cuda.current_stream())
                return out
        """, "pass", "torch.cuda.current_stream().wait_stream(self.stream)", [("read_after_write", "forward_with")]),
    # `load` leaves a batch on the side stream, or None on its early return: a buffer that may
    # be None, which `use` reads on the current stream
    "a value on one path and None on another is that value, maybe None": ("""
        import torch
        class Loader:
            def __init__(self):
                self.stream = torch.cuda.Stream()
                self.x = None

            def load(self, batch):
                if batch is None:
                    self.x = None
                    return
                with torch.cuda.stream(self.stream):
                    self.x = batch.cuda(non_blocking=True)

            def use(self, batch):
                self.load(batch)
                {fix}
                if self.x is not None:
                    return self.x * 2
        """, "pass", "torch.cuda.current_stream().wait_stream(self.stream)", [("read_after_write", "use")]),
    # CuPy's upload of pageable memory returns once the source is staged, its device side still
    # queued on the default stream, which a non-blocking stream the class made does not follow
    "a stream the program made is not the default stream": ("""
        import cupy as cp
        import mykernels
        class Worker:
            def __init__(self):
                self.stream = cp.cuda.Stream(non_blocking=True)

            def process(self, batch):
                dev = cp.asarray(batch)
                {fix}
                mykernels.normalize(dev, stream=self.stream)
                self.stream.synchronize()
                return dev
        """, "pass", "self.stream.wait_event(cp.cuda.get_current_stream().record())",
        [("read_after_write", "process")]),
    # the exchanger's two streams, each entered by the code, are two side streams: what the
    # first writes the second reads without a wait
    "an object's streams the code enters are side streams": ("""
        import torch
        def forward(exchanger, out1, height):
            stream1 = exchanger.stream1
            stream2 = exchanger.stream2
            pad = torch.zeros([out1.shape[0], height + 2], device="cuda")
            stream1.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream1):
                pad.mul_(2)
            stream2.wait_stream(torch.cuda.current_stream())
            {fix}
            with torch.cuda.stream(stream2):
                corrected = pad.clone()
            torch.cuda.current_stream().wait_stream(stream1)
            torch.cuda.current_stream().wait_stream(stream2)
            return pad, corrected
        """, "pass", "stream2.wait_stream(stream1)", [("read_after_write", "forward")]),
    # `self.stream` is unknown in the walk without the class's state, yet `synchronize` is a
    # stream's method: the host waits for it before the read
    "a stream's method shows a stream": ("""
        import torch
        class Overlapper:
            def __init__(self):
                self.stream = torch.cuda.Stream()

            def encode(self, encoder, batch, stream):
                with torch.cuda.stream(stream.side):
                    feats = encoder(batch.cuda())
                {fix}
                total = feats.sum()
                return feats, total
        """, "pass", "stream.side.synchronize()", [("read_after_write", "encode")]),
    # the exchanger's method is given the halo, a view of memory nothing has written yet: it can
    # only be filling it, on stream1; stream2 reads it (the view's bounds are not told: the same
    # view read again is the same memory)
    "an unseen method fills the memory nothing wrote that it is given": ("""
        import torch
        def forward(exchanger, out1, height):
            stream1 = exchanger.stream1
            stream2 = exchanger.stream2
            pad = torch.empty([out1.shape[0], height + 2], device="cuda")
            stream1.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream1):
                bottom = pad[height + 1:]
                exchanger.exchange(out1, bottom)
            stream2.wait_stream(torch.cuda.current_stream())
            {fix}
            with torch.cuda.stream(stream2):
                corrected = bottom.clone()
            torch.cuda.current_stream().wait_stream(stream1)
            torch.cuda.current_stream().wait_stream(stream2)
            return pad, corrected
        """, "pass", "stream2.wait_stream(stream1)", [("read_after_write", "forward")]),
    # the padded buffer is allocated on either branch, and its halo view taken on either: one
    # allocation and one view after the join
    "memory allocated on either path, and a view taken on either, is one": ("""
        import torch
        def forward(exchanger, nhwc, out1, height):
            stream1 = exchanger.stream1
            stream2 = exchanger.stream2
            if nhwc:
                pad = torch.empty([out1.shape[0], height + 2, 8], device="cuda")
            else:
                pad = torch.empty([out1.shape[0], 8, height + 2], device="cuda")
            stream1.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream1):
                if nhwc:
                    bottom = pad[:, height + 1:height + 2, :]
                else:
                    bottom = pad[:, :, height + 1:height + 2]
                exchanger.exchange(out1, bottom)
            stream2.wait_stream(torch.cuda.current_stream())
            {fix}
            with torch.cuda.stream(stream2):
                corrected = bottom.clone()
            torch.cuda.current_stream().wait_stream(stream1)
            torch.cuda.current_stream().wait_stream(stream2)
            return pad, corrected
        """, "pass", "stream2.wait_stream(stream1)", [("read_after_write", "forward")]),
    # the helper's non-blocking `.to(device)` runs under the stream its caller chose: a move to
    # the device, on that stream, whose result the caller reads on the current stream
    "a callee runs under the stream its caller chose": ("""
        import torch
        class Handler:
            def __init__(self):
                self.h2d_stream = torch.cuda.Stream()
                self.states = {}

            @staticmethod
            def reload(state, non_blocking=True):
                device, cpu_backup = state
                return cpu_backup.to(device, non_blocking=non_blocking)

            def reload_and_use(self, tag, weight):
                self.h2d_stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(self.h2d_stream):
                    recovered = Handler.reload(self.states.pop(tag), True)
                {fix}
                out = recovered @ weight
                return recovered, out
        """, "pass", "torch.cuda.current_stream().wait_stream(self.h2d_stream)",
        [("read_after_write", "reload_and_use")]),


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
    # the flat buffer handed to the bucket after construction is state made before this call,
    # on the caller's current stream: the communication stream reads it without a wait
    "an object's state was made before the call, on the caller's current stream": ("""
        import torch
        class GradBucket:
            def __init__(self, params, communication_stream):
                self.params = params
                self.communication_stream = communication_stream

            def attach(self, flat_buffer):
                self.grad_data = flat_buffer

            def start_reduction(self, group):
                {fix}
                with torch.cuda.stream(self.communication_stream):
                    return torch.distributed.all_reduce(self.grad_data, group=group, async_op=True)
        """, "pass", "self.communication_stream.wait_stream(torch.cuda.current_stream())",
        [("read_after_write", "start_reduction")]),
    # the module's parameters were made before the body began, complete: the cast on the side
    # stream races nothing of the caller's, the forward pass on the current stream races the cast
    "a module's parameters made before the call are complete": ("""
        import torch
        def cast_then_run(model, x):
            side = torch.cuda.Stream()
            with torch.cuda.stream(side):
                model.half()
            x = x.cuda().half()
            {fix}
            return model(x)
        """, "pass", "torch.cuda.current_stream().wait_stream(side)", [("read_after_write", "cast_then_run")]),
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
                    norm = flat_grads.norm(p=2)
                # (returned inside the `with`, the norm is handed out in flight: D-31)
                torch.cuda.current_stream().wait_stream(self._norm_stream)
                return norm
        """, "pass", "self._norm_stream.wait_stream(torch.cuda.current_stream())",
        # (the same missing wait leaves the norm, made on the kept stream and returned, unordered against the next
        # call's allocation there: row 11.27)
        [("read_after_write", "reduce"), ("release_without_record", "reduce")]),
    # a hook defined in a method is a function of its own; the current stream waits for the wrong stream
    "a hook's join names another side stream than the one it wrote on": ("""
        import torch
        class Offloader:
            def __init__(self, shadows):
                self.shadows = shadows
                self.up = torch.cuda.Stream()
                self.down = torch.cuda.Stream()
            def register(self, optimizer):
                def copy_back(opt, args, kwargs):
                    self.up.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(self.up):
                        for p in opt.params:
                            shadow = self.shadows[p]
                            shadow.copy_(p, non_blocking=True)
                    torch.cuda.current_stream().wait_stream({fix})
                optimizer.register_step_post_hook(copy_back)
        """, "self.down", "self.up", [("read_after_write", "copy_back")]),
    # the default stream, not the current one, is made to wait for the side stream's work
    "a side stream waits on the default stream for the current stream's work": ("""
        import torch
        class Reducer:
            def __init__(self, buckets):
                self.buckets = buckets
                self.comm = None  # set by the wrapper
            def reduce(self):
                self.comm.wait_stream({fix})
                with torch.cuda.stream(self.comm):
                    for bucket in self.buckets:
                        torch.distributed.all_reduce(bucket.grad)
        """, "torch.cuda.default_stream()", "torch.cuda.current_stream()", [("read_after_write", "reduce")]),
    # what one public method leaves in flight on `self` is handed out by a getter
    "a getter hands out what another public method left in flight": ("""
        import torch
        class Norms:
            def __init__(self):
                self.side = torch.cuda.Stream()
                self._norm = None
            def compute(self, grads):
                self.side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(self.side):
                    self._norm = grads.norm()
                    torch.distributed.all_reduce(self._norm)
            @property
            def norm(self):
                {fix}
                return self._norm
        """, "pass", "torch.cuda.current_stream().wait_stream(self.side)", [("read_after_write", "norm")]),
    # a method chosen by a name built from a constant prefix: one of the class's methods with that
    # prefix; the callee follows the caller's `with s:` (CuPy's current stream at entry)
    "a method chosen by getattr runs under the caller's cupy stream": ("""
        import cupy
        class T:
            def _helper1(self, a):
                return a + 3
            def _helper2(self, a):
                return cupy.sqrt(a)
            def run(self, n):
                s = cupy.cuda.Stream(non_blocking=True)
                func = getattr(self, "_helper{}".format(n))
                a = cupy.random.random((100,))
                {fix}
                with s:
                    out = func(a)
                s.synchronize()
                return out
        """, "pass", "s.wait_event(cupy.cuda.Stream.null.record())", [("read_after_write", "run")]),
    # a dict filled with `out[k] = t` and returned: the caller's `d["k"]` is one of its tensors
    "an item of a returned dict of CUDA tensors": ("""
        import torch
        def fetch(keys, flat):
            out = {}
            for k in keys:
                out[k] = flat.narrow(0, 0, 3).clone()  # a copy made on the current stream
            return out
        def run(keys, data):
            flat = data.cuda()
            lengths = fetch(keys, flat)["len"]
            side = torch.cuda.Stream()
            {fix}
            with torch.cuda.stream(side):
                y = lengths * 2
            torch.cuda.current_stream().wait_stream(side)
            return y
        """, "pass", "side.wait_stream(torch.cuda.current_stream())", [("read_after_write", "run")]),
    # D-14: a stream chosen per path is one of two; the side stream's path races
    "a stream chosen per path by a local": ("""
        import torch
        import torch.distributed as dist
        class Opt:
            def __init__(self, overlap: bool = False):
                self.overlap = overlap
                self.comm = torch.cuda.Stream()
            def reduce(self):
                flat = torch.ones(10, device="cuda")
                flat.div_(4)
                if self.overlap:
                    stream = self.comm
                else:
                    stream = torch.cuda.current_stream()
                {fix}
                with torch.cuda.stream(stream):
                    dist.all_reduce(flat)
                    flat.record_stream(stream)
        """, "pass", "stream.wait_stream(torch.cuda.current_stream())", [("read_after_write", "reduce")]),
    "a stream kept on self chosen per path, the current stream joined to the other one": ("""
        import torch
        class Hybrid:
            def __init__(self, overlap: bool = True):
                self.gpu = torch.empty(10, device="cuda")
                self.cpu = torch.empty(10, pin_memory=True)
                self._d2h = torch.cuda.current_stream()
                self._h2d = torch.cuda.current_stream()
                if overlap:
                    self._d2h = torch.cuda.Stream()
                    self._h2d = torch.cuda.Stream()
            def register(self, optimizer):
                def copy_back(optimizer, args, kwargs):
                    self._h2d.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(self._h2d):
                        self.gpu.copy_(self.cpu, non_blocking=True)
                    {fix}.record_event().wait(torch.cuda.current_stream())
                optimizer.register_step_post_hook(copy_back)
        """, "self._d2h", "self._h2d", [("read_after_write", "copy_back")]),
    # memory the object keeps, made on its own stream and handed out without record_stream: the
    # class's interface is the boundary, also when a caller in sight calls the method
    "a kept side-stream allocation handed out to a caller in sight": ("""
        import torch
        class Prefetcher:
            def __init__(self, loader):
                self.loader = iter(loader)
                self.stream = torch.cuda.Stream()
                self.preload()
            def preload(self):
                self.next_input = next(self.loader)
                with torch.cuda.stream(self.stream):
                    self.next_input = self.next_input.cuda(non_blocking=True)
            def next(self):
                torch.cuda.current_stream().wait_stream(self.stream)
                batch = self.next_input
                {fix}
                self.preload()
                return batch
        def train(loader, model):
            prefetcher = Prefetcher(loader)
            batch = prefetcher.next()
            while batch is not None:
                model(batch)
                batch = prefetcher.next()
        """, "pass", "batch.record_stream(torch.cuda.current_stream())", [("release_without_record", "next")]),
    # items one method leaves in a dict the object keeps (`self.store[k] = t`, made on its own stream),
    # taken out by another (`self.store.pop(k)`) and handed out without record_stream
    "an item kept in a dict on self by one method and popped by another": ("""
        import torch
        class Store:
            def __init__(self):
                self.copy_stream = torch.cuda.Stream()
                self.device = {}
            def prefetch(self, keys, host):
                with torch.cuda.stream(self.copy_stream):
                    for key in keys:
                        tensor = torch.empty_like(host, device="cuda")
                        tensor.copy_(host, non_blocking=True)
                        self.device[key] = tensor
            def pop(self, key):
                torch.cuda.current_stream().wait_stream(self.copy_stream)
                tensor = self.device.pop(key)
                {fix}
                return tensor
        """, "pass", "tensor.record_stream(torch.cuda.current_stream())", [("release_without_record", "pop")]),
    # the helper returns a new allocation, or the caller's buffer when given one (D-20): the item
    # stored is one of the two, and on the first path it was allocated on the copy stream
    "an item that is a new allocation on one path and the caller's buffer on another, popped by another method": ("""
        import torch
        def restore(saved, out=None):
            device, host = saved
            if out is None:
                return host.to(device, non_blocking=True)
            out.copy_(host, non_blocking=True)
            return out
        class Store:
            def __init__(self, reuse):
                self.copy_stream = torch.cuda.Stream()
                self.reuse = reuse
                self.saved = {}
                self.buffers = {}
                self.device = {}
            def prefetch(self, keys):
                with torch.cuda.stream(self.copy_stream):
                    for key in keys:
                        buffer = self.buffers.get(key) if self.reuse else None
                        self.device[key] = restore(self.saved[key], buffer)
            def pop(self, key):
                torch.cuda.current_stream().wait_stream(self.copy_stream)
                tensor = self.device.pop(key)
                {fix}
                return tensor
        """, "pass", "tensor.record_stream(torch.cuda.current_stream())", [("release_without_record", "pop")]),
    # the side stream forked off the current one reads the bucket, and the current stream never
    # waits for it back before the refill: the missing join belongs at the fork
    "a side stream forked one way reads what the current stream refills": ("""
        import torch
        import torch.distributed as dist
        class Bucket:
            def __init__(self, numel):
                self.side = torch.cuda.Stream()
                self.buf = torch.empty(numel, device="cuda")
                self.filled = 0
            def _reduce(self):
                stream = self.side
                stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(stream):
                    dist.all_reduce(self.buf)
                {fix}
            def add(self, grad):
                if self.filled + grad.numel() > self.buf.numel():
                    self._reduce()
                    self.filled = 0
                self.buf.narrow(0, self.filled, grad.numel()).copy_(grad.view(-1))
                self.filled += grad.numel()
        """, "pass", "torch.cuda.current_stream().wait_stream(stream)", [("write_after_read", "_reduce")]),
    # a pool of streams kept on self, filled by `append` in the constructor: `self._blk_st[0]` is
    # one of its streams, and what a helper leaves on self in flight there the getter hands out
    "a getter hands out a norm left in flight on a stream of an appended pool": ("""
        import torch
        class Opt:
            def __init__(self, n):
                self._norm = None
                self._blk_st = []
                for i in range(n):
                    self._blk_st.append(torch.cuda.Stream())
            def _reduce(self, flat_grads):
                self._blk_st[0].wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(self._blk_st[0]):
                    self._norm = flat_grads.norm(dtype=torch.float32, p=2) ** 2
            def complete_reductions(self, flat_grads):
                self._reduce(flat_grads)
                {fix}
            @property
            def norm(self):
                return self._norm
        """, "pass", "torch.cuda.current_stream().wait_stream(self._blk_st[0])", [("read_after_write", "norm")]),
    # where memory lives is fixed when it is made: the collective under the side stream shows the
    # flattened gradients are CUDA memory, so the scaling before the stream was entered wrote them
    # on the current stream (D-11, an access to a device not told yet)
    "an in-place use before the evidence of a device is on that device": ("""
        import torch
        import torch.distributed as dist
        from torch._utils import _flatten_dense_tensors
        class Store:
            def __init__(self):
                self._grads = {}
            def flat(self):
                flat = []
                for grad_list in self._grads.values():
                    flat.append(_flatten_dense_tensors(grad_list))
                return _flatten_dense_tensors(flat)
        class Opt:
            def __init__(self, overlap, world_size):
                self._store = Store()
                self._overlap = overlap
                self._world_size = world_size
                self._comm_stream = torch.cuda.Stream()
            def _run_reduction(self):
                flat_grads = self._store.flat()
                flat_grads /= self._world_size
                stream = self._comm_stream if self._overlap else torch.cuda.current_stream()
                {fix}
                with torch.cuda.stream(stream):
                    dist.all_reduce(flat_grads)
        """, "pass", "stream.wait_stream(torch.cuda.current_stream())", [("read_after_write", "_run_reduction")]),
    # the same with an in-place tensor method (`div_`) for the scaling (D-17)
    "an in-place tensor method before the evidence of a device is on that device": ("""
        import torch
        import torch.distributed as dist
        from torch._utils import _flatten_dense_tensors
        class Store:
            def __init__(self):
                self._grads = {}
            def flat(self):
                flat = []
                for grad_list in self._grads.values():
                    flat.append(_flatten_dense_tensors(grad_list))
                return _flatten_dense_tensors(flat)
        class Opt:
            def __init__(self, overlap, world_size):
                self._store = Store()
                self._overlap = overlap
                self._world_size = world_size
                self._comm_stream = torch.cuda.Stream()
            def _run_reduction(self):
                flat_grads = self._store.flat()
                flat_grads.div_(self._world_size)
                stream = self._comm_stream if self._overlap else torch.cuda.current_stream()
                {fix}
                with torch.cuda.stream(stream):
                    dist.all_reduce(flat_grads)
        """, "pass", "stream.wait_stream(torch.cuda.current_stream())", [("read_after_write", "_run_reduction")]),
    # the same for a parameter: `x /= n` of a value of a kind not told keeps the memory, which the
    # collective then shows is CUDA memory (and a host number added in place stays silent)
    "a parameter changed in place then handed to a collective on a side stream": ("""
        import torch
        import torch.distributed as dist
        def run(flat_grads, n, count):
            side = torch.cuda.Stream()
            flat_grads /= n
            count += 1
            {fix}
            with torch.cuda.stream(side):
                dist.all_reduce(flat_grads)
            torch.cuda.current_stream().wait_stream(side)
        """, "pass", "side.wait_stream(torch.cuda.current_stream())", [("read_after_write", "run")]),
    # a context chosen per path enters the side stream on one path and keeps the current stream
    # on the other (D-14): on the `nullcontext()` path the current stream reads the side stream's
    # result with no wait
    "a stream context or nullcontext enters one of two streams": ("""
        from contextlib import nullcontext
        import torch
        def f(x, overlap):
            s = torch.cuda.Stream()
            x = x.cuda()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                y = x * 2
            ctx = torch.cuda.stream(s) if overlap else nullcontext()
            {fix}
            with ctx:
                z = y + 1
            torch.cuda.current_stream().wait_stream(s)
            return y, z
        """, "pass", "torch.cuda.current_stream().wait_stream(s)", [("read_after_write", "f")]),
    # `enumerate(self.buckets)` pairs a number with an item of the object's collection, as
    # `for bucket in self.buckets` gives one: the wait names the default stream, not the current
    # stream that scaled the gradients
    "an item of a collection on self numbered by enumerate is the collection's item": ("""
        from contextlib import nullcontext
        import torch
        class BucketGroup:
            def __init__(self, buckets, overlap):
                self.buckets = buckets
                self.overlap = overlap
                self.communication_stream = None
            def start_grad_sync(self):
                for bucket in self.buckets:
                    bucket.grad_data *= bucket.gradient_scaling_factor
                if self.overlap:
                    stream_context = torch.cuda.stream(self.communication_stream)
                    self.communication_stream.wait_stream({fix})
                else:
                    stream_context = nullcontext()
                with stream_context:
                    for idx, bucket in enumerate(self.buckets):
                        torch.distributed.all_reduce(bucket.grad_data, async_op=self.overlap)
        """, "torch.cuda.default_stream()", "torch.cuda.current_stream()", [("read_after_write", "start_grad_sync")]),
    # a tuple `(output, event)` kept in a container on self (made with `cast(...)` of `[None] * n`):
    # each position keeps what it holds through the store, the other method's read and the
    # unpacking; the output made on the object's stream is handed out unwaited and unrecorded
    "a tuple of an output and its event kept on self, handed out by position": ("""
        from typing import List, Optional, cast
        import torch
        class Pipeline:
            def __init__(self, n):
                self.stream = torch.cuda.Stream()
                self._outs: List[Optional[tuple]] = cast(List[Optional[tuple]], [None] * n)
            def _run(self, i, batch):
                with torch.cuda.stream(self.stream):
                    out = torch.empty_like(batch, device="cuda")
                    out.copy_(batch, non_blocking=True)
                    done = torch.cuda.Event()
                    done.record(self.stream)
                self._outs[i] = (out, done)
            def _shift(self):
                head = self._outs[0]
                self._outs[0] = self._outs[1]
                self._outs[1] = None
                return head
            def progress(self, batch):
                head = self._shift()
                self._run(1, batch)
                if head is None:
                    return None
                out, done = head
                {fix}
                return out
        """, "pass", "done.wait(torch.cuda.current_stream())\n                out.record_stream(torch.cuda.current_stream())",
        [("read_after_write", "progress"), ("release_without_record", "progress")]),
    # D-21: a closure's cells (the device and the copy mode its function was given) reach it where a
    # callback helper calls it; a flag the call leaves out is the parameter's default
    "a closure called through a callback helper knows what its function was given": ("""
        import torch
        def apply_to_tensors(data, fn):
            if isinstance(data, torch.Tensor):
                return fn(data)
            if isinstance(data, dict):
                return {key: apply_to_tensors(value, fn) for key, value in data.items()}
            return data
        def to_device(data, device, non_blocking={fix}):
            def _move(tensor):
                return tensor.to(device, non_blocking=non_blocking)
            return apply_to_tensors(data, _move)
        class Evaluator:
            def __init__(self, model):
                self.model = model.cuda().eval()
            def predict(self, batch):
                logits = self.model(batch.cuda())
                probs = to_device(logits.softmax(dim=-1), "cpu")
                return probs.argmax(dim=-1).tolist()
        """, "True", "False", [("host_read_before_sync", "predict")]),
    # D-21: a cell is bound as a parameter of the closure, so its work on the encloser's stream is
    # work on the stream the encloser's caller handed in
    "a closure's work on a stream its function was given is on that stream": ("""
        import torch
        def overlapped(x, stream):
            def work(t):
                with torch.cuda.stream(stream):
                    return t * 2
            {fix}
            y = work(x)
            torch.cuda.current_stream().wait_stream(stream)
            return y
        def main(n):
            side = torch.cuda.Stream()
            x = torch.ones(n, device="cuda")
            return overlapped(x, side)
        """, "pass", "stream.wait_stream(torch.cuda.current_stream())", [("read_after_write", "main")]),
    # a call's arguments past the positional parameters are a tuple of the caller's items (`*args`), handed on
    # item by item by `fn(*args)`: the callee's write to its first argument is a write to the caller's buffer
    "arguments forwarded through `*args` to a function run on a stream": ("""
        import torch
        def run_on(stream, fn, *args):
            with torch.cuda.stream(stream):
                return fn(*args)
        def copy_into(dst, src):
            dst.copy_(src, non_blocking=True)
        def prefetch_and_run(model, host_batch, buffer, stream):
            run_on(stream, copy_into, buffer, host_batch.pin_memory())
            {fix}
            return model(buffer)
        def main(model, host_batch, shape):
            side = torch.cuda.Stream()
            buffer = torch.empty(shape, device="cuda")
            return prefetch_and_run(model, host_batch, buffer, side)
        """, "pass", "torch.cuda.current_stream().wait_stream(stream)", [("read_after_write", "prefetch_and_run")]),
    # a function defined in a method (not the method of an object) handed on binds no receiver: its first
    # parameter, even one named `self`, takes the first argument of the call
    "a nested function whose first parameter is named self, called through a helper": ("""
        import cupy as cp
        class Chunks:
            def __init__(self):
                self.streams = [cp.cuda.Stream(non_blocking=True) for _ in range(2)]
            def each_chunk(self, func, owner, acc, x):
                {fix}
                for k in range(4):
                    with self.streams[k % 2]:
                        func(owner, acc, cp.asarray(x[k]))
                for s in self.streams:
                    s.synchronize()
            def norm(self, x):
                acc = cp.zeros(1, dtype="float32")
                def _add(self, acc_out, part):
                    acc_out[:] += cp.vdot(part, part)
                self.each_chunk(_add, self, acc, x)
                return float(acc[0].get())
        """, "pass", "ready = cp.cuda.get_current_stream().record()\n                for s in self.streams: s.wait_event(ready)",
        [("write_after_write", "norm")]),
    # the items of a list the caller hands in are the caller's memory, as a parameter is
    "the shards of a list parameter reduced on a side stream with no wait": ("""
        from typing import List

        import torch
        import torch.distributed as dist


        class ShardReducer:
            def __init__(self, group=None):
                self.stream = torch.cuda.Stream()
                self.group = group

            def reduce(self, shards: List[torch.Tensor]):
                {fix}
                with torch.cuda.stream(self.stream):
                    for shard in shards:
                        dist.all_reduce(shard, group=self.group, async_op=True)
        """, "pass", "self.stream.wait_stream(torch.cuda.current_stream())", [("read_after_write", "reduce")]),
    # a helper picks items of items of what it is given, leaving its loops by break and continue;
    # the list it returns holds those items, and a loop over it gathers them on the prefetch stream
    "items a helper picks from the caller's lists, gathered on a prefetch stream": ("""
        import torch
        import torch.distributed as dist


        def next_chunks(compute_list, idx, budget):
            picked = []
            for i in range(idx + 1, len(compute_list)):
                for chunk in compute_list[i]:
                    if len(picked) >= budget:
                        break
                    if chunk not in picked:
                        picked.append(chunk)
                else:
                    continue
                break
            return picked


        class ChunkHook:
            def __init__(self, compute_list, max_prefetch=2):
                self.compute_list = compute_list
                self.max_prefetch = max_prefetch
                self.prefetch_stream = torch.cuda.Stream()

            def pre_op(self, idx):
                chunks = next_chunks(self.compute_list, idx, self.max_prefetch)
                {fix}
                with torch.cuda.stream(self.prefetch_stream):
                    for chunk in chunks:
                        dist.all_gather_into_tensor(chunk.full, chunk.shard, async_op=True)
        """, "pass", "self.prefetch_stream.wait_stream(torch.cuda.current_stream())", [("read_after_write", "pre_op")]),
    # host memory stored as a parameter's gradient is what a CPU optimizer's step reads on the host
    "a pinned gradient copied without blocking and handed to the optimizer as the parameter's grad": ("""
        import torch


        def init_grad_buffer(p):
            p._cpu_grad = torch.zeros_like(p, device="cpu").pin_memory()


        def move_grad_to_cpu(param, reduced_grad):
            param.grad.data = reduced_grad.to(dtype=torch.float32)
            param._cpu_grad.copy_(param.grad.data, non_blocking={fix})
            param.grad.data = param._cpu_grad
        """, "True", "False", [("host_read_before_sync", "move_grad_to_cpu")]),

    # API-FACTS 4.4: a Python bool of CUDA tensors' data (`torch.equal`, `torch.allclose`,
    # `torch.is_nonzero`) is read back: the host waits for the current stream (a table row)
    "torch.allclose of CUDA tensors waits for the current stream": ("""
        import torch
        def f(n):
            a = torch.randn(n, device="cuda")
            host = a.to("cpu", non_blocking=True)
            {fix}
            return host.tolist()
        """, "pass", "torch.allclose(a, a)", [("host_read_before_sync", "f")]),
    # API-FACTS 4.1: `torch.cuda.ExternalStream(ptr)` wraps a foreign stream (a table row: a stream
    # made here, its flags not shown), not the current one
    "a foreign stream torch wraps is a stream of its own": ("""
        import torch
        def f(ptr, n):
            s = torch.cuda.ExternalStream(ptr)
            a = torch.randn(n, device="cuda")
            {fix}
            with torch.cuda.stream(s):
                b = a * 2
            s.synchronize()
            return b
        """, "pass", "s.wait_stream(torch.cuda.current_stream())\n            a.record_stream(s)",
        [("read_after_write", "f")]),
    # D-30: the fill at a cursor the object keeps and the prefix up to it are one region the cursor
    # moves through: the next call's fill, after the reset, lies in the prefix the side stream reduces
    "a bucket filled at a cursor on the object and reduced up to it on a side stream": ("""
        import torch
        import torch.distributed as dist
        class Sender:
            def __init__(self, numel):
                self.bucket = torch.zeros(numel, device="cuda")
                self.offset = 0
                self.stream = torch.cuda.Stream()
            def add(self, g):
                n = g.numel()
                self.bucket[self.offset:self.offset + n].copy_(g)
                self.offset += n
                if self.offset >= 1024:
                    self.stream.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(self.stream):
                        dist.all_reduce(self.bucket[:self.offset])
                    {fix}
                    self.offset = 0
        """, "pass", "torch.cuda.current_stream().wait_stream(self.stream)", [("write_after_read", "add")]),
    # D-31: a result made and returned inside `with s:` is read on the callers' current stream; its only
    # caller reads it unwaited: the problem is the function's, at its return (row 11.23)
    "a result made on the object's stream and returned, read by its only caller unwaited": ("""
        import torch
        class Loader:
            def __init__(self, batches):
                self.batches, self.stream = iter(batches), torch.cuda.Stream()
            def fetch(self):
                with torch.cuda.stream(self.stream):
                    return next(self.batches).cuda(non_blocking=True)
        def train(batches):
            loader = Loader(batches)
            x = loader.fetch()
            {fix}
            return x * 2
        """, "pass", "torch.cuda.current_stream().wait_stream(loader.stream)\n            x.record_stream(torch.cuda.current_stream())",
        [("read_after_write", "fetch"), ("release_without_record", "train")]),
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
    ops = [(o.operation.op, o.operation.in_loop, bool(o.chain)) for o in operations(model, "train")]
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


def _summaries(source: str) -> dict:
    model = analyze_file(cst.parse_module(textwrap.dedent(source)), "prog.py")
    return {q.rsplit(".", 1)[1]: w.summary for (q, c), w in model.solved.walks.items() if not c.args}


def test_an_import_under_try_binds_its_name():
    summaries = _summaries("""
        try:
            import cupy as cp
        except ImportError:
            cp = None
        def alloc(n):
            return cp.cuda.alloc(n)
        """)
    assert summaries["alloc"].returns.memory.value == "device"


def test_a_module_global_bound_under_try_is_the_bodys():
    summaries = _summaries("""
        import torch
        try:
            scatter = torch.distributed.reduce_scatter_tensor
        except (ImportError, AttributeError):
            scatter = torch.distributed._reduce_scatter_base
        def f(out, inp, s):
            with torch.cuda.stream(s):
                scatter(out, inp)
        """)
    assert any(e.kind.value == "access" and e.write for e in summaries["f"].effects)


def test_two_framework_functions_bound_to_one_global_by_version_are_either():
    summaries = _summaries("""
        import torch
        try:
            if is_torch_min_version("1.13.0"):
                scatter = torch.distributed.reduce_scatter_tensor
            else:
                scatter = torch.distributed._reduce_scatter_base
        except:
            scatter = torch.distributed._reduce_scatter_base
        def f(out, inp, s):
            with torch.cuda.stream(s):
                scatter(out, inp)
        """)
    writes = [e for e in summaries["f"].effects if e.kind.value == "access" and e.write]
    assert writes and all(e.path.root.name == "out" for e in writes)


def test_a_tensor_built_on_the_host_then_moved_is_a_host_built_upload():
    from streamlint.model.readings.operations import operations

    source = textwrap.dedent("""
        import torch
        import torch.distributed as dist
        def norm_of(grads, groups):
            norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads, 2.0)), 2.0)
            for group in groups:
                dist.all_reduce(norm, group=group)
            return norm
        def total(sharded):
            running = torch.tensor(0.0)
            for groups, grads in sharded.items():
                shard = norm_of(grads, groups)
                running = torch.add(running.to(shard.device), shard)
            return running
        def own_device(grads):
            norm = norm_of(grads, []) if grads else torch.tensor(0.0)
            return norm.to(norm.device)
        def pinned_total(sharded):
            running = torch.tensor(0.0, pin_memory=True)
            for groups, grads in sharded.items():
                shard = norm_of(grads, groups)
                running = torch.add(running.to(shard.device, non_blocking=True), shard)
            return running
        def feed(model, lines):
            for line in lines:
                model(torch.tensor([float(v) for v in line.split()]).cuda())
        """)
    model = analyze_file(cst.parse_module(source), "prog.py")
    uploads = [o.operation for o in operations(model, "total") if o.operation.op == "H2D copy"]
    assert uploads and all(u.host_built and u.in_loop and u.non_blocking is False for u in uploads)
    assert not [o for o in operations(model, "own_device") if o.operation.op == "H2D copy"]
    # a pinned stand-in is what an upload should start from
    assert not [o for o in operations(model, "pinned_total") if o.operation.host_built]
    # built on the host on every path: the program's input, an ordinary upload
    assert [o.operation.host_built for o in operations(model, "feed") if o.operation.op == "H2D copy"] == [None]


def test_a_collectives_operand_is_a_cuda_tensor_on_every_path():
    summaries = _summaries("""
        import torch
        import torch.distributed as dist
        def reduced(x, group=None):
            norm = torch.linalg.vector_norm(x)
            if group is not None:
                dist.all_reduce(norm, group=group)
            return norm
        def local(x):
            return torch.linalg.vector_norm(x)
        """)
    assert summaries["reduced"].returns.memory.value == "device"
    assert summaries["local"].returns.memory.value == "unknown"


def test_nccl_operands_given_as_raw_pointers_are_device_memory_on_the_handles_stream():
    summaries = _summaries("""
        class Comm:
            def __init__(self, nccl_comm):
                self.nccl_comm = nccl_comm
            def allreduce(self, a, b, n, stream):
                self.nccl_comm.allReduce(a.data.ptr, b.data.ptr, n, 0, 0, stream.ptr)
            def other(self, a, b, n, stream):
                self.nccl_comm.allReduce(a.data.ptr, b.data.ptr, n, 0, 0, stream)
        """)
    accesses = [(e.path.spell(), e.write, e.stream.path.spell()) for e in summaries["allreduce"].effects
                if e.kind.value == "access"]
    assert accesses == [("a", False, "stream"), ("b", True, "stream")]
    assert not [e for e in summaries["other"].effects if e.kind.value == "access"]


def test_a_memory_pointer_only_method_shows_raw_device_memory():
    # `dst.data.copy_from_device(src, n)` on a parameter: only a CuPy MemoryPointer has that
    # method, so `dst.data` is raw device memory written, and `src` read, on the current stream
    summaries = _summaries("""
        import cupy as cp
        class DeviceMemory:
            def __init__(self):
                self.memory = None
            def assign(self, n):
                self.memory = cp.cuda.alloc(n)
            def to_device(self, dst, size, offset=0):
                src = self.memory + offset
                dst.data.copy_from_device(src, size)
            def other(self, dst, size):
                dst.data.copy_from(self.memory, size)
        """)
    accesses = [(e.path.spell(), e.write) for e in summaries["to_device"].effects if e.kind.value == "access"]
    assert ("dst.data", True) in accesses
    assert not [e for e in summaries["other"].effects if e.kind.value == "access"]


_TESTED_STREAM = """
    import cupy

    class DeviceMemory:
        def __init__(self):
            self.memory = None
        def assign(self, n):
            self.memory = cupy.cuda.alloc(n)
        def array(self, n):
            return cupy.ndarray((n,), memptr=self.memory)

    class Comm:
        def __init__(self):
            self.tmp = DeviceMemory()
            self.kernel = cupy.ElementwiseKernel("float32 x", "float32 y", "y = x", "k")
        def run(self, n):
            self.run_async(n, cupy.cuda.Stream.null)
        def run_async(self, n, stream):
            self.tmp.assign(n)
            {test}
            self._convert(n, stream)
        def _convert(self, n, stream):
            self.kernel(self.tmp.array(n), self.tmp.array(n), stream=stream)
            self.tmp.memory.copy_from_device(self.tmp.memory, n)
    """


@pytest.mark.parametrize("test, found", [
    ("if stream != cupy.cuda.Stream.null: cupy.cuda.Stream.null.synchronize()", True),
    ("if stream is not None: cupy.cuda.Stream.null.synchronize()", False),
])
def test_a_stream_parameter_tested_against_the_null_stream_is_the_callers_stream_for_the_work(test, found):
    # the test says the callers hand streams other than the null stream (CuPy's current one):
    # a kernel on `stream` and a copy on the current stream of the same memory race on that path
    source = textwrap.dedent(_TESTED_STREAM).replace("{test}", test)
    model = analyze_file(cst.parse_module(source), "prog.py")
    assert ("prog.Comm._convert" in {h.function for h in model.hazards}) is found


@pytest.mark.parametrize("spelled", ["cupy.cuda.Stream.null", "chainer.cuda.Stream.null"])
def test_the_null_stream_constant_is_the_legacy_default_stream(spelled):
    summaries = _summaries(f"""
        import chainer.cuda
        import cupy
        def f():
            {spelled}.synchronize()
        """)
    syncs = [e for e in summaries["f"].effects if e.kind.value == "sync" and e.stream is not None]
    assert syncs and all(e.stream.kind.value == "legacy" for e in syncs)


def test_a_device_cuda_on_one_path_is_the_codes_gpu_path_and_a_loop_exit_test_is_no_condition():
    from streamlint.model.readings.operations import operations

    source = textwrap.dedent("""
        import torch
        def get_device(name):
            device = torch.device(name)
            if device.type == "cuda":
                device = torch.device(type="cuda", index=0)
            return device
        def train(model, batches, name, max_steps):
            device = get_device(name)
            for i, batch in enumerate(batches):
                if i == max_steps:
                    break
                loss = model(batch.to(device))
                print(loss.item())
        def sometimes(model, batches, device):
            for i, batch in enumerate(batches):
                if i % 2:
                    continue
                loss = model(batch.to("cuda"))
                print(loss.item())
        """)
    model = analyze_file(cst.parse_module(source), "prog.py")
    syncs = [o.operation for o in operations(model, "train") if o.operation.op == "implicit synchronization"]
    assert syncs and all(s.in_loop and not s.conditional for s in syncs)
    syncs = [o.operation for o in operations(model, "sometimes") if o.operation.op == "implicit synchronization"]
    assert syncs and all(s.conditional for s in syncs)


def test_an_item_read_but_kept_in_a_dict_on_self_is_the_objects_to_release():
    # `get` hands out an item the container still holds: the object, not the caller, drops it
    source, bug, _, _ = CASES["an item kept in a dict on self by one method and popped by another"]
    kept = source.replace("{fix}", bug).replace("self.device.pop(key)", "self.device.get(key)")
    assert found(kept) == []


def test_a_kept_hand_out_the_callers_in_sight_record_is_theirs():
    # the caller tells the allocator of its stream's use itself: nothing to report in `next`
    source, bug, _, _ = CASES["a kept side-stream allocation handed out to a caller in sight"]
    recorded = source.replace("{fix}", bug).replace(
        "                model(batch)\n", "                batch.record_stream(torch.cuda.current_stream())\n                model(batch)\n")
    assert found(recorded) == []


def test_a_tuples_positions_are_what_each_item_is():
    # `t[0]` and `out, done = t` give the output, not the join of an output and an event (nothing)
    source, bug, _, _ = CASES["a tuple of an output and its event kept on self, handed out by position"]
    by_index = source.replace("{fix}", bug).replace("out, done = head", "out = head[0]")
    assert found(by_index) == [("read_after_write", "progress"), ("release_without_record", "progress")]
    waited = source.replace("{fix}", "head[1].wait(torch.cuda.current_stream())").replace("out, done = head", "out = head[0]")
    assert found(waited) == [("release_without_record", "progress")]


def test_an_event_handed_out_alone_is_no_memory_read():
    source, bug, _, _ = CASES["a tuple of an output and its event kept on self, handed out by position"]
    swapped = source.replace("{fix}", bug).replace("out, done = head", "done, out = head")
    assert found(swapped) == []


def test_a_tuple_item_whose_attribute_was_refilled_is_the_earlier_memory():
    # `x = self.next_x; ...; self.preload(); return x, y`: `x` is the memory handed out before the
    # refill, not what `self.next_x` holds now (the refill's write is no race with it)
    source = """
        import torch
        class Prefetcher:
            def __init__(self, loader):
                self.loader = iter(loader)
                self.stream = torch.cuda.Stream()
                self.preload()
            def preload(self):
                x, y = next(self.loader)
                with torch.cuda.stream(self.stream):
                    self.next_x = x.cuda(non_blocking=True)
                    self.next_y = y.cuda(non_blocking=True)
            def next(self):
                torch.cuda.current_stream().wait_stream(self.stream)
                x, y = self.next_x, self.next_y
                x.record_stream(torch.cuda.current_stream())
                y.record_stream(torch.cuda.current_stream())
                self.preload()
                return x, y
        def train(loader, model):
            prefetcher = Prefetcher(loader)
            x, y = prefetcher.next()
            for _ in range(10):
                model(x, y)
                x, y = prefetcher.next()
        """
    assert found(source) == []


STAGED = """
    from typing import List, Optional, cast
    import torch
    class Stage:
        def __init__(self, fn, stream):
            self.fn = fn
            self.stream = stream
    class Pipeline:
        def __init__(self, stages, compute_stream: Optional[torch.cuda.Stream] = None):
            self._stages = stages
            self._compute = compute_stream or torch.cuda.current_stream()
            self._outs: List[Optional[tuple]] = cast(List[Optional[tuple]], [None] * len(stages))
        def _run_with_event(self, fn, batch, stream):
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                out = fn(batch)
                done = torch.cuda.Event()
                done.record(stream)
                return (out, done)
        def _run(self, i, batch):
            stage = self._stages[i]
            self._outs[i] = self._run_with_event(stage.fn, batch, stage.stream)
        def _shift(self):
            head = self._outs[0]
            self._outs[0] = self._outs[1]
            self._outs[1] = None
            return head
        def progress(self, batch):
            head = self._shift()
            self._run(1, batch)
            if head is None:
                return None
            out, done = head
            {fix}
            return out
"""


def test_an_objects_stream_a_helper_enters_as_its_parameter_is_a_side_stream():
    # `stage.stream`, handed to a helper that enters it (`with torch.cuda.stream(stream):`), is an
    # object's stream entered: another stream than the current one, in the caller as in the helper
    # (the helper makes it wait for the caller's stream before it allocates: no release hazard)
    assert found(STAGED.replace("{fix}", "pass")) == [("read_after_write", "progress")]
    assert found(STAGED.replace("{fix}", "done.wait(torch.cuda.current_stream())")) == []


def test_a_wait_and_record_for_the_given_stream_or_the_current_one_order_the_hand_out():
    # `compute_stream or torch.cuda.current_stream()` is one of two streams (D-14), one the
    # caller's current one: waiting and recording for it is unsure on the other path (silent)
    assert found(STAGED.replace("{fix}", "done.wait(self._compute)")) == []
    no_choice = STAGED.replace("compute_stream or torch.cuda.current_stream()", "compute_stream")
    assert found(no_choice.replace("{fix}", "done.wait(self._compute)")) == [("read_after_write", "progress")]


def test_an_allocation_on_an_untold_device_kept_on_self_is_what_a_later_collective_shows():
    summaries = _summaries("""
        import torch
        import torch.distributed as dist
        class Lengths:
            def __init__(self, lengths, device, pg):
                out = torch.empty(10, device=device, dtype=lengths.dtype)
                self._lengths = out
                self._work = dist.all_to_all_single(output=out, input=lengths, group=pg, async_op=True)
        def untold(device):
            return torch.empty(10, device=device)
        """)
    stores = dict(summaries["__init__"].self_stores)
    assert stores["_lengths"].memory.value == "device"
    assert summaries["untold"].returns.is_buffer and summaries["untold"].returns.memory.value == "unknown"


def test_a_loops_item_tested_against_none_is_no_one_off():
    # each present item takes the body on every call: the upload is per item, per call
    source = """
        import torch
        def f(batch, rank):
            for key, val in batch.items():
                if val is not None:
                    index = torch.tensor([rank, rank + 1], device=val.device)
                    batch[key] = val.index_select(1, index)
            return batch
        def g(x):
            return f({"a": x.cuda(), "b": None if x.dim() else x.cuda()}, 0)
        """
    model = analyze_file(cst.parse_module(textwrap.dedent(source)), "prog.py")
    summaries = [w.summary for (q, c), w in model.solved.walks.items() if q.endswith(".f") and c.args]
    assert summaries
    uploads = [e for s in summaries for e in s.effects if e.operation is not None and e.operation.api == "torch.tensor"]
    assert uploads and not any(e.operation.conditional for e in uploads)


def test_a_type_test_of_a_known_tensor_takes_the_tensor_side():
    summaries = _summaries("""
        import torch
        def scaled(loss, n):
            if isinstance(loss, torch.Tensor):
                out = loss / n
            elif isinstance(loss, (list, tuple)):
                out = [x / n for x in loss]
            else:
                out = loss
            return out
        def step(x, n):
            y = x.cuda()
            return scaled(y, n)
        """)
    assert summaries["step"].returns.memory.value == "device"


def test_a_type_query_of_a_cuda_tensor_is_no_device_work():
    summaries = _summaries("""
        import torch
        def kind(x):
            y = x.cuda()
            return isinstance(y, (list, tuple)), hasattr(y, "grad"), type(y)
        """)
    assert not [e for e in summaries["kind"].effects if e.operation is not None and e.operation.api != "torch.Tensor.to"]


def test_a_refill_after_a_fork_joined_back_too_early_is_reported_at_the_refill():
    # the current stream waits for the side stream right after the fork, before the read it
    # queues: the fork is not one-way, and the wait belongs before the refill (reported there)
    source, bug, _, _ = CASES["a side stream forked one way reads what the current stream refills"]
    early = source.replace("{fix}", bug).replace(
        "                stream.wait_stream(torch.cuda.current_stream())\n",
        "                stream.wait_stream(torch.cuda.current_stream())\n"
        "                torch.cuda.current_stream().wait_stream(stream)\n")
    assert found(early) == [("write_after_read", "add"), ("write_after_write", "add")]


def test_a_bare_parameter_iterated_may_make_its_items_as_it_goes():
    """A loader handed in makes its batches as it is iterated: they are not the caller's memory
    (only a parameter its annotation tells is a sequence, or an item or field of one, is)."""
    assert found("""
        import torch


        def train(model, loader, optimizer):
            side = torch.cuda.Stream()
            for batch in loader:
                with torch.cuda.stream(side):
                    loss = model(batch)
                torch.cuda.current_stream().wait_stream(side)
                loss.backward()
                optimizer.step()
        """) == []


def test_a_break_takes_its_state_out_of_the_loop():
    """What a path that leaves a loop by `break` did (a write on a side stream) is pending after
    the loop, as on the path that ran out; the `else` runs only on the latter."""
    source = """
        import torch


        def search(limit):
            side = torch.cuda.Stream()
            out = torch.zeros(8, device="cuda")
            side.wait_stream(torch.cuda.current_stream())
            for x in range(limit):
                if x > 3:
                    with torch.cuda.stream(side):
                        out.add_(1)
                    break
            else:
                {in_else}
            {after}
            return out.sum()
        """
    wait = "torch.cuda.current_stream().wait_stream(side)"
    assert found(source.format(in_else="pass", after="pass")) == [("read_after_write", "search")]
    assert found(source.format(in_else=wait, after="pass")) == [("read_after_write", "search")]
    assert found(source.format(in_else="pass", after=wait)) == []


def test_two_halves_of_a_split_at_a_local_bound_are_two_regions():
    # D-30: a shared bound alone is no evidence; `k` is a split point, not a cursor the object keeps
    assert found("""
        import torch
        class Splitter:
            def __init__(self, n):
                self.buf = torch.zeros(n, device="cuda")
                self.s1 = torch.cuda.Stream()
                self.s2 = torch.cuda.Stream()
            def run(self, k, m):
                with torch.cuda.stream(self.s1):
                    self.buf[:k].mul_(2)
                with torch.cuda.stream(self.s2):
                    self.buf[k:k + m].add_(1)
                torch.cuda.synchronize()
        """) == []


def test_a_generator_hands_its_items_to_the_loop_that_iterates_it():
    # the items a generator yields were written on its side stream: the loop's read races the copy unless the
    # generator made the current stream wait before it yielded (every loop in sight reads unwaited: one problem, the
    # generator's, at its `yield`); a `@contextmanager` is no generator of items
    source = """
        import contextlib
        import torch
        def prefetched(loader, stream):
            for batch in loader:
                with torch.cuda.stream(stream):
                    batch = batch.cuda(non_blocking=True)
                {fix}
                yield batch
        def train(model, loader):
            side = torch.cuda.Stream()
            for batch in prefetched(loader, side):
                model(batch)
    """
    assert ("read_after_write", "prefetched") in found(source.replace("{fix}", "pass"))
    waited = "torch.cuda.current_stream().wait_stream(stream); batch.record_stream(torch.cuda.current_stream())"
    assert found(source.replace("{fix}", waited)) == []
    managed = source.replace("{fix}", "pass").replace("def prefetched", "@contextlib.contextmanager\n        def prefetched")
    assert not {("read_after_write", "train"), ("read_after_write", "prefetched")} & set(found(managed))


def test_a_loop_over_an_object_iterates_what_its_dunder_iter_returns():
    # `__iter__` a generator, or `__iter__` returning the object and `__next__` the item
    generator = """
        import torch
        class Prefetcher:
            def __init__(self, loader):
                self.loader = loader
                self.stream = torch.cuda.Stream()
            def __iter__(self):
                for batch in self.loader:
                    with torch.cuda.stream(self.stream):
                        batch = batch.cuda(non_blocking=True)
                    yield batch
        def train(model, loader):
            for batch in Prefetcher(loader):
                model(batch)
    """
    stepping = """
        import torch
        class Prefetcher:
            def __init__(self, loader):
                self.loader = iter(loader)
                self.stream = torch.cuda.Stream()
            def __iter__(self):
                return self
            def __next__(self):
                with torch.cuda.stream(self.stream):
                    batch = next(self.loader).cuda(non_blocking=True)
                return batch
        def train(model, loader):
            for batch in Prefetcher(loader):
                model(batch)
    """
    # (the loop in sight reads the yielded batch unwaited: the generator's problem, at its `yield`)
    assert ("read_after_write", "__iter__") in found(generator)
    # (no call of `__next__` is written: the hand-out is reported where `__next__` returns the batch)
    assert ("read_after_write", "__next__") in found(stepping)
    assert ("read_after_write", "__next__") not in found(stepping.replace(
        "return batch", "torch.cuda.current_stream().wait_stream(self.stream)\n                return batch"))
    no_iter = generator.replace("def __iter__(self):", "def batches(self):")
    assert ("read_after_write", "train") not in found(no_iter)


def test_a_decode_is_the_host_s_only_on_an_object_that_showed_it_is_a_tokenizer():
    # row 10.81: `decode` is also an autoencoder's GPU work; a tokenizer-only method called first shows the tokenizer
    summaries = _summaries("""
        import torch
        def caption(tokenizer, ids):
            prompt = tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
            return tokenizer.decode(ids.cuda())
        def image(vae, latents):
            return vae.decode(latents.cuda())
        """)
    reads = [e.operation.api for e in summaries["caption"].effects if e.operation is not None]
    assert "decode" in reads and summaries["caption"].returns.kind.value == "host_number"
    assert not [e for e in summaries["image"].effects if e.operation is not None and e.operation.api == "decode"]
    assert summaries["image"].returns.kind.value != "host_number"


def test_the_builtin_sum_of_cuda_tensors_is_a_cuda_tensor_and_of_numbers_a_host_number():
    # row 10.83: `sum(xs)` adds the items with `+`: on tensors an operation where they live, never a host read
    summaries = _summaries("""
        import torch
        def total(n):
            x = torch.ones(n, device="cuda")
            return sum(t * 2 for t in [x, x + 1])
        def count(xs):
            return sum(len(x) for x in xs)
        """)
    assert summaries["total"].returns.memory.value == "device"
    assert not [e for e in summaries["total"].effects if e.kind.value == "sync"]
    assert summaries["count"].returns.kind.value == "host_number"


def test_what_a_call_on_cuda_tensors_returned_iterates_as_cuda_tensors():
    # row 10.84: no tensor has `items()`; a dict a call on CUDA tensors returned holds tensors made there, and so does
    # a dict of them rebuilt on another path (the join keeps them device memory)
    summaries = _summaries("""
        import torch
        def scaled(model, x, w):
            loss_dict = model(x.cuda())
            return {k: v * w[k] for k, v in loss_dict.items()}
        def reduced(d, world):
            if world < 2:
                return d
            return {k: v for k, v in zip(sorted(d.keys()), torch.stack(list(d.values())))}
        def caller(model, x, world):
            return reduced(model(x.cuda()), world)
        """)
    assert summaries["scaled"].returns.element.memory.value == "device"
    assert summaries["caller"].returns.memory.value == "device"


def test_a_keywords_parameter_holds_the_keywords_no_named_parameter_takes():
    # row 6.53: `**kwargs` is a dict of the extra keywords (and the items of a dict unpacked into the call)
    model = analyze_file(cst.parse_module(textwrap.dedent("""
        import torch
        class Logger:
            def update(self, **kwargs):
                for k, v in kwargs.items():
                    self.last = v.item()
        def step(x, lr):
            logger = Logger()
            losses = {"a": x.cuda() * 2}
            logger.update(lr=lr, **losses)
        """)), "prog.py")
    reads = [e for (q, c), w in model.solved.walks.items() if q == "prog.Logger.update" and c.args
             for e in w.summary.effects if e.operation is not None and e.operation.api.endswith("item")]
    assert reads


def test_an_ordered_dict_or_defaultdict_made_empty_holds_what_is_put_in_it():
    # row 9.30: `OrderedDict()`, `defaultdict(list)`, `dict()` start with no items, as `{}` does
    summaries = _summaries("""
        from collections import OrderedDict, defaultdict
        import torch
        def losses(x):
            d = OrderedDict()
            d["l1"] = x.cuda().abs().mean()
            return d
        def grouped(x):
            g = defaultdict(list)
            g["a"].append(x.cuda())
            return g
        def copied(pairs):
            return OrderedDict(pairs)
        """)
    assert summaries["losses"].returns.element.memory.value == "device"
    assert summaries["copied"].returns.kind.value != "container" or summaries["copied"].returns.element is None
