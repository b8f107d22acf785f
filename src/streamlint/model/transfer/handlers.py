"""Framework handlers: functions by name prefix, methods by the receiver's framework and kind (rows first)."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

from streamlint.model.api import cuda_core, cupy, numba_cuda, torch_api
from streamlint.model.api.facts import Fact
from streamlint.model.domain.state import State
from streamlint.model.domain.values import AbsValue, ValueKind
from streamlint.model.transfer import array_calls, host_calls, torch_calls
from streamlint.model.transfer.arguments import Arguments, Handled
from streamlint.model.transfer.fact_calls import apply_fact
from streamlint.model.transfer.frame import Frame

FunctionHandler = Callable[[str, Arguments, State, Frame], Optional[Handled]]
MethodHandler = Callable[[str, AbsValue, Arguments, State, Frame], Optional[Handled]]
S, E, B = ValueKind.STREAM, ValueKind.EVENT, ValueKind.BUFFER

FUNCTIONS: tuple[tuple[tuple[str, ...], FunctionHandler], ...] = (
    (("torch.", "contextlib."), torch_calls.function),
    (("cupy.", "cupyx.", "numba.", "cuda."), array_calls.function),
    (("numpy.",), host_calls.function),
)
# (framework, receiver kind) -> the receiver's class as the operations name it, and its method rows.
METHOD_ROWS: dict[tuple[str, ValueKind], tuple[str, dict[str, Fact]]] = {
    ("torch", S): ("torch.cuda.Stream", torch_api.STREAM_METHODS),
    ("torch", E): ("torch.cuda.Event", torch_api.EVENT_METHODS),
    ("cupy", S): ("cupy.cuda.Stream", cupy.STREAM_METHODS),
    ("cupy", E): ("cupy.cuda.Event", cupy.EVENT_METHODS),
    ("cupy", B): ("cupy.ndarray", cupy.ARRAY_METHODS),
    ("numba", S): ("numba.cuda.Stream", numba_cuda.STREAM_METHODS),
    ("numba", E): ("numba.cuda.Event", numba_cuda.EVENT_METHODS),
    ("numba", B): ("numba.cuda.DeviceNDArray", numba_cuda.ARRAY_METHODS),
    ("cuda-python", S): ("cuda.core.Stream", cuda_core.STREAM_METHODS),
    ("cuda-python", E): ("cuda.core.Event", cuda_core.EVENT_METHODS),
    ("cuda-python", B): ("cuda.core.Buffer", cuda_core.BUFFER_METHODS),
    ("raw", B): ("cupy.cuda.MemoryPointer", cupy.MEMORY_POINTER_METHODS),  # raw allocations (MemoryPointer)
}
METHODS: dict[tuple[str, ValueKind], MethodHandler] = {
    ("torch", B): torch_calls.tensor_method,
    ("cupy", S): array_calls.capture,
    ("numpy", B): host_calls.array_method,
}
FRAMEWORKS = frozenset(framework for framework, _ in [*METHOD_ROWS, *METHODS])
# Frameworks whose stream objects are context managers that make themselves current (`with s:`).
STREAMS_ENTERED = frozenset({"cupy"})


def answers(value: AbsValue) -> bool:
    """A stream, event or buffer of a framework here (PyTorch's for no known framework: the
    invariant that operations run where their tensors live is PyTorch's)."""
    return value.kind in (S, E, B) and (value.framework or "torch") in FRAMEWORKS


def method(name: str, receiver: AbsValue, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    key = (receiver.framework or "torch", receiver.kind)
    owner, rows = METHOD_ROWS.get(key, ("", {}))
    if name in rows:
        return apply_fact(rows[name], replace(arguments, receiver=receiver), state, frame, f"{owner}.{name}")
    special = METHODS.get(key)
    return special(name, receiver, arguments, state, frame) if special is not None else None
