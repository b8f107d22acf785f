"""SL101 default-stream-barrier: legacy default stream work between work on blocking streams."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.fixes.edits import FixBuilder, bound_before, make_fix
from streamlint.fixes.model import Applicability
from streamlint.model import declared
from streamlint.model.api import per_thread
from streamlint.model.domain.paths import Index
from streamlint.model.domain.streams import StreamRefKind
from streamlint.model.readings.operations import (
    OperationAt,
    chosen_streams,
    orders_with_legacy,
    own_operations,
    stream_work_around,
)
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.model.syntax.per_thread import settings
from streamlint.model.syntax.sync_purpose import comprehension_of
from streamlint.rules import _labels as labels
from streamlint.rules._shared import api_named, joined
from streamlint.rules.base import Finding, Rule
from streamlint.rules.sl202_blocking_copy_in_stream_region import stream_label


class DefaultStreamBarrier(Rule):
    """
    ## What it does
    Flags device work issued on the legacy default stream (stream 0) between
    work on explicit *blocking* streams: a kernel launch, a memset, an async
    copy given stream 0, or a raw `cudaMalloc` / `cudaFree`. Blocking streams
    are CuPy `cp.cuda.Stream()` (unless `non_blocking=True`), Numba
    `cuda.stream()` and cuda-python `cudaStreamCreate()` (or a stream created
    with the default flag). A raw `cudaMalloc` / `cudaFree` is no queued work
    but worse: it synchronizes the device whatever the streams' flags, so its
    message says so and its advice is to allocate at set-up or to use the
    stream-ordered `cudaMallocAsync` / `cudaFreeAsync`.

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
        model = analysis.v3
        ancestry = Ancestry(analysis.module)
        builder = FixBuilder(analysis)
        per_thread: Optional[set[str]] = None  # (read when a candidate needs it: a walk of the whole module)
        reported: set[tuple[str, str]] = set()
        for qualname, at in own_operations(model, through_calls=True):
            operation = at.operation
            key = (at.site, at.own_site)
            if key in reported or operation.op not in _BARRIER_WORK or at.stream is None:
                continue
            framework = at.framework or _framework(operation.api)
            if at.stream.kind is not StreamRefKind.LEGACY or not framework:
                continue
            if per_thread is None:
                per_thread = per_thread_switched(analysis.module)
            if framework in per_thread:
                continue  # (whose work is unknown; the file switched this framework to the per-thread default stream)
            if operation.op in _COPIES and operation.sync_form:
                continue  # a synchronous copy is SL202's finding, not also SL101's
            before, after = stream_work_around(model, qualname, at, ancestry, orders_with_legacy)
            node = model.node_of(at.site)
            if not (before and after) or node is None:
                continue
            reported.add(key)
            waited = _labels(model, before, analysis.module, ancestry)
            waiting = _labels(model, after, analysis.module, ancestry)
            if operation.op == _RAW_ALLOC:
                # not queued work: a raw allocation or free synchronizes the device, whatever the streams' flags
                call = operation.api.rsplit(".", 1)[-1]
                yield Finding(
                    node,
                    f"{_named(model, at, node, analysis)} synchronizes the device{_inside(model, at, analysis)} "
                    f"between work on streams (a raw {call} is not stream-ordered): {_both_ways(waited, waiting, call)}",
                    help="allocate once at set-up, or use the stream-ordered `cudaMallocAsync`/`cudaFreeAsync` on "
                         "the stream that uses the memory",
                )
                continue
            yield Finding(
                node,
                f"{_named(model, at, node, analysis)} queues a {operation.op} on the legacy default stream"
                f"{_inside(model, at, analysis)} between work on blocking streams: "
                f"{_both_ways(waited, waiting, operation.op)}",
                fix=_fix(builder, model, qualname, at, node) if not at.chain else None,
                help="queue it on a stream (or create the streams non-blocking)",
            )


_COPIES = frozenset({"H2D copy", "D2H copy", "D2D copy", "copy"})
_RAW_ALLOC = "raw allocation"
_BARRIER_WORK = _COPIES | {"kernel", "memset", _RAW_ALLOC}
_FRAMEWORKS = {"cuda": "cuda-python", "numba": "numba", "cupy": "cupy", "torch": "torch"}


