"""What a parameter's signature says it is: a row per annotated type, and a default that designates
a device (`device="cuda"`): the device the function is written for when its callers tell nothing else."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.api import cupy, numba_cuda, torch_api
from streamlint.model.domain.values import RETURNS_NO_TENSOR, SEQUENCE, AbsValue, Memory, ValueKind
from streamlint.model.transfer.devices import memory_of_device_string
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


# Sequences: a collection the caller built, not a one-pass iterator (its items are the caller's).
_SEQUENCES = frozenset({"list", "tuple", "typing.List", "typing.Tuple", "typing.Sequence", "typing.MutableSequence",
                        "collections.abc.Sequence", "collections.abc.MutableSequence"})
_SEQUENCE = AbsValue(target=SEQUENCE)  # (of unknown kind still: only what a loop over it binds is told)


def annotated(param: cst.Param, imports: dict[str, str]) -> Optional[AbsValue]:
    return _of_type(param.annotation.annotation, imports) if param.annotation is not None else None


def _of_type(node: cst.BaseExpression, imports: dict[str, str]) -> Optional[AbsValue]:
    """A type's row; `Optional[T]` of a stream or an event is one or None (of a tensor: not yet, D-12)."""
    optional = _optional_of(node, imports)
    if optional is not None:
        inner = _of_type(optional, imports)
        kept = inner is not None and inner.kind in (ValueKind.STREAM, ValueKind.EVENT)
        return inner.join_none() if kept else None
    generic = isinstance(node, cst.Subscript)  # `List[Chunk]`: of the generic's type
    name = dotted(node.value if generic else node)
    if name is None:
        return None
    name = qualified(name, imports) or name
    if generic and name in _CALLABLES:
        return _callable_of(node, imports)
    return _SEQUENCE if name in _SEQUENCES else (None if generic else _TYPES.get(name))


_CALLABLES = frozenset({"typing.Callable", "collections.abc.Callable"})
_NO_TENSOR = frozenset({"None", "int", "float", "bool", "str", "bytes", "dict", "typing.Dict"})


def _callable_of(node: cst.Subscript, imports: dict[str, str]) -> Optional[AbsValue]:
    """`Callable[[Tensor], DeviceIterator]`: a callable whose result the annotation names; one that names no tensor
    (a project class, a host value) returns none, whatever it runs on the tensors it is given."""
    result = node.slice[-1].slice.value if len(node.slice) == 2 and isinstance(node.slice[-1].slice, cst.Index) else None
    name = dotted(result.value if isinstance(result, cst.Subscript) else result) if result is not None else None
    if name is None:
        return None
    name = qualified(name, imports) or name
    if name in _TYPES or name in _SEQUENCES or name in ("typing.Any", "Any", "object", "typing.Optional", "typing.Union"):
        return None
    project = "." not in name or name.split(".", 1)[0] not in ("torch", "cupy", "numba", "numpy", "typing", "collections")
    return AbsValue(target=RETURNS_NO_TENSOR) if name in _NO_TENSOR or project else None


# Return annotations that name a number or a string the host has (`-> int`): the result is no tensor.
_HOST_NUMBERS = frozenset({"int", "float", "bool", "str", "builtins.int", "builtins.float", "builtins.bool"})


def returns_host_number(function: cst.FunctionDef, imports: dict[str, str]) -> bool:
    """Its signature says it returns a Python number or string (`def get_match_len(...) -> int:`)."""
    if function.returns is None:
        return False
    name = dotted(function.returns.annotation)
    return name is not None and (qualified(name, imports) or name) in _HOST_NUMBERS


def _optional_of(node: cst.BaseExpression, imports: dict[str, str]) -> Optional[cst.BaseExpression]:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        if isinstance(node.right, cst.Name) and node.right.value == "None":
            return node.left
        return None
    if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)):
        return None
    name = dotted(node.value)
    return node.slice[0].slice.value if name is not None and (qualified(name, imports) or name) == "typing.Optional" else None


def defaulted(param: cst.Param, imports: dict[str, str]) -> Optional[AbsValue]:
    """A device string as the parameter's default, or a device made of one (`torch.device("cuda")`)."""
    default = param.default
    if isinstance(default, cst.Call) and default.args and not default.args[0].keyword:
        name = dotted(default.func)
        fact = torch_api.FUNCTIONS.get(qualified(name, imports) or name) if name is not None else None
        if fact is None or fact.result != "device":
            return None
        default = default.args[0].value
    if not isinstance(default, cst.SimpleString) or default.prefix not in ("", "r", "u"):
        return None
    memory = memory_of_device_string(default.raw_value)
    return AbsValue(ValueKind.DEVICE, "torch", memory) if memory is not None else None
