"""SL301 async-copy-pageable: an asynchronous host/device copy whose host buffer is pageable."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.api.facts import OpKind
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.values import Memory
from streamlint.model.readings.hot_paths import own_operations as hot_operations
from streamlint.model.summary.effects import Operation
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.rules import _labels as labels
from streamlint.rules._hot_uploads import copy_cost_at_stake
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

    Only where the staging costs something: a copy queued on a stream the code
    chose (it asked for overlap there), or one on a hot path (every pass of a loop
    that repeats it, every call of `forward` or of another hot entry, every pass of
    a caller's loop in sight). A one-off copy on the current stream (a model's
    set-up in its constructor, a loader helper called once, a final read-back)
    waits for its staging once and has nothing to overlap: not flagged.

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
    for step in range(num_steps):
        x = x_host.to("cuda", non_blocking=True)  # every step: no overlap, host waits
        model(x).sum().backward()
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

    x_host = torch.from_numpy(np.load("features.npy")).pin_memory()  # once
    for step in range(num_steps):
        x = x_host.to("cuda", non_blocking=True)
        model(x).sum().backward()
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
        model = analysis.v3
        ancestry = Ancestry(analysis.module)
        reported: set[str] = set()
        for at in hot_operations(model):
            operation = at.operation
            if at.site in reported or not _async_pageable_copy(operation, at.stream):
                continue
            call = model.node_of(at.site)
            if not isinstance(call, cst.Call) or not copy_cost_at_stake(model, ancestry, at, call):
                continue
            reported.add(at.site)
            label = labels.at(call, operation.host_at, analysis.module)
            name = f"`{label}`" if label else "a pageable buffer"
            side = "from" if operation.op == OpKind.COPY_H2D.value else "into"
            yield Finding(
                call,
                f"{api_named(analysis.code(call.func))} is an asynchronous copy {side} pageable host memory ({name}): "
                f"the driver stages it through a pinned buffer and the host waits, so it cannot overlap other work",
                help="use pinned memory",
            )


_COPIES = frozenset({OpKind.COPY_H2D.value, OpKind.COPY_D2H.value})


def _async_pageable_copy(operation: Operation, stream: Optional[StreamRef]) -> bool:
    """An asynchronous copy form, asked not to block, whose host side is pageable memory. (An
    upload of CuPy's queued on the current stream is no asynchronous copy the code asked for.)"""
    if operation.op not in _COPIES or not operation.async_form or operation.non_blocking is not True:
        return False
    if operation.host_memory is not Memory.PAGEABLE or operation.host_loader_batch:
        return False  # (a data loader's batch: the loader is where to pin)
    if operation.api.startswith("cupy.") and operation.op == OpKind.COPY_H2D.value:
        return stream is not None and stream.kind in (StreamRefKind.CREATED, StreamRefKind.PATH)
    return True
