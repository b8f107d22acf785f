"""Type tests that tell a device array from a host array (`isinstance(x, cupy.ndarray)`, an array-module
test): the tested name is a device array on the device side, a host array on an array-module test's other (D-2)."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

import libcst as cst

from streamlint.model.api import chainer, cupy, numba_cuda, torch_api
from streamlint.model.domain.paths import Path, Root
from streamlint.model.domain.state import State
from streamlint.model.domain.values import NONE, AbsValue, Memory, ValueKind
from streamlint.model.transfer.devices import is_device, is_host
from streamlint.model.transfer.frame import Frame

# How a name or expression is evaluated (expressions.evaluate, handed in: that module narrows by these tests too).
Evaluate = Callable[[cst.BaseExpression, State, Frame], tuple[AbsValue, State]]
_ARRAY_MODULE_FUNCTIONS = cupy.ARRAY_MODULE_FUNCTIONS | chainer.ARRAY_MODULE_FUNCTIONS
# The framework of the device array each type (isinstance) or predicate test tells.
_DEVICE_TYPES = {**{t: cupy.F for t in cupy.DEVICE_ARRAY_TYPES}, **{t: numba_cuda.F for t in numba_cuda.DEVICE_ARRAY_TYPES}}
_DEVICE_TESTS = {t: numba_cuda.F for t in numba_cuda.DEVICE_ARRAY_TESTS}
# The framework whose tensors (of either device) each type names.
_TENSOR_TYPES = {**{t: torch_api.F for t in torch_api.TENSOR_TYPES}, **_DEVICE_TYPES}


def decided(test: cst.BaseExpression, state: State, frame: Frame, evaluate: Evaluate) -> Optional[bool]:
    """`isinstance(x, torch.Tensor)` of a value known to be a tensor of that framework holds; else undecided."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = decided(test.expression, state, frame, evaluate)
        return None if inner is None else not inner
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[0].value, (cst.Name, cst.Attribute))):
        return None
    value = evaluate(test.args[0].value, state, frame)[0]
    kind = evaluate(test.args[1].value, state, frame)[0]
    tensor_of = _TENSOR_TYPES.get(kind.target) if kind.kind is ValueKind.NAMESPACE else None
    return True if tensor_of and value.is_buffer and not value.may_be_none and value.framework == tensor_of else None


def sides(test: cst.BaseExpression, state: State, frame: Frame, evaluate: Evaluate) -> tuple[State, State]:
    """The states where the test holds and where it does not."""
    none_sides = _none_sides(test, state)
    if none_sides is not None:
        return none_sides
    placed = _device_type_sides(test, state)
    if placed is not None:
        return placed
    found = _tested(test, state, frame, evaluate)
    if found is None:
        return _tensor_sides(test, state, frame, evaluate)
    name, device_when, host_other_side, framework = found
    value = state.names.get(name)
    if value is None or value.identity is None:
        return state, state
    device = state.bind(name, replace(value, kind=ValueKind.BUFFER, framework=framework, memory=Memory.DEVICE))
    host = state.bind(name, replace(value, kind=ValueKind.BUFFER, framework=cupy.HOST_MODULE, memory=Memory.PAGEABLE))
    other = host if host_other_side else state
    return (device, other) if device_when else (other, device)


Tested = tuple[str, bool, bool, str]


def _tensor_sides(test: cst.BaseExpression, state: State, frame: Frame, evaluate: Evaluate) -> tuple[State, State]:
    """`isinstance(x, torch.Tensor)`, `torch.is_tensor(x)` of a value of unknown kind: a tensor where it holds (of
    a device not told: the type says nothing of where it lives); nothing learnt where it does not."""
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    call = test.expression if negated else test
    if not isinstance(call, cst.Call) or not call.args or not isinstance(call.args[0].value, cst.Name):
        return state, state
    by_type = isinstance(call.func, cst.Name) and call.func.value == "isinstance" and len(call.args) == 2
    told = evaluate(call.args[1].value if by_type else call.func, state, frame)[0]
    tensor = told.kind is ValueKind.NAMESPACE and (told.target in torch_api.TENSOR_TYPES if by_type
                                                   else told.target in torch_api.TENSOR_TESTS and len(call.args) == 1)
    name = call.args[0].value.value
    value = state.names.get(name)
    if not tensor or value is None or value.kind is not ValueKind.UNKNOWN or value.identity is None:
        return state, state
    holds = state.bind(name, replace(value, kind=ValueKind.BUFFER, framework=torch_api.F))
    return (state, holds) if negated else (holds, state)


