"""What a parameter's annotation says it is: a row per annotated type (the fact tables'
type names), so `x: torch.Tensor` is a tensor and `a: cp.ndarray` device memory."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.api import cupy, numba_cuda, torch_api
from streamlint.model.domain.values import AbsValue, Memory, ValueKind
from streamlint.model.transfer.names import dotted, qualified

_TYPES: dict[str, AbsValue] = {
    **{name: AbsValue(ValueKind.BUFFER, "torch", Memory.UNKNOWN) for name in torch_api.TENSOR_TYPES},
    **{name: AbsValue(ValueKind.BUFFER, "cupy", Memory.DEVICE) for name in cupy.DEVICE_ARRAY_TYPES},
    **{name: AbsValue(ValueKind.BUFFER, "numba", Memory.DEVICE) for name in numba_cuda.DEVICE_ARRAY_TYPES},
    "numpy.ndarray": AbsValue(ValueKind.BUFFER, "numpy", Memory.PAGEABLE),
    "torch.cuda.Stream": AbsValue(ValueKind.STREAM, "torch"),
    "torch.Stream": AbsValue(ValueKind.STREAM, "torch"),
    "torch.cuda.Event": AbsValue(ValueKind.EVENT, "torch"),
    "cupy.cuda.Stream": AbsValue(ValueKind.STREAM, "cupy"),
    "cupy.cuda.ExternalStream": AbsValue(ValueKind.STREAM, "cupy"),
    "cupy.cuda.Event": AbsValue(ValueKind.EVENT, "cupy"),
    "numba.cuda.cudadrv.driver.Stream": AbsValue(ValueKind.STREAM, "numba"),
    "numba.cuda.cudadrv.driver.Event": AbsValue(ValueKind.EVENT, "numba"),
    "cuda.core.Stream": AbsValue(ValueKind.STREAM, "cuda-python"),
    "cuda.core.Event": AbsValue(ValueKind.EVENT, "cuda-python"),
}


def annotated(param: cst.Param, imports: dict[str, str]) -> Optional[AbsValue]:
    if param.annotation is None:
        return None
    name = dotted(param.annotation.annotation)
    if name is None:
        return None
    return _TYPES.get(qualified(name, imports) or name)
