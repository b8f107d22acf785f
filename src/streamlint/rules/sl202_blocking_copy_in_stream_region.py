"""SL202 blocking-copy-in-stream-region: a host-blocking copy with stream work after it that could overlap."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst

from streamlint.fixes.edits import FixBuilder, append_arg, bound_before, is_pasteable, make_fix, with_keyword
from streamlint.fixes.model import Applicability
from streamlint.model.api.facts import OpKind
from streamlint.model.domain.paths import Index, IndexKind, RootKind
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.readings.operations import (
    chosen_streams,
    host_waits_after,
    own_operations,
    streams_working_after,
    work_before,
)
from streamlint.model.summary.effects import Operation
from streamlint.model.syntax import ancestry as nesting
from streamlint.rules import _labels as labels
from streamlint.rules._shared import api_named, joined, named
from streamlint.rules.base import Finding, Rule

_FIX = {
    "numba": "pass `stream=` so the copy is queued on a stream",
    "cupy": "read back without waiting: `x.get(stream=s, out=pinned, blocking=False)` into a "
            "`cupyx.empty_pinned` buffer, then synchronize once before the host uses it",
    "cuda-python": "use the `...Async` copy on a stream",
    "torch": "read back without waiting: `pinned.copy_(x, non_blocking=True)` into a `pin_memory=True` "
             "buffer, then synchronize the stream (or an event) once before the host uses it",
}


class BlockingCopyInStreamRegion(Rule):
    """
    ## What it does
    Flags a host-blocking copy, for which a stream-ordered asynchronous form
    exists, in a function (or module top level) that uses explicit streams, when
    more explicit-stream work follows it (later in the function, or in the next
    iteration of an enclosing loop):
    - Numba-CUDA: `cuda.to_device(x)`, `d.copy_to_host()`, `d.copy_to_device(x)`
      without `stream=` (and `d` not bound to a stream).
    - CuPy: `cp.asnumpy(x)` / `x.get()` with the default `blocking=True` inside a
      stream context (`with s:`).
    - PyTorch: `.cpu()` / `.to("cpu")` of a CUDA tensor without
      `non_blocking=True` inside `with torch.cuda.stream(s):`.
    - cuda-python: `cudaMemcpy`, `cuMemcpyHtoD`, `cuMemcpyDtoH`.

    It is also reported at the call site of a function of the same module that
    hides such a copy; the message names the helper and its line.

    The final read-out after the pipeline is fine, and so is a copy that a host
    synchronization separates from the later stream work (nothing could have
    overlapped it), and a device-to-host read whose value the host needs at
    once: it decides the control flow (`if res < tol: break`), the shape of the
    next arrays (`n = int(count.get())` then `cp.empty(n)`), or an assertion.

    **One stream or several.** This rule is about stream/stream overlap: it
    reports a blocking copy only when work on *another* stream (or on a stream
    it cannot tell apart) is queued after it. A blocking copy in a loop that uses
    one stream costs host/GPU overlap instead (the host waits every iteration
    and cannot queue the next one's work); SL502 reports that case in a hot
    path. One call never gets both. (Numba's and cuda-python's synchronous
    copies run on the legacy default stream, so explicit-stream work after them
    is on another stream: SL202.)

    ## Why is this bad?
    The host waits inside the call, so it cannot queue the work that should have
    overlapped the copy:
    - The Numba and cuda-python synchronous copies run on the legacy default
      stream. A device-to-host copy returns only when it is complete; a
      host-to-device copy from pinned memory is synchronous, and one from
      pageable memory synchronizes first and returns once the data is staged.
      Between work on blocking streams they are also a barrier for those
      streams (reported here, not again as SL101).
    - CuPy's `asnumpy` / `get` are blocking by default since CuPy v13: they
      synchronize the *whole* stream they run on, not only the copy. Inside
      `with s1:` the host waits for everything queued on `s1` before it can give
      `s2` any work, so the two streams never run side by side.

    Measured in PyTorch on an H200 (256 MB in, 30 kernels, out): 23.1 ms
    sequential, 17.5 ms with two streams, pinned buffers and asynchronous copies.

    A synchronous copy *before* any stream work does not serialize the
    independent streams that follow (seed 002's claim that `prepareData`
    "serializes everything" is wrong), but the host still waits in it instead of
    queuing the stream work that an asynchronous copy would have overlapped, so
    it is flagged when that work follows with no synchronization in between.

    ## Example
    ```python
    import cupy as cp

    s1 = cp.cuda.Stream(non_blocking=True)
    s2 = cp.cuda.Stream(non_blocking=True)
    with s1:
        r_a = cp.sin(d_a) * cp.cos(d_a)
        h_a = cp.asnumpy(r_a)  # waits for all of s1 before s2 gets any work
    with s2:
        r_b = cp.sin(d_b) * cp.cos(d_b)
        h_b = cp.asnumpy(r_b)  # final read-out: fine
    ```
    ```python
    import numpy as np
    from numba import cuda


    @cuda.jit
    def process(d_in, d_out):
        i = cuda.grid(1)
        d_out[i] += d_in[i]


    stream = cuda.stream()
    d_in = cuda.device_array(n, dtype=np.float32)
    for i in range(n_chunks):
        d_in.copy_to_device(h_chunks[i])  # synchronous, on stream 0
        process[blocks, threads, stream](d_in, d_out)
    ```
    ```python
    from cuda.bindings import runtime as cudart

    H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice


    def prepare_data(d_ptr, h_ptr, nbytes):
        cudart.cudaMemcpy(d_ptr, h_ptr, nbytes, H2D)


    err, s1 = cudart.cudaStreamCreate()
    err, s2 = cudart.cudaStreamCreate()
    cudart.cudaMemcpyAsync(d_a, h_a_ptr, nbytes, H2D, s1)
    prepare_data(d_b, h_b_ptr, nbytes)  # hidden cudaMemcpy: host waits, and a barrier
    cudart.cudaMemcpyAsync(d_c, h_c_ptr, nbytes, H2D, s2)
    ```

    ## Use instead
    Use the asynchronous form on the stream, with pinned host buffers (an
    asynchronous copy of pageable memory does not overlap; see SL301), and
    synchronize before the host reads the results:
    ```python
    import cupy as cp
    import cupyx

    s1 = cp.cuda.Stream(non_blocking=True)
    s2 = cp.cuda.Stream(non_blocking=True)
    h_a = cupyx.empty_pinned(d_a.shape, dtype=d_a.dtype)
    with s1:
        r_a = cp.sin(d_a) * cp.cos(d_a)
        cp.asnumpy(r_a, out=h_a, blocking=False)
    with s2:
        r_b = cp.sin(d_b) * cp.cos(d_b)
        h_b = cp.asnumpy(r_b)
    s1.synchronize()  # before reading h_a
    ```
    ```python
    import numpy as np
    from numba import cuda


    @cuda.jit
    def process(d_in, d_out):
        i = cuda.grid(1)
        d_out[i] += d_in[i]


    stream = cuda.stream()
    h_chunks = cuda.pinned_array((n_chunks, n), dtype=np.float32)  # filled by the producer
    d_in = cuda.device_array(n, dtype=np.float32)
    for i in range(n_chunks):
        d_in.copy_to_device(h_chunks[i], stream=stream)
        process[blocks, threads, stream](d_in, d_out)
    ```
    ```python
    from cuda.bindings import runtime as cudart

    H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice


    def prepare_data_async(d_ptr, h_ptr, nbytes, stream):
        cudart.cudaMemcpyAsync(d_ptr, h_ptr, nbytes, H2D, stream)


    err, s1 = cudart.cudaStreamCreate()
    err, s2 = cudart.cudaStreamCreate()
    err, h_b_ptr = cudart.cudaMallocHost(nbytes)  # pinned, allocated at set-up
    cudart.cudaMemcpyAsync(d_a, h_a_ptr, nbytes, H2D, s1)
    prepare_data_async(d_b, h_b_ptr, nbytes, s2)
    cudart.cudaMemcpyAsync(d_c, h_c_ptr, nbytes, H2D, s2)
    ```
    After an asynchronous device-to-host copy, the host must not read the
    destination before the stream (or an event recorded after the copy) is
    synchronized.

    ## Fix safety
    When the function queues its work on exactly one explicit stream, bound once
    before the copy, the fix queues the copy on it: Numba's `to_device`,
    `copy_to_host` and `copy_to_device` get `stream=s`; cuda-python's `cudaMemcpy`,
    `cuMemcpyHtoD` and friends become their `...Async` form with the stream as last
    argument. It is **unsafe**: the host no longer waits for the copy, so a host read
    of a device-to-host result needs `s.synchronize()` first, and a pageable host
    buffer keeps the copy from overlapping (SL301). CuPy read-backs get no fix (the
    asynchronous form needs a pinned `out=` buffer).

    ## Known limits
    - Helpers are followed only within the same module.
    - A CuPy copy outside any stream context runs on the current stream, which
      the analysis cannot know when it was set elsewhere (`s.use()` in another
      module): it stays silent.
    - Whether the copied data is needed by the host right away (so that the wait
      is unavoidable) cannot be decided statically; suppress the finding there.

    ## References
    - CUDA Runtime API: *API synchronization behavior* (memcpy).
    - cupy/cupy#7820 and #7938 (`asnumpy` / `get` blocking by default since v13),
      cupy/cupy#1692 and #1970 (`blocking=False` needs a pinned `out`).
    - Numba-CUDA documentation: *Memory management* (`user/memory.rst`).
    - [API facts](../api-facts.md) (the fact base behind the tables in `src/streamlint/model/api/`): §1.2 *Host-side behavior of memcpy/memset*, §2.3,
      §3.2, §5.1, §5.2, §8 item 6.
    """

    code = "SL202"
    name = "blocking-copy-in-stream-region"
    summary = "Host-blocking copy between stream work, where a stream-ordered async copy exists"
    fix_availability = "sometimes"

    def check(self, analysis):
        model = analysis.v3
        builder = FixBuilder(analysis)
        reported: set[str] = set()
        for qualname, at in own_operations(model, through_calls=True):
            operation = at.operation
            if at.site in reported or not _blocking_copy(operation, at.stream):
                continue
            region = chosen_streams(model, qualname, at)
            call = model.node_of(at.site)
            after = [s for s in _work_after(model, qualname, at, call) if s != at.stream and s.known]
            if not region or not after or not isinstance(call, cst.Call):
                continue
            reported.add(at.site)
            if _chosen(at.stream):
                blocks = f"blocks the host until {named(stream_label(model, at.stream, analysis.module))} has drained"
            else:
                blocks = "is synchronous and blocks the host"
            names = list(dict.fromkeys(named(stream_label(model, s, analysis.module)) for s in after))
            framework = _framework(operation)
            yield Finding(
                call,
                f"{api_named(_api(model, at, call, analysis))}{_inside(model, at, analysis)} {blocks}, so the work "
                f"queued after it on {joined(names)} cannot overlap it",
                fix=_fix(builder, model, qualname, at, call, region, framework) if not at.chain else None,
                help=_FIX.get(framework, "use the asynchronous form on the stream"),
            )


_COPIES = frozenset({OpKind.COPY_H2D.value, OpKind.COPY_D2H.value, OpKind.COPY.value, OpKind.COPY_D2D.value})


def _blocking_copy(operation: Operation, stream: Optional[StreamRef]) -> bool:
    """A copy the host waits for: a synchronous API whose stream-ordered form exists, or a
    read-back (CuPy's `get()`, PyTorch's `.cpu()`) inside a stream the code chose, which drains it."""
    if operation.op not in _COPIES or operation.host_blocking is not True:
        return False
    readback = operation.op == OpKind.COPY_D2H.value and _framework(operation) in ("cupy", "torch")
    return operation.sync_form or (readback and _chosen(stream))


def _framework(operation: Operation) -> str:
    root = operation.api.split(".", 1)[0]
    return {"cuda": "cuda-python", "numba": "numba", "cupy": "cupy", "torch": "torch"}.get(root, root)


def _chosen(stream: Optional[StreamRef]) -> bool:
    return stream is not None and stream.kind in (StreamRefKind.CREATED, StreamRefKind.PATH)


def stream_label(model, stream: StreamRef, module: cst.Module) -> str:
    """How a message names a stream: a made stream by the name it was bound to, a held one by
    its path (`streams[...]` for one drawn from a collection), the default streams in words."""
    if stream.kind is StreamRefKind.PATH and stream.path is not None and stream.path.root.kind is RootKind.FRESH:
        # an item of a pool of streams: the name of the collection made with them, else the first one's
        made = model.node_of(stream.site.split("|")[0].split(">")[-1]) if stream.site else None
        pool = labels.pool_name(made, module) if made is not None else ""
        first = labels.bound_name(made, module) if made is not None and not pool else ""
        return f"{pool}[...]" if pool else first or "a stream made here"
    if stream.kind is StreamRefKind.PATH and stream.path is not None:
        return labels.path_label(stream.path)
    if stream.kind is StreamRefKind.CREATED:
        made = model.node_of(stream.site)
        return (labels.bound_name(made, module) if made is not None else "") or "a stream made here"
    return {StreamRefKind.LEGACY: "the default stream", StreamRefKind.AMBIENT: "the current stream"}.get(
        stream.kind, "another stream")


def _spelling(func: cst.BaseExpression, analysis) -> str:
    text = labels.spelled(func) or analysis.code(func)
    if "\n" in text and isinstance(func, cst.Attribute):
        return f"(...).{func.attr.value}"
    return text


def _work_after(model, qualname: str, at, call) -> list:
    """The streams of the work after the copy; in a loop, the next iteration's work before it too."""
    after = streams_working_after(model, qualname, at)
    function = model.solver.program.function(qualname)
    if not at.operation.in_loop or function is None or not isinstance(call, cst.Call):
        return after
    loop = nesting.outermost_loop(function.node, call)
    if loop is not None and any(_holds(model, loop, site) for site in host_waits_after(model, qualname, at)):
        return after  # the host waits again before this iteration ends: the next one's work is queued after that wait anyway
    for stream, site in work_before(model, qualname, at) if loop is not None else ():
        node = model.node_of(site)
        if node is None or not nesting.holds(loop, node):
            continue
        if stream is None:
            break  # the next iteration's work up to the host's first wait
        stream = _next_iteration(stream, loop)
        if stream not in after:
            after.append(stream)
    return after


def _holds(model, loop: cst.CSTNode, site: str) -> bool:
    node = model.node_of(site)
    return node is not None and nesting.holds(loop, node)


def _next_iteration(stream: StreamRef, loop: cst.CSTNode) -> StreamRef:
    """The stream the next iteration's work runs on: an item of a pool drawn by a ring slot of the
    loop's counter (`streams[i % 2]`) is the next slot's."""
    if stream.kind is not StreamRefKind.PATH or stream.path is None:
        return stream
    counters = nesting.loop_counters(loop)
    path = stream.path
    for step in path.steps:
        if isinstance(step, Index) and step.kind is IndexKind.SLOT and step.symbol in counters:
            path = path.shifted(step.symbol, 1)
    return replace(stream, path=path) if path != stream.path else stream


def _api(model, at, call: cst.Call, analysis) -> str:
    """The copy as its own call spells it (inside a helper: the helper's call of it)."""
    inner = model.node_of(at.own_site) if at.chain else call
    return _spelling(inner.func if isinstance(inner, cst.Call) else call.func, analysis)


def _inside(model, at, analysis) -> str:
    return labels.inside(model, at, analysis, lambda inner: api_named(labels.spelled(inner.func) or "")
                         if isinstance(inner, cst.Call) else None)


# cuda-python's synchronous copies and their stream-ordered forms (same arguments, then
# the stream).
_ASYNC_FORM = {
    "cudaMemcpy": "cudaMemcpyAsync",
    "cudaMemcpy2D": "cudaMemcpy2DAsync",
    "cuMemcpy": "cuMemcpyAsync",
    "cuMemcpyHtoD": "cuMemcpyHtoDAsync",
    "cuMemcpyDtoH": "cuMemcpyDtoHAsync",
    "cuMemcpyDtoD": "cuMemcpyDtoDAsync",
}
_NUMBA_COPIES = ("to_device", "copy_to_host", "copy_to_device")


def _fix(builder: FixBuilder, model, qualname: str, at, node: cst.Call, region: list, framework: str):
    """Queue the copy on the region's stream: the one explicit stream the function uses.
    With several streams, the right one is a judgement call: no fix."""
    if len(region) != 1 or region[0].kind is StreamRefKind.PATH and _drawn(region[0]):
        return None
    label = stream_label(model, region[0], builder.module)
    function = model.solver.program.function(qualname)
    if not is_pasteable(label) or function is None:
        return None
    if not bound_before(builder, function.node, label, builder.analysis.line_of(node)):
        return None
    stream = label
    name = node.func.attr.value if isinstance(node.func, cst.Attribute) else getattr(node.func, "value", "")
    if framework == "numba" and name in _NUMBA_COPIES and not any(a.star for a in node.args):
        new = with_keyword(node, "stream", stream)
        message = f"Queue the copy on `{stream}` (`stream={stream}`)"
    elif framework == "cuda-python" and name in _ASYNC_FORM and not any(a.keyword or a.star for a in node.args):
        func = node.func
        renamed = cst.Name(_ASYNC_FORM[name])
        func = func.with_changes(attr=renamed) if isinstance(func, cst.Attribute) else renamed
        new = append_arg(node.with_changes(func=func), cst.Arg(cst.parse_expression(stream)))
        message = f"Use `{_ASYNC_FORM[name]}` on `{stream}`"
    else:
        return None
    # The host no longer waits for the copy: a host read of its result needs a sync.
    return make_fix(message, Applicability.UNSAFE, [builder.replace(node, new)])


def _drawn(stream: StreamRef) -> bool:
    """A stream drawn from a collection (`streams[i % 2]`): which one is meant varies."""
    return stream.path is not None and any(isinstance(step, Index) for step in stream.path.steps)
