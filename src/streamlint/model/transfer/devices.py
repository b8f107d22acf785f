"""Where a value lives, from the arguments that name a device ("cuda", torch.device(...), a
device value) and from how buffers were made."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from streamlint.model.api.facts import Arg
from streamlint.model.domain.values import AbsValue, Memory, ValueKind
from streamlint.model.transfer.arguments import Arguments

HOST_MEMORY = (Memory.PINNED, Memory.PAGEABLE)
_DEVICE_KINDS = {"cuda": Memory.DEVICE, "cpu": Memory.PAGEABLE}


def memory_named(arguments: Arguments, where: Arg) -> Optional[Memory]:
    """DEVICE for "cuda..." or a CUDA device value, PAGEABLE for "cpu", None when not told."""
    literal = arguments.string_literal(where)
    if literal is not None:
        return memory_of_device_string(literal)
    value = arguments.value(where)
    known = value is not None and value.kind is ValueKind.DEVICE and value.memory is not Memory.UNKNOWN
    return value.memory if known else None


def memory_of_device_string(device: str) -> Optional[Memory]:
    """A device string's value ("cuda:0", "cpu"), as the program gives it to PyTorch."""
    return _DEVICE_KINDS.get(device.split(":", 1)[0])


def device_value(arguments: Arguments) -> AbsValue:
    """`torch.device("cuda")`, `torch.device("cpu")`, `torch.device("cuda", rank)`."""
    memory = memory_named(arguments, Arg(0, "type")) or Memory.UNKNOWN
    return AbsValue(ValueKind.DEVICE, "torch", memory)


def placed(value: Optional[AbsValue], chosen: bool = True) -> Optional[AbsValue]:
    """Under a stream the code chose, memory of a device not told is device memory (PyTorch's invariant)."""
    if not chosen or value is None or not value.is_buffer or value.memory is not Memory.UNKNOWN:
        return value
    return replace(value, memory=Memory.DEVICE)


def is_host(value: AbsValue) -> bool:
    return value.kind is ValueKind.BUFFER and value.memory in HOST_MEMORY


def is_device(value: AbsValue) -> bool:
    return value.kind is ValueKind.BUFFER and value.memory is Memory.DEVICE
