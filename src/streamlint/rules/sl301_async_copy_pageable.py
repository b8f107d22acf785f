"""SL301 async-copy-pageable: an asynchronous host/device copy whose host buffer is pageable."""

from __future__ import annotations

from streamlint.model.ops import OpKind
from streamlint.model.values import Buffer, Mem
from streamlint.rules._shared import api_named
from streamlint.rules.base import Finding, Rule


class AsyncCopyPageable(Rule):
    """
    ## What it does
    Flags an asynchronous host-to-device or device-to-host copy whose host
    buffer is known to be pageable (ordinary, not page-locked memory):
    - PyTorch: `t.to(<cuda device>, non_blocking=True)` / `t.cuda(non_blocking=True)`
      of an unpinned tensor, `cuda_t.copy_(pageable, non_blocking=True)`, and
      `pageable.copy_(cuda_t, non_blocking=True)` (a device-to-host copy into
      pageable memory waits anyway).
    - Numba-CUDA: `cuda.to_device(np_arr, stream=s)`, `d.copy_to_host(np_arr, stream=s)`,
      `d.copy_to_host(stream=s)` (the new result array is pageable), and a bare
      `d.copy_to_host()` when `d` is bound to a stream (created with `stream=s`).
    - CuPy: `x.set(np_arr, stream=s)`, and `cp.asnumpy(x, stream=s, blocking=False)` /
      `x.get(blocking=False)` without a pinned `out=`.
    - cuda-python: `cudaMemcpyAsync` / `cuMemcpyHtoDAsync` / `cuMemcpyDtoHAsync`
      with a host pointer that does not come from `cudaMallocHost`,
      `cudaHostAlloc` or `cudaHostRegister`.

    Not flagged: `cp.asarray(np_arr)`, which stages a pageable source through
    CuPy's own pinned memory pool. Batches of a `DataLoader` are reported as
    SL302 instead.

    ## Why is this bad?
    Only a copy from or to page-locked (pinned) memory is fully asynchronous.
    With a pageable buffer the driver may synchronize with the stream and stage
    the data through pinned memory, so the "asynchronous" copy may be
    synchronous with respect to the host; a device-to-host copy into pageable
    memory in practice blocks until it is done (numba/numba#5130,
    pytorch/pytorch#39694). The copy then does not overlap with work on other
    streams, which is usually why the asynchronous form was chosen.

    Measured on an H200 (256 MB): the host spends 27.0 ms inside
    `.to("cuda", non_blocking=True)` of a pageable tensor and 0.009 ms for a
    pinned one. A PyTorch copy/compute pipeline over two streams took 17.5 ms
    against 23.1 ms sequential with pinned buffers, but 56.1 ms against
    53.3 ms with pageable ones: no overlap at all.

    In PyTorch this is a performance issue, not a correctness one:
    `non_blocking=True` on a pageable source still works and still avoids a
    stream synchronization per copy. The fix is to make the buffer pinned where
    it is created, not to drop `non_blocking`. Calling `.pin_memory()` right
    before the copy is no faster (SL303).

    ## Example
    ```python
    import numpy as np
    import torch

    x_host = torch.from_numpy(np.load("features.npy"))  # pageable
    x = x_host.to("cuda", non_blocking=True)  # does not overlap, host waits
    ```
    ```python
    import numpy as np
    from numba import cuda

    stream = cuda.stream()
    h_in = np.random.rand(n)
    d_in = cuda.to_device(h_in, stream=stream)  # pageable source
    step[blocks, threads, stream](d_in)
    h_out = d_in.copy_to_host(stream=stream)  # new pageable array: host waits
    ```
    ```python
    import cupy as cp
    import numpy as np

    s = cp.cuda.Stream()
    d_out.set(np.zeros(n, dtype=np.float32), stream=s)
    h = cp.asnumpy(d_res, stream=s, blocking=False)  # pageable result
    ```
    ```python
    import numpy as np
    from cuda.bindings import runtime as cudart

    h_buf = np.empty(n, dtype=np.float32)
    err, s = cudart.cudaStreamCreate()
    cudart.cudaMemcpyAsync(
        h_buf.ctypes.data, d_ptr, h_buf.nbytes,
        cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost, s,
    )
    ```

    ## Use instead
    Allocate the host buffers pinned, once, and synchronize before the host reads
    a device-to-host result:
    ```python
    import numpy as np
    import torch

    x_host = torch.empty(shape, dtype=torch.float32, pin_memory=True)
    x_host.numpy()[:] = np.load("features.npy")
    x = x_host.to("cuda", non_blocking=True)
    ```
    ```python
    import numpy as np
    from numba import cuda

    stream = cuda.stream()
    h_in = cuda.pinned_array(n, dtype=np.float64)
    h_in[:] = np.random.rand(n)
    h_out = cuda.pinned_array(n, dtype=np.float64)
    d_in = cuda.to_device(h_in, stream=stream)
    step[blocks, threads, stream](d_in)
    d_in.copy_to_host(h_out, stream=stream)
    stream.synchronize()  # before reading h_out
    ```
    ```python
    import cupy as cp
    import cupyx
    import numpy as np

    s = cp.cuda.Stream()
    h_zeros = cupyx.zeros_pinned(n, dtype=np.float32)
    h = cupyx.empty_pinned(d_res.shape, dtype=d_res.dtype)
    d_out.set(h_zeros, stream=s)
    cp.asnumpy(d_res, stream=s, out=h, blocking=False)
    s.synchronize()  # before reading h
    ```
    ```python
    from cuda.bindings import runtime as cudart

    err, h_ptr = cudart.cudaMallocHost(n * 4)
    err, s = cudart.cudaStreamCreate()
    cudart.cudaMemcpyAsync(
        h_ptr, d_ptr, n * 4, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost, s,
    )
    cudart.cudaStreamSynchronize(s)  # before reading the buffer
    ```
    A pinned buffer must stay alive and unmodified until the stream has passed
    the copy (pytorch/pytorch#127612; CuPy's and Numba's pinned memory is not
    tracked per stream). Pinned memory is a limited resource: allocate it once
    and reuse it.

    ## Fix safety
    There is no fix: pinning means allocating the host buffer differently where it
    is created, often in another function.

    ## Known limits
    - Only buffers the analysis saw being created pageable are reported (NumPy
      constructors, `np.load`, `torch.from_numpy`, CPU tensor factories without
      `pin_memory=True`, results of `copy_to_host()` without `ary`). A buffer that
      is a parameter, comes from another module or from an unknown call has
      unknown pinnedness: the rule stays silent.
    - cuda-python host pointers are plain integers; a pointer is judged only when
      it can be traced to where it was made in the same function or module.

    ## References
    - CUDA Runtime API: *API synchronization behavior* (asynchronous memcpy with
      pageable memory "might be synchronous").
    - numba/numba#5130 (async copies into pageable memory serialize the host),
      pytorch/pytorch#39694, pytorch/pytorch#42539 (pageable `non_blocking`
      documentation), cupy/cupy#1692 and #1970 (`blocking=False` needs a pinned
      `out`), pytorch/pytorch#127612 (mutating a pinned source too early).
    - PyTorch tutorials: `intermediate_source/pinmem_nonblock.py`.
    - [API facts](../api-facts.md) (the fact base behind the tables in `src/streamlint/model/api/`): §1.2, §2.3, §3.2, §4.3, §5.1, §5.2, §8 items 2, 3, 10.
    """

    code = "SL301"
    name = "async-copy-pageable"
    summary = "Asynchronous host/device copy with a pageable host buffer (no overlap)"

    def check(self, analysis):
        for _, op in analysis.all_ops():
            if op.kind not in (OpKind.COPY_H2D, OpKind.COPY_D2H) or not op.is_async_api:
                continue
            if op.host_blocking is not False or op.pinned_out:
                continue  # a synchronous form, or a pinned destination
            host = op.host_buffer
            if not (isinstance(host, Buffer) and host.mem is Mem.PAGEABLE and host.framework != "cupy"):
                continue
            if op.framework == "torch" and (op.non_blocking is not True or host.loader_site):
                continue  # blocking copies are not async; loader batches are SL302
            if op.framework == "cupy" and op.kind is OpKind.COPY_H2D and not op.on_explicit_stream:
                continue
            name = f"`{host.label}`" if host.label else "a pageable buffer"
            side = "from" if op.kind is OpKind.COPY_H2D else "into"
            yield Finding(
                op.node,
                f"{api_named(op.api)} is an asynchronous copy {side} pageable host memory ({name}): the driver "
                f"stages it through a pinned buffer and the host waits, so it cannot overlap other work",
                help="use pinned memory",
            )