def per_thread_switched(module) -> set[str]:
    """The frameworks the module switches to the per-thread default stream (an 'on' value set to
    one of `api.per_thread.SWITCHES`), and those the project's config names."""
    found = set(declared.per_thread_configured())
    for name, value in settings(module):
        if name in per_thread.SWITCHES and value in per_thread.ON_VALUES:
            found.update(per_thread.SWITCHES[name])
    return found


def _framework(api: str) -> str:
    return _FRAMEWORKS.get(api.split(".", 1)[0], "")


def _labels(model, streams, module, ancestry: Ancestry) -> list[str]:
    return list(dict.fromkeys(f"`{_label(model, s, module, ancestry)}`" for s in streams))


def _label(model, stream, module, ancestry: Ancestry) -> str:
    """A stream's name; one of a pool made by a comprehension as drawn from it (`streams[...]`)."""
    made = model.node_of(stream.site) if stream.kind is StreamRefKind.CREATED else None
    pool = comprehension_of(made, ancestry) if made is not None else None
    name = labels.bound_name(pool, module) if pool is not None else ""
    return f"{name}[...]" if name else stream_label(model, stream, module)


def _both_ways(waited: list[str], waiting: list[str], what: str) -> str:
    """Which streams wait for the default-stream work and which it waits for, each side said
    once: "`s_out` waits for this kernel; it waits for `s_in`", or, when the same streams are on
    both sides, "`s1` and `s2` wait for this kernel, and it waits for both"."""
    verb = "waits" if len(waiting) == 1 else "wait"
    if set(waited) == set(waiting):
        if len(waiting) == 1:
            return f"it and {waiting[0]} wait for each other"
        them = "both" if len(waiting) == 2 else "all of them"
        return f"{joined(waited)} {verb} for this {what}, and it waits for {them}"
    return f"{joined(waiting)} {verb} for this {what}; it waits for {joined(waited)}"


def _spelled_work(node, analysis) -> str:
    """The work as the message names it: its call as code, an operator in words."""
    if isinstance(node, cst.AugAssign):
        return "in-place arithmetic"
    if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation)):
        return "arithmetic"
    if isinstance(node, cst.Comparison):
        return "a comparison"
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Subscript):  # a Numba launch `kernel[grid, block](...)`
            func = func.value
        return labels.spelled(func) or analysis.code(func)
    return analysis.code(node)


def _named(model, at: OperationAt, node, analysis) -> str:
    inner = model.node_of(at.own_site) if at.chain else node
    return api_named(_spelled_work(inner if inner is not None else node, analysis))


def _inside(model, at: OperationAt, analysis) -> str:
    return labels.inside(model, at, analysis, lambda inner: api_named(_spelled_work(inner, analysis)))


def _fix(builder: FixBuilder, model, qualname: str, at: OperationAt, node) -> Optional[object]:
    """A Numba launch `kernel[grid, block](...)` goes on the function's one stream:
    `kernel[grid, block, s](...)`. Unsafe: the kernel is then ordered only after the
    work on `s`, no longer after everything on the device."""
    if _framework(at.operation.api) not in ("numba", "") or not isinstance(node, cst.Call):
        return None
    config = node.func
    if not isinstance(config, cst.Subscript) or len(config.slice) != 2:
        return None
    stream = _region_stream(builder, model, qualname, at, node)
    if stream is None:
        return None
    last = config.slice[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    third = cst.SubscriptElement(cst.Index(cst.parse_expression(stream)))
    new = config.with_changes(slice=[*config.slice[:-1], last, third])
    return make_fix(f"Launch on `{stream}`", Applicability.UNSAFE, [builder.replace(config, new)])


def _region_stream(builder: FixBuilder, model, qualname: str, at: OperationAt, node) -> Optional[str]:
    """The one stream the function chose for its own work, named as it is bound before the
    launch; None for several, for one drawn from a collection, or for a name not bound there."""
    region = chosen_streams(model, qualname, at)
    if len(region) != 1:
        return None
    stream = region[0]
    if stream.kind is StreamRefKind.PATH and stream.path is not None and any(
            isinstance(step, Index) for step in stream.path.steps):
        return None
    label = stream_label(model, stream, builder.module)
    function = model.solver.program.function(qualname)
    if function is None or not label.isidentifier():
        return None
    if not bound_before(builder, function.node, label, builder.analysis.line_of(node)):
        return None
    return label
