"""NumPy's handler: work on host arrays is the host's. Reading one whose device-to-host copy
may still be in flight, or writing one an upload may still read, races that copy."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst

from streamlint.model.api import numpy_api
from streamlint.model.api.facts import Arg
from streamlint.model.domain.state import State
from streamlint.model.domain.values import AbsValue, Memory, ValueKind
from streamlint.model.transfer.act import fresh, host_access, host_reads
from streamlint.model.transfer.arguments import Arguments, Handled
from streamlint.model.transfer.devices import is_host
from streamlint.model.transfer.frame import Frame



def function(name: str, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    site = frame.site(arguments.node)
    hosts = [v for v in _handed(arguments) if is_host(v) and v.identity is not None]
    short = name.removeprefix("numpy.")
    first = arguments.value(Arg(0))
    if short in numpy_api.SAME_MEMORY and first is not None and is_host(first) and first.identity is not None:
        return first, host_access(state, frame, site, first.identity, False)  # a view of the same memory
    if short in numpy_api.SCALAR_WITHOUT_SIZE and not _makes_array(short, arguments):
        return AbsValue(ValueKind.HOST_NUMBER), host_reads(state, frame, site, hosts)  # (`np.random.choice(ids)`: one)
    if short in numpy_api.PAGEABLE_CREATORS and _makes_array(short, arguments):
        state = host_reads(state, frame, site, hosts)
        made = fresh(frame, arguments, Memory.PAGEABLE, None, "numpy")
        return (replace(made, rank=_rank(arguments)) if short in numpy_api.SHAPE_FIRST else made), state  # new pageable host memory
    if not hosts:
        return None
    for value in hosts:
        written = name in numpy_api.WRITING_FUNCTIONS and value is first
        state = host_access(state, frame, site, value.identity, written)
    return fresh(frame, arguments, Memory.PAGEABLE, None, "numpy"), state


def _handed(arguments: Arguments) -> list[AbsValue]:
    """The values a call is given: each argument, and the items of a tuple or list handed whole
    (`np.concatenate((a, b))`, `rfn.merge_arrays((tracks, extra))` read both arrays)."""
    handed = []
    for value in arguments.values():
        handed.append(value)
        if value.kind is ValueKind.CONTAINER:
            handed.extend(value.positions or ([value.element] if value.element is not None else []))
    return handed


def _rank(arguments: Arguments) -> int:
    """The dimensions a shape argument shows (a tuple written out, a number); -1 when not told."""
    located = arguments.located(Arg(0, "shape"))
    if located is None:
        return -1
    value, node = located
    if isinstance(node, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
        return len(node.elements)
    return 1 if value.kind is ValueKind.HOST_NUMBER else -1


def _makes_array(short: str, arguments: Arguments) -> bool:
    """A creator returns an array, not a scalar (`np.random.rand()` without a size)."""
    before_size = numpy_api.SCALAR_WITHOUT_SIZE.get(short)
    starred = isinstance(arguments.node, cst.Call) and any(arg.star for arg in arguments.node.args)  # (`rand(*shape)`)
    return before_size is None or starred or len(arguments.positional) > before_size \
        or arguments.located(Arg(kw="size")) is not None


def array_method(name: str, array: AbsValue, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    if not is_host(array) or array.identity is None:
        return None
    if name in numpy_api.VIEW_METHODS:
        return array, state  # the same memory, nothing read yet
    site = frame.site(arguments.node)
    state = host_access(state, frame, site, array.identity, name in numpy_api.WRITING_METHODS)
    return fresh(frame, arguments, Memory.PAGEABLE, None, "numpy"), host_reads(state, frame, site, arguments.values())