def _device_type_sides(test: cst.BaseExpression, state: State) -> Optional[tuple[State, State]]:
    """`x.is_cuda`, `x.device.type == "cuda"` (`!=`, "cpu", `x.is_cpu`) of a tensor: a CUDA tensor on the side where it
    is on CUDA, a host one where it is on the CPU, and on the other side of a CUDA test one on no CUDA device (an
    accelerator's fallback path: its copies wait for no CUDA stream). Nothing learnt on the other side of a CPU test."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _device_type_sides(test.expression, state)
        return inner[::-1] if inner is not None else None
    found = _device_type_of(test)
    if found is None:
        return None
    name, device_type, holds = found
    value = state.names.get(name)
    if value is None or value.kind not in (ValueKind.UNKNOWN, ValueKind.BUFFER) or value.framework not in ("", torch_api.F):
        return None
    if value.identity is None:  # (an item of what the code was handed: the memory the name holds)
        value = replace(value, identity=Path(Root.local(name)))
    on_cuda = state.bind(name, replace(value, kind=ValueKind.BUFFER, framework=torch_api.F, memory=Memory.DEVICE))
    on_host = state.bind(name, replace(value, kind=ValueKind.BUFFER, framework=torch_api.F, memory=Memory.PAGEABLE))
    told = (on_cuda, on_host) if device_type == torch_api.CUDA_TYPE else (on_host, state)
    return told if holds else told[::-1]


def tells_device(test: cst.BaseExpression) -> bool:
    """A test of where a tensor lives: on a run it takes the same side for the same tensors, no now-and-then flag."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return tells_device(test.expression)
    return _device_type_of(test) is not None


def _device_type_of(test: cst.BaseExpression) -> Optional[tuple[str, str, bool]]:
    """(the tested name, the device type told, whether the test holds on it) of a test of where a tensor lives."""
    if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.attr.value in torch_api.DEVICE_FLAGS:
        return test.value.value, torch_api.DEVICE_FLAGS[test.attr.value], True
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, (cst.Equal, cst.NotEqual))):
        return None
    typed, told = test.left, test.comparisons[0].comparator
    if isinstance(typed, cst.SimpleString):
        typed, told = told, typed
    if not (isinstance(told, cst.SimpleString) and told.evaluated_value in (torch_api.CUDA_TYPE, torch_api.CPU_TYPE)
            and isinstance(typed, cst.Attribute) and typed.attr.value == "type" and isinstance(typed.value, cst.Attribute)
            and typed.value.attr.value == "device" and isinstance(typed.value.value, cst.Name)):
        return None
    return typed.value.value.value, told.evaluated_value, isinstance(test.comparisons[0].operator, cst.Equal)


def _none_sides(test: cst.BaseExpression, state: State) -> Optional[tuple[State, State]]:
    """`x is None` of a name that may be None: None on the side where it is, never None on the other."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name)):
        return None
    compared = test.comparisons[0]
    if not (isinstance(compared.comparator, cst.Name) and compared.comparator.value == "None"
            and isinstance(compared.operator, (cst.Is, cst.IsNot))):
        return None
    value = state.names.get(test.left.value)
    if value is None or not value.may_be_none:
        return None
    none = state.bind(test.left.value, NONE)
    other = state.bind(test.left.value, replace(value, may_be_none=False))
    return (none, other) if isinstance(compared.operator, cst.Is) else (other, none)


def _tested(test: cst.BaseExpression, state: State, frame: Frame, evaluate: Evaluate) -> Optional[Tested]:
    """(tested name, holds on the device side, other side a host array, the framework)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _tested(test.expression, state, frame, evaluate)
        return (inner[0], not inner[1], inner[2], inner[3]) if inner is not None else None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        return _array_module(test, state, frame, evaluate)
    if not isinstance(test, cst.Call):
        return None
    by_type = isinstance(test.func, cst.Name) and test.func.value == "isinstance"  # else a predicate's
    if len(test.args) != (2 if by_type else 1) or not isinstance(test.args[0].value, cst.Name):
        return None
    told = evaluate(test.args[1].value if by_type else test.func, state, frame)[0]
    table = _DEVICE_TYPES if by_type else _DEVICE_TESTS
    framework = table.get(told.target) if told.kind is ValueKind.NAMESPACE else None
    return (test.args[0].value.value, True, False, framework) if framework else None


def _array_module(test: cst.Comparison, state: State, frame: Frame, evaluate: Evaluate) -> Optional[Tested]:
    """`get_array_module(x) is numpy`, `... is not numpy`, `... is cupy`, `... == cupy`."""
    call, comparison = test.left, test.comparisons[0]
    if not (isinstance(call, cst.Call) and call.args and isinstance(call.args[0].value, cst.Name)):
        return None
    function = evaluate(call.func, state, frame)[0]
    module = evaluate(comparison.comparator, state, frame)[0]
    if function.kind is not ValueKind.NAMESPACE or function.target not in _ARRAY_MODULE_FUNCTIONS:
        return None
    holds = isinstance(comparison.operator, (cst.Is, cst.Equal))
    if not holds and not isinstance(comparison.operator, (cst.IsNot, cst.NotEqual)):
        return None
    if module.target not in (cupy.DEVICE_MODULE, cupy.HOST_MODULE):
        return None
    return call.args[0].value.value, holds == (module.target == cupy.DEVICE_MODULE), True, cupy.F


def joined_returns(a: AbsValue, b: AbsValue) -> AbsValue:
    """A device array on one path and host memory on the other returns the device array (D-2)."""
    if a.kind is ValueKind.CONTAINER and b.kind is ValueKind.CONTAINER and a.element and b.element:
        return replace(a.join(b), element=joined_returns(a.element, b.element))
    for device, host in ((a, b), (b, a)):
        if is_device(device) and device.identity is not None and is_host(host):
            return device
        spec = device.kind is ValueKind.CONTAINER and bool(device.members) and device.element is not None \
            and is_device(device.element)  # (a buffer specification of device memory: `(ffi.buffer(p, n), MPI.FLOAT)`)
        if spec and is_host(host):
            return device
    return a.join(b)

