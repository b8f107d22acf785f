"""Framework handlers by framework: each reads its own fact tables and answers for the calls
and methods of its values. A handler returns None for what it does not know (the call is
then a project call or opaque). Adding a framework is adding a row here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from streamlint.model.domain.state import State
from streamlint.model.domain.values import AbsValue
from streamlint.model.transfer import array_calls, host_calls, torch_calls
from streamlint.model.transfer.arguments import Arguments
from streamlint.model.transfer.frame import Frame

Handled = tuple[AbsValue, State]
FunctionHandler = Callable[[str, Arguments, State, Frame], Optional[Handled]]
MethodHandler = Callable[[str, AbsValue, Arguments, State, Frame], Optional[Handled]]


@dataclass(frozen=True)
class FrameworkHandler:
    roots: tuple[str, ...]  # qualified-name prefixes of its module functions ("torch.", ...)
    function: FunctionHandler  # module functions: `torch.cuda.Stream(...)`
    buffer_method: MethodHandler  # methods of its buffers: `t.to(...)`
    stream_method: MethodHandler  # methods of its streams: `s.wait_stream(...)`
    event_method: MethodHandler  # methods of its events: `e.record(...)`


def _none(*_args) -> None:
    return None


HANDLERS: dict[str, FrameworkHandler] = {
    "torch": FrameworkHandler(
        ("torch.", "contextlib."), torch_calls.function, torch_calls.tensor_method, torch_calls.stream_method,
        torch_calls.event_method,
    ),
    "cupy": FrameworkHandler(
        ("cupy.", "cupyx."), array_calls.function, array_calls.cupy_array_method, array_calls.cupy_stream_method,
        array_calls.cupy_event_method,
    ),
    "numba": FrameworkHandler(
        ("numba.",), array_calls.function, array_calls.numba_array_method, array_calls.numba_stream_method,
        array_calls.numba_event_method,
    ),
    "cuda-python": FrameworkHandler(
        ("cuda.",), array_calls.function, array_calls.cuda_core_buffer_method, array_calls.cuda_core_stream_method,
        array_calls.cuda_core_event_method,
    ),
    # raw allocations (CuPy's MemoryPointer): their copy and fill methods; no module functions
    "raw": FrameworkHandler((), _none, array_calls.raw_memory_method, _none, _none),
    "numpy": FrameworkHandler(("numpy.",), host_calls.function, host_calls.array_method, _none, _none),
}


# Frameworks whose stream objects are context managers that make themselves current (`with s:`).
STREAMS_ENTERED = frozenset({"cupy"})


def for_function(qualname: str) -> Optional[FrameworkHandler]:
    for handler in HANDLERS.values():
        if qualname.startswith(handler.roots):
            return handler
    return None


def for_value(value: AbsValue) -> Optional[FrameworkHandler]:
    """The handler of a value's framework (PyTorch's for values of no known framework: the
    invariant that operations run where their tensors live is PyTorch's)."""
    return HANDLERS.get(value.framework or "torch")
