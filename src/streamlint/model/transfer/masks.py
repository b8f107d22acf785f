"""Boolean masks: tensors and arrays whose items are booleans, as how they were made shows (a comparison, a logical
operator on masks, `.bool()`, `isnan`). Indexing with one selects as many items as it holds True, a count the host
reads back first: a sync (API-FACTS 4.4), as `nonzero` is."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst

from streamlint.model.api import torch_api
from streamlint.model.domain.paths import Index, IndexKind
from streamlint.model.domain.state import State
from streamlint.model.domain.values import INDEX_LIST, MASK, AbsValue, Memory, ValueKind
from streamlint.model.transfer import torch_calls
from streamlint.model.transfer.arguments import Arguments
from streamlint.model.transfer.devices import is_device, placed
from streamlint.model.transfer.fact_calls import made_at
from streamlint.model.transfer.frame import Frame

# Frameworks whose arrays index by mask on the device (NumPy's run on the host: no stream to wait for).
_ON_DEVICE = ("torch", "cupy")
_LOGICAL = (cst.BitAnd, cst.BitOr, cst.BitXor)


def of_operator(node: cst.BaseExpression, operands: list[AbsValue], result: AbsValue) -> AbsValue:
    """`a > b` of tensors is a mask; so are `~m`, `m1 & m2`, `m1 | m2` of masks."""
    if not result.is_buffer:
        return result
    if isinstance(node, cst.Comparison):
        return replace(result, target=MASK)
    buffers = [v for v in operands if v.is_buffer]
    logical = (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert)) or (
        isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _LOGICAL))
    return replace(result, target=MASK) if logical and buffers and all(v.target == MASK for v in buffers) else result


def of_call(name: str, framework_call: bool, result: AbsValue, arguments: Arguments) -> AbsValue:
    """The result of a framework's predicate or comparison (`x.isnan()`, `torch.eq(a, b)`, `m.bool()`) is a mask; so
    is a tensor made or converted with a boolean dtype (`done.to(device, dtype=torch.bool)`, `torch.zeros(n,
    dtype=torch.bool)`), unless its target already tells how it was made (a factory's host values)."""
    if framework_call and result.is_buffer and name in torch_api.MASK_MAKERS:
        return replace(result, target=MASK)
    if framework_call and result.is_buffer and not result.target and any(
            v.kind is ValueKind.NAMESPACE and v.target in torch_api.BOOL_DTYPES for v in arguments.values()):
        return replace(result, target=MASK)
    return result


def indexed(node: cst.Subscript, base: AbsValue, indices: list[AbsValue], stored: Optional[AbsValue], state: State,
            frame: Frame) -> Optional[tuple[AbsValue, State]]:
    """`x[mask]`, `x[i, mask, :]` with a device mask: the host reads the mask's count, then a new tensor of the
    selected items is made where `x` is. None when no index is a mask the code shows, and for PyTorch's
    `x[mask] = 0`: a number stored under one mask is `masked_fill_`, which reads no count (API-FACTS 4.4)."""
    masks = [placed(v, frame.assumes_cuda) for v in indices if v.is_buffer and v.target == MASK]
    if not base.is_buffer or not any(is_device(m) and (m.framework or "torch") in _ON_DEVICE for m in masks):
        return None
    if stored is not None and not stored.is_buffer and (base.framework or "torch") == "torch" and len(indices) == 1:
        return None
    operator = Arguments((), {}, None, node)  # type: ignore[arg-type]
    if stored is None:
        return torch_calls.sized_by_data(torch_api.MASK_INDEX, [*masks, base], operator, state, frame)
    # a store: the count read back, then the items selected written in place (the caller writes the region)
    mask = next(m for m in masks if is_device(m))
    framework = mask.framework or torch_api.F
    _, state = torch_calls.read_back(torch_api.MASK_STORE, [mask], state.current_stream(framework), made_at(mask),
                                     framework, frame.site(node), state, frame)
    return _region(base), state


def host_indices_uploaded(node: cst.Subscript, base: AbsValue, indices: list[tuple[AbsValue, cst.BaseExpression]],
                          state: State, frame: Frame) -> State:
    """`x[idx]` of a CUDA tensor with an index the host holds (a NumPy array, a CPU tensor, a list of numbers written
    out): PyTorch copies the index to the device first, a blocking upload of host-built data (`HOST_INDEX`)."""
    if not base.is_buffer or (base.framework or "torch") != "torch" or not is_device(placed(base, frame.assumes_cuda)):
        return state
    for value, written in indices:
        on_host = value.is_buffer and value.memory in (Memory.PAGEABLE, Memory.PINNED) and value.target != MASK \
            and not _maybe_a_scalar(value)
        listed = value.kind is ValueKind.CONTAINER and (
            (isinstance(written, cst.List) and bool(written.elements)) or value.target == INDEX_LIST)
        if on_host or listed:
            operator = Arguments((), {}, None, node)  # type: ignore[arg-type]
            source = replace(value, kind=ValueKind.BUFFER, memory=Memory.PAGEABLE) if listed else value
            return torch_calls.index_uploaded(torch_api.HOST_INDEX, source, operator, state, frame)
    return state


def _maybe_a_scalar(value: AbsValue) -> bool:
    """A 0-d tensor (`perm[i]`, an item of an index tensor of no told rank): PyTorch applies it as a Python integer,
    with no copy; an item of a tensor whose rank is not told may be one (unknown stays silent)."""
    if value.rank == 0:
        return True
    steps = value.identity.steps if value.identity is not None else ()
    return value.rank < 0 and bool(steps) and isinstance(steps[-1], Index) \
        and steps[-1].kind in (IndexKind.CONST, IndexKind.SLOT, IndexKind.ANY)  # (not a slice: `perm[a:b]` is 1-d)


def _region(base: AbsValue) -> AbsValue:
    """The items of `base` a mask selects: a region of its memory, which ones not told."""
    if base.identity is None:
        return base
    return replace(base, identity=base.identity.element(Index.any_()), target=keeps_mask(base))


def keeps_mask(base: AbsValue) -> str:
    """The target an item or region of `base` keeps: a mask's items are booleans too."""
    return MASK if base.target == MASK else ""



