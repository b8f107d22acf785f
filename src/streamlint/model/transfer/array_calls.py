"""CuPy's, Numba-CUDA's and cuda-python's handler: their fact tables, plus what the tables say as
name sets (CuPy's kernel functions and methods, views, `copyto`) and compiled kernels."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst

from streamlint.model import api
from streamlint.model.api import cupy, host_math, interop, numba_cuda, triton
from streamlint.model.api.facts import Arg
from streamlint.model.api.op_kinds import OpKind
from streamlint.model.domain.order import AccessEvent
from streamlint.model.domain.paths import Path, Root, RootKind
from streamlint.model.domain.state import State, entry_stream
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.values import NONE, UNKNOWN, AbsValue, Memory, ValueKind
from streamlint.model.summary.effects import Effect, EffectKind, HostArray
from streamlint.model.transfer.act import access, do, fresh, kernel, operation
from streamlint.model.transfer.arguments import Arguments, Handled
from streamlint.model.transfer.devices import is_device, is_host
from streamlint.model.transfer.fact_calls import apply_fact, compiled_from, stream_of_value
from streamlint.model.transfer.frame import Frame
from streamlint.model.transfer.torch_calls import learn, maybe_item, sized_by_data



def function(name: str, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    namespace, _, short = name.rpartition(".")
    if short in host_math.SHAPE_TAKERS:
        state = sizes_are_numbers(arguments, state)
    if name in interop.MEMORY_VIEWS:
        return _memory_view(name, arguments, state, frame), state
    if name in numba_cuda.WITHOUT_COPY and arguments.flag(numba_cuda.WITHOUT_COPY[name][0], True) is False:
        name = numba_cuda.WITHOUT_COPY[name][1]  # (`to_device(h, stream, copy=False)` only allocates)
    fact = api.FUNCTIONS.get(name)
    if fact is not None:
        return apply_fact(fact, arguments, state, frame, name)
    if namespace in cupy.CREATING_NAMESPACES:
        return _cupy_kernel(name, arguments, state, frame)
    buffers = [v for v in arguments.values() if v.is_buffer and is_device(v)]
    if namespace == cupy.DEVICE_MODULE and buffers and (
            short in cupy.SIZED_BY_DATA or (short == "where" and len(arguments.values()) == 1)):
        return sized_by_data(name, buffers, arguments, state, frame)  # (the host reads the result's size first)
    if namespace in cupy.KERNEL_NAMESPACES and short not in cupy.NON_KERNEL_FUNCTIONS:
        # `cp.ceil(n / 32)` of host numbers (or tuples of them: `x.shape`): a kernel the host could have skipped
        host_inputs = short not in host_math.SHAPE_TAKERS and bool(arguments.values()) and all(
            v.kind is ValueKind.HOST_NUMBER or (v.kind is ValueKind.CONTAINER and v.element is not None
                                                and v.element.kind is ValueKind.HOST_NUMBER)
            for v in arguments.values())
        return _cupy_kernel(name, arguments, state, frame, host_inputs)
    return None


def _memory_view(name: str, arguments: Arguments, state: State, frame: Frame) -> AbsValue:
    """`cupy.ndarray(shape, dtype, memptr=mem)`: that memory under an array's name; without it, an allocation."""
    framework = api.framework_of(name) or ""
    memory = arguments.value(interop.MEMORY_VIEWS[name])
    if memory is not None and memory.identity is not None and not is_host(memory):
        return AbsValue(ValueKind.BUFFER, framework, Memory.DEVICE, memory.identity, memory.stream)
    return fresh(frame, arguments, Memory.DEVICE, state.current_stream(framework), framework)


def sizes_are_numbers(arguments: Arguments, state: State) -> State:
    """`cp.zeros([n, self.nz])`: the names given as sizes hold host numbers (evidence from their use)."""
    if not arguments.positional:
        return state
    sizes = arguments.positional[0][1]
    if not isinstance(sizes, (cst.List, cst.Tuple)):
        return state
    for element in sizes.elements:
        state = _refined_number(element.value, state)
    return state


def _refined_number(node: cst.BaseExpression, state: State) -> State:
    if isinstance(node, cst.Name):
        held = state.names.get(node.value)
        if held is not None and held.kind is ValueKind.UNKNOWN:
            return state.bind(node.value, replace(held, kind=ValueKind.HOST_NUMBER))
    elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        base = state.names.get(node.value.value)
        path = base.identity.attr(node.attr.value) if base is not None and base.identity is not None else None
        if path is None:
            return state
        held = state.stored(path) or AbsValue(identity=path)
        if held.kind is ValueKind.UNKNOWN:
            return state.store(path, replace(held, kind=ValueKind.HOST_NUMBER))
    return state


def _cupy_kernel(api: str, arguments: Arguments, state: State, frame: Frame, host_inputs: bool = False) -> Handled:
    """A CuPy kernel function: it reads its arrays and makes its result on the current stream."""
    current = state.current_stream("cupy")
    site = frame.site(arguments.node)
    state = kernel(state, frame, site, api, current, "cupy", host_inputs)
    inputs = [v for v in arguments.values() if is_device(v) and v.identity is not None]
    out = arguments.value(Arg(kw="out"))
    for value in inputs:
        if out is None or value.identity != out.identity:
            state = access(state, frame, site, value.identity, False, current)
    if out is not None and is_device(out) and out.identity is not None:  # a ufunc's `out=`
        return out, access(state, frame, site, out.identity, True, current)
    result = fresh(frame, arguments, Memory.DEVICE, current, "cupy")
    # a kernel function writes its result on the stream (creators without a kernel are table rows)
    return result, access(state, frame, site, result.identity, True, current)


