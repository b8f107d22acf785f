"""SL101 default-stream-barrier: legacy default stream work between work on blocking streams."""

from __future__ import annotations

import libcst as cst

from streamlint.fixes.edits import FixBuilder, make_fix
from streamlint.fixes.idioms import region_stream
from streamlint.fixes.model import Applicability
from streamlint.model.library import per_thread_switched
from streamlint.model.ops import COPIES, DEVICE_WORK, OpKind
from streamlint.model.queries import between_stream_work, is_default_stream
from streamlint.model.values import StreamKind
from streamlint.rules._shared import api_named, via_helper, waits_both_ways
from streamlint.rules.base import Finding, Rule


class DefaultStreamBarrier(Rule):
    """
    ## What it does
    Flags device work issued on the legacy default stream (stream 0) between
    work on explicit *blocking* streams: a kernel launch, a memset, an async
    copy given stream 0, or a raw `cudaMalloc` / `cudaFree`. Blocking streams
    are CuPy `cp.cuda.Stream()` (unless `non_blocking=True`), Numba
    `cuda.stream()` and cuda-python `cudaStreamCreate()` (or a stream created
    with the default flag).

    The finding is also reported at the call site of a function of the same
    module whose body does such work; the message names the helper and its
    line.

    ## Why is this bad?
    The legacy default stream synchronizes implicitly with every blocking stream
    of the context: work on it first waits for all work already queued on the
    blocking streams, and work queued on them afterwards waits for it. One stray
    launch or memset between two pipelines therefore acts as a device-wide
    barrier: a copy on one stream can no longer overlap a kernel on another, and
    the timeline is sequential although several streams are used. (Kernels that
    fill the whole GPU cannot overlap each other whatever the streams, so the
    barrier costs most where copies should overlap compute, or where kernels
    are small enough to share the GPU.)

    Only work *between* stream work is a barrier. Default-stream work before any
    stream work only delays the start of the streams that follow and does not
    serialize them against each other; work after the pipeline has nothing left
    to overlap with. Neither is flagged.

    Not flagged by this rule:
    - PyTorch side streams: `torch.cuda.Stream()` hands out streams created with
      `cudaStreamNonBlocking`, so they are *not* ordered against the default
      stream at all (which is why they need explicit `wait_stream`).
    - CuPy `cp.cuda.Stream(non_blocking=True)` and cuda-python streams created
      with `cudaStreamNonBlocking` / `CU_STREAM_NON_BLOCKING`.
    - Synchronous copy APIs such as `cudaMemcpy` or Numba `cuda.to_device(x)`
      without a stream: they are reported once, as SL202.

    ## Example
    ```python
    import cupy as cp

    s1, s2 = cp.cuda.Stream(), cp.cuda.Stream()
    with s1:
        y1 = cp.matmul(a1, b1)
    x2 = cp.abs(x2)  # kernel on the legacy default stream: waits for s1, blocks s2
    with s2:
        y2 = cp.matmul(x2, b2)
    ```
    ```python
    from numba import cuda


    @cuda.jit
    def scale(a):
        a[cuda.grid(1)] *= 2.0


    @cuda.jit
    def clear(total):
        total[cuda.grid(1)] = 0.0


    @cuda.jit
    def accumulate(b, total):
        i = cuda.grid(1)
        total[i] += b[i]


    s1, s2 = cuda.stream(), cuda.stream()
    scale[blocks, threads, s1](d_a)
    clear[blocks, threads](d_sum)  # no stream given: launched on stream 0
    accumulate[blocks, threads, s2](d_b, d_sum)
    ```
    ```python
    from cuda.bindings import runtime as cudart

    H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice
    err, s1 = cudart.cudaStreamCreate()
    err, s2 = cudart.cudaStreamCreate()
    cudart.cudaMemcpyAsync(d_a, h_a, nbytes, H2D, s1)
    cudart.cudaMemset(d_sum, 0, nbytes)  # memset on the legacy default stream
    cudart.cudaMemcpyAsync(d_b, h_b, nbytes, H2D, s2)
    ```

    ## Use instead
    Put the work on the stream that consumes it:
    ```python
    import cupy as cp

    s1, s2 = cp.cuda.Stream(), cp.cuda.Stream()
    with s1:
        y1 = cp.matmul(a1, b1)
    with s2:
        x2 = cp.abs(x2)
        y2 = cp.matmul(x2, b2)
    ```
    ```python
    from numba import cuda


    @cuda.jit
    def scale(a):
        a[cuda.grid(1)] *= 2.0


    @cuda.jit
    def clear(total):
        total[cuda.grid(1)] = 0.0


    @cuda.jit
    def accumulate(b, total):
        i = cuda.grid(1)
        total[i] += b[i]


    s1, s2 = cuda.stream(), cuda.stream()
    scale[blocks, threads, s1](d_a)
    clear[blocks, threads, s2](d_sum)
    accumulate[blocks, threads, s2](d_b, d_sum)
    ```
    ```python
    from cuda.bindings import runtime as cudart

    H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice
    err, s1 = cudart.cudaStreamCreate()
    err, s2 = cudart.cudaStreamCreate()
    cudart.cudaMemcpyAsync(d_a, h_a, nbytes, H2D, s1)
    cudart.cudaMemsetAsync(d_sum, 0, nbytes, s2)
    cudart.cudaMemcpyAsync(d_b, h_b, nbytes, H2D, s2)
    ```
    Creating the streams non-blocking (`cp.cuda.Stream(non_blocking=True)`,
    `cudaStreamCreateWithFlags(cudaStreamNonBlocking)`) also removes the barrier,
    but then nothing orders them against default-stream work, including work
    other libraries put there (cupy/cupy#6104): order the streams explicitly
    with events where they share data. Raw `cudaMalloc` / `cudaFree` between
    stream work can be replaced by stream-ordered `cudaMallocAsync` /
    `cudaFreeAsync` or moved to set-up.

    ## Fix safety
    There is a fix, for Numba launches only: when the function queues its other
    work on exactly one stream, `kernel[grid, block](...)` becomes
    `kernel[grid, block, s](...)`. It is **unsafe**: the kernel is then ordered after
    the work on `s` only, not after everything on the device, so code that relied on
    the barrier (work on another stream that the kernel must follow) needs a wait.
    With several streams, or a stream drawn from a list, there is no fix: which
    stream is meant is a decision.

    ## Known limits
    - A stream received as a parameter, read from another module or created by
      an unknown call has an unknown blocking flag: the rule stays silent.
    - Helpers are followed only within the same module.
    - The rule assumes stream 0 is the legacy default stream, unless the file
      itself switches per-thread default streams on (`os.environ[
      "CUPY_CUDA_PER_THREAD_DEFAULT_STREAM"] = "1"`,
      `NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM`, `CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM`,
      `numba.config.CUDA_PER_THREAD_DEFAULT_STREAM = 1`): then stream 0 is the
      calling thread's default stream, not a barrier, and the rule is silent for
      that framework. Switched on outside the file (the shell's environment, a
      launcher), say so in the config: `per-thread-default-stream = ["cupy"]`.
    - Allocations through a framework (CuPy's memory pool, Numba
      `device_array`, pinned allocations) are not reported, although a pool miss
      or a Numba `cuMemAlloc` can itself be an implicit synchronization point.

    ## References
    - CUDA Runtime API: *Stream synchronization behavior* (legacy default stream,
      blocking and non-blocking streams).
    - CUDA Programming Guide: *Implicit Synchronization*.
    - PyTorch pool streams are non-blocking: pytorch/pytorch#2702, #3054, #101300.
    - Non-blocking CuPy stream against legacy-stream work of another library:
      cupy/cupy#6104.
    - [API facts](../api-facts.md) (the fact base behind the tables in `src/streamlint/model/api/`): §1.1 *Kinds of default stream*, §1.3 *Implicit
      synchronization points*, §6 *Cross-framework interop facts*.
    """

    code = "SL101"
    name = "default-stream-barrier"
    summary = "Device work on the legacy default stream between work on blocking streams"
    fix_availability = "sometimes"

    def check(self, analysis):
        # Most bodies have no blocking stream at all: one look each, instead of a scan of
        # the body for every default-stream operation (quadratic on long bodies).
        blocking = {
            id(record)
            for record in analysis.functions
            if any(w.is_stream_work and w.stream.blocking is True for w in record.ops)
        }
        builder = FixBuilder(analysis)
        per_thread = per_thread_switched(analysis.source)
        for record, op in analysis.all_ops(helpers=True):
            if id(record) not in blocking:
                continue
            if op.kind not in DEVICE_WORK | {OpKind.RAW_ALLOC} or not is_default_stream(op.stream):
                continue
            if op.framework in per_thread and op.stream.kind is StreamKind.AMBIENT:
                continue  # the file switched this framework to the per-thread default stream
            if op.kind in COPIES and op.host_blocking is not False:
                continue  # a synchronous copy is SL202's finding, not also SL101's
            before, after = between_stream_work(record, op, blocking_only=True)
            if not (before and after):
                continue
            what = "cudaMalloc/cudaFree" if op.kind is OpKind.RAW_ALLOC else op.kind.value
            yield Finding(
                op.node,
                f"{api_named(op.api)} queues a {what} on the legacy default stream{via_helper(analysis, op)} "
                f"between work on blocking streams: {waits_both_ways(before, after, what)}",
                fix=_fix(builder, record, op),
                help="queue it on a stream (or create the streams non-blocking)",
            )


def _fix(builder: FixBuilder, record, op):
    """A Numba launch `kernel[grid, block](...)` goes on the function's one stream:
    `kernel[grid, block, s](...)`. Unsafe: the kernel is then ordered only after the
    work on `s`, no longer after everything on the device."""
    node = op.node
    if op.framework != "numba" or op.helper is not None or not isinstance(node, cst.Call):
        return None
    config = node.func
    if not isinstance(config, cst.Subscript) or len(config.slice) != 2:
        return None
    stream = region_stream(builder, record, op)
    if stream is None:
        return None
    last = config.slice[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    third = cst.SubscriptElement(cst.Index(cst.parse_expression(stream)))
    new = config.with_changes(slice=[*config.slice[:-1], last, third])
    return make_fix(f"Launch on `{stream}`", Applicability.UNSAFE, [builder.replace(config, new)])
