"""SL503 host-math-on-device: arithmetic on host numbers done on the GPU and read back."""

from __future__ import annotations

import libcst as cst

from streamlint.model.api import host_math
from streamlint.model.readings.operations import round_trips
from streamlint.rules.base import Finding, Rule


class HostMathOnDevice(Rule):
    """
    ## What it does
    Flags a CuPy function applied only to numbers the host already has (literals,
    `x.shape`, `x.size`, `len(...)`, `range()` counters, names the function binds
    from them or uses as an allocation's sizes) whose result is read back at once
    with `int()`, `float()`, `bool()`, `.item()` or `.get()`:
    `int(cp.ceil(n / 32))`, `int(cp.prod(x.shape))`, `float(cp.sqrt(2.0))`.

    ## Why is this bad?
    A CuPy function of Python numbers makes a 0-dimensional array on the GPU: a
    kernel on the current stream. Reading it back is a device-to-host copy that
    waits until the stream has finished *all* the work queued before it. A grid
    size computed this way before each kernel launch stops the host at every
    launch until the GPU is idle, so the launches no longer run ahead of the GPU
    and chunked pipelines lose their overlap; and the answer was computable on the
    host in nanoseconds.

    ## Example
    ```python
    import cupy as cp

    shift_kernel = cp.RawKernel(SOURCE, "shift")


    def shift(frames, dx):
        ntheta, nz, n = frames.shape
        out = cp.empty_like(frames)
        grid = (int(cp.ceil(n / 32)), int(cp.ceil(nz / 32)), ntheta)
        shift_kernel(grid, (32, 32, 1), (out, frames, dx, n, nz, ntheta))
        return out
    ```

    ## Use instead
    ```python
    import math

    import cupy as cp

    shift_kernel = cp.RawKernel(SOURCE, "shift")


    def shift(frames, dx):
        ntheta, nz, n = frames.shape
        out = cp.empty_like(frames)
        grid = (math.ceil(n / 32), math.ceil(nz / 32), ntheta)
        shift_kernel(grid, (32, 32, 1), (out, frames, dx, n, nz, ntheta))
        return out
    ```

    ## Fix safety
    There is no fix: the host function returns a Python number where the CuPy one
    returned an array (a different type for code that goes on to use it), and the
    module may need an `import math`.

    ## Known limits
    - Only CuPy: PyTorch's functions take tensors, not Python numbers.
    - A name counts as a host number only on the evidence listed above; a
      parameter or an attribute set in another method is not known to be one, and
      such round trips stay silent.

    ## References
    - CuPy documentation: *Universal functions* (scalar arguments give
      0-dimensional arrays) and `cupy.ndarray.get` / `item` (a synchronizing
      device-to-host copy).
    - [API facts](../api-facts.md): §2 (CuPy: the current stream, blocking reads).
    """

    code = "SL503"
    name = "host-math-on-device"
    summary = "Arithmetic on host numbers done on the GPU and read back"

    def check(self, analysis):
        model = analysis.v3
        for trip in round_trips(model):
            read, kernel = model.node_of(trip.read_site), model.node_of(trip.kernel_site)
            if not isinstance(read, cst.Call) or not isinstance(kernel, cst.Call):
                continue
            host = host_math.HOST_EQUIVALENTS.get(trip.kernel.api.rsplit(".", 1)[-1])
            advice = f"compute it on the host (`{host}`)" if host else "compute it on the host"
            yield Finding(
                read,
                f"`{analysis.code(kernel.func)}` of host numbers runs on the GPU and {_reader(analysis, read)} waits for "
                "the stream to read it back",
                help=advice,
            )


def _reader(analysis, read: cst.Call) -> str:
    """`int()` for a conversion, `blocks.get` for a method, as the code spells it."""
    if isinstance(read.func, cst.Name):
        return f"`{read.func.value}()`"
    return f"`{analysis.code(read.func)}`"
