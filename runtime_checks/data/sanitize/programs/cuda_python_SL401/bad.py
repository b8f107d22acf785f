"""cuda-python SL401, bad: an upload on stream s1 writes d_a and a device-to-device copy on
s2 reads it with nothing ordering the two (driver API only)."""
import numpy as np
from cuda.bindings import driver as cu


def checked(result):
    err, *values = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise RuntimeError(f"CUDA driver error {err}")
    return values[0] if len(values) == 1 else values


def run(n: int = 1 << 20, ordered: bool = False):
    checked(cu.cuInit(0))
    ctx = checked(cu.cuDevicePrimaryCtxRetain(checked(cu.cuDeviceGet(0))))
    checked(cu.cuCtxSetCurrent(ctx))
    nbytes = n * 4
    s1 = checked(cu.cuStreamCreate(1))  # CU_STREAM_NON_BLOCKING
    s2 = checked(cu.cuStreamCreate(1))
    src = np.arange(n, dtype=np.float32)
    d_a = checked(cu.cuMemAlloc(nbytes))
    d_b = checked(cu.cuMemAlloc(nbytes))
    checked(cu.cuMemcpyHtoDAsync(d_a, src, nbytes, s1))
    if ordered:
        uploaded = checked(cu.cuEventCreate(0))
        checked(cu.cuEventRecord(uploaded, s1))
        checked(cu.cuStreamWaitEvent(s2, uploaded, 0))
    checked(cu.cuMemcpyDtoDAsync(d_b, d_a, nbytes, s2))
    checked(cu.cuStreamSynchronize(s2))
    checked(cu.cuStreamSynchronize(s1))
    out = np.empty(n, dtype=np.float32)
    checked(cu.cuMemcpyDtoH(out, d_b, nbytes))
    checked(cu.cuMemFree(d_a))
    checked(cu.cuMemFree(d_b))
    return out