def capture(name: str, stream: AbsValue, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    """`s.begin_capture()` ... `g = s.end_capture()`: CuPy's graph capture on the stream."""
    if name not in _CAPTURE or stream.stream is None:
        return None
    site = frame.site(arguments.node)
    graph = AbsValue(ValueKind.GRAPH, "cupy", identity=Path(Root.fresh(site)))
    captured = graph.identity if name == "end_capture" else None
    effect = Effect(_CAPTURE[name], site, captured, stream.stream)
    return (graph if name == "end_capture" else AbsValue(ValueKind.UNKNOWN)), do(state, frame, effect)


_CAPTURE = {"begin_capture": EffectKind.BEGIN_CAPTURE, "end_capture": EffectKind.END_CAPTURE}


def launch_graph(graph: AbsValue, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """`graph.launch(stream=None)`, `g.replay()`: its captured work again, on the stream given or the current."""
    given = stream_of_value(arguments.value(Arg(0, "stream")))
    stream = given or state.current_stream(graph.framework or "cupy")
    effect = Effect(EffectKind.LAUNCH_GRAPH, frame.site(arguments.node), graph.identity, stream)
    return AbsValue(ValueKind.UNKNOWN), do(state, frame, effect)


def launch(kernel: AbsValue, settings: Optional[list[AbsValue]], arguments: Arguments, state: State, frame: Frame
           ) -> Handled:
    """A kernel launched (`kernel[grid, block, stream](args)`: Numba's legacy default stream without one) or a compiled
    kernel called (`raw(grid, block, (a, b), stream=s)`: the current stream without one; `kernel:cupy:2`: the items of
    argument 2 are its arrays): it reads its arrays and writes those its body stores into (all, when not told)."""
    parts, compiled = kernel.target.split(":"), kernel.target.startswith("kernel:")
    launched_by = "" if compiled else kernel.framework or (
        frame.program.kernel_framework(kernel.target) if frame.program and kernel.target else "")
    writes = frame.program.kernel_writes(kernel.target) if frame.program and kernel.target \
        and launched_by in ("numba", triton.LAUNCHED_ON) else None
    framework = (parts[1] if len(parts) > 1 else "cupy") if compiled else launched_by
    if not framework:
        return UNKNOWN, state  # (a subscripted call nothing tells is a kernel's: a generic class, a wrapper's kernel)
    if settings is None and framework == "numba" and len(parts) < 3:  # `cuda.jit(signature)(fn)`: fn compiled
        return compiled_from(arguments) or AbsValue(ValueKind.CALLABLE, "numba"), state
    told = arguments.value(Arg(kw="stream")) if settings is None else settings[2] if len(settings) > 2 else NONE
    # (Triton's launcher queues on PyTorch's current stream: its `[grid]` names no stream)
    stream = state.current_stream(framework) if launched_by == triton.LAUNCHED_ON else \
        stream_of_value(told) or state.current_stream(framework)
    if not stream.known:
        return UNKNOWN, state
    packed = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else None
    given = arguments.values() if packed is None else _items(arguments.value(Arg(packed)))
    site = frame.site(arguments.node)
    # Numba copies a host NumPy array argument (not an item of one, maybe a scalar) in before the launch, out after
    hosts = tuple(HostArray(i, v.identity) for i, v in enumerate(given)
                  if settings is not None and is_host(v) and v.framework == "numpy" and not maybe_item(v))
    api = "kernel" if compiled else kernel.target or "kernel"
    state = operation(state, frame, site, api, OpKind.KERNEL, stream, bool(hosts), framework=framework,
                      host_arrays=hosts)
    for index, value in enumerate(given):
        stored = writes is not None and index in writes
        if stored:
            value, state = _launched_into(value, stream, state, frame)
        if value.identity is None or not (value.is_buffer and value.memory is not Memory.PAGEABLE):
            continue
        # stored into by the body: a second writer first (its updates may be lost), whatever it also reads; a body
        # the walk cannot read: taken as read and written
        for write in (True, False) if stored else (False, True) if writes is None else (False,):
            state = access(state, frame, site, value.identity, write, stream, host_memory=not is_device(value))
    return UNKNOWN, state


def _launched_into(value: AbsValue, stream: StreamRef, state: State, frame: Frame) -> tuple[AbsValue, State]:
    """An argument of unknown kind a kernel on a chosen stream stores into is a device array (D-11 (c));
    a parameter's was made on Numba's current stream at entry."""
    if value.kind is not ValueKind.UNKNOWN or value.identity is None or stream.kind in (
            StreamRefKind.LEGACY, StreamRefKind.PER_THREAD, StreamRefKind.UNKNOWN):
        return value, state
    learned = AbsValue(ValueKind.BUFFER, "numba", Memory.DEVICE, value.identity)
    state = learn(state, learned)
    if value.identity.root.kind is RootKind.PARAM and not value.identity.steps:
        entry = StreamRef.ambient("numba") if "numba" in frame.context.entered else entry_stream("numba")
        made = AccessEvent(value.identity, True, entry, f"{frame.qualname}#entry", assumed=True)
        state = state.with_order(state.order.replaced_at(value.identity).add(made))
    return learned, state


def _items(packed: Optional[AbsValue]) -> list[AbsValue]:
    """The arrays a tuple of kernel arguments holds (its items' memory, or its joined item)."""
    if packed is None:
        return []
    found = [AbsValue(ValueKind.BUFFER, "cupy", Memory.DEVICE, member) for member in sorted(packed.members, key=repr)]
    return found or ([packed.element] if packed.element is not None else [])
