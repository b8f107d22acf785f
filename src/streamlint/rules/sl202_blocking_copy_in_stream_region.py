"""SL202 blocking-copy-in-stream-region: a host-blocking copy with stream work after it that could overlap."""

from __future__ import annotations

import libcst as cst

from streamlint.fixes.edits import FixBuilder, append_arg, make_fix, with_keyword
from streamlint.fixes.idioms import region_stream
from streamlint.fixes.model import Applicability
from streamlint.model.ops import OpKind
from streamlint.model.purpose import sync_purpose
from streamlint.model.queries import streams_named
from streamlint.rules._shared import api_named, blocking_copy_in_region, named, overlappable_after, via_helper
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
        builder = FixBuilder(analysis)
        for record, op in analysis.all_ops(helpers=True):
            if not blocking_copy_in_region(record, op):
                continue
            if op.kind is OpKind.COPY_D2H and op.helper is None:
                purpose = sync_purpose(analysis, record, op)
                if purpose is not None and purpose.needed:
                    continue  # the host needs the data now (a loop exit, a shape, an assertion)
            after = overlappable_after(record, op)
            if op.stream is not None and op.stream.explicit:
                blocks = f"blocks the host until {named(op.stream.label)} has drained"
            else:
                blocks = "is synchronous and blocks the host"
            yield Finding(
                op.node,
                f"{api_named(op.api)}{via_helper(analysis, op)} {blocks}, so the work queued after it on "
                f"{streams_named(after)} cannot overlap it",
                fix=_fix(builder, record, op),
                help=_FIX.get(op.framework, "use the asynchronous form on the stream"),
            )


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


def _fix(builder: FixBuilder, record, op):
    """Queue the copy on the region's stream: the one explicit stream the function uses.
    With several streams, the right one is a judgement call: no fix."""
    node = op.node
    if op.helper is not None or not isinstance(node, cst.Call):
        return None
    stream = region_stream(builder, record, op)
    if stream is None:
        return None
    name = node.func.attr.value if isinstance(node.func, cst.Attribute) else getattr(node.func, "value", "")
    if op.framework == "numba" and name in _NUMBA_COPIES and not any(a.star for a in node.args):
        new = with_keyword(node, "stream", stream)
        message = f"Queue the copy on `{stream}` (`stream={stream}`)"
    elif op.framework == "cuda-python" and name in _ASYNC_FORM and not any(a.keyword or a.star for a in node.args):
        func = node.func
        renamed = cst.Name(_ASYNC_FORM[name])
        func = func.with_changes(attr=renamed) if isinstance(func, cst.Attribute) else renamed
        new = append_arg(node.with_changes(func=func), cst.Arg(cst.parse_expression(stream)))
        message = f"Use `{_ASYNC_FORM[name]}` on `{stream}`"
    else:
        return None
    # The host no longer waits for the copy: a host read of its result needs a sync.
    return make_fix(message, Applicability.UNSAFE, [builder.replace(node, new)])
