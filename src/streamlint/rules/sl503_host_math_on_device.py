"""SL503 host-math-on-device: arithmetic on host numbers done on the GPU and read back."""

from __future__ import annotations

from streamlint.model.queries import host_round_trip
from streamlint.rules._shared import api_named, via_helper
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
        for record, op in analysis.all_ops():
            trip = host_round_trip(record, op)
            if trip is None:
                continue
            kernel = trip.kernel
            advice = f"compute it on the host (`{trip.host}`)" if trip.host else "compute it on the host"
            yield Finding(
                op.node,
                f"{api_named(kernel.api)} of host numbers runs on the GPU and {api_named(op.api)} waits for the stream to read "
                f"it back{via_helper(analysis, op)}",
                help=advice,
            )
