"""Calls: the one dispatch from a callee value to its framework handler, its summary (`apply`), or opaque."""

from __future__ import annotations

from dataclasses import replace
from functools import reduce
from typing import Optional

import libcst as cst

from streamlint.model import api, declared
from streamlint.model.api import cupy as cupy_api
from streamlint.model.api import cuda_python, host_math, interop, mpi, normalize, numpy_api, python_std, tensorrt, torch_api, torch_modules
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.api.facts import LEGACY_BY_DEFAULT, POINTER_FRAMEWORKS, Arg, OpKind
from streamlint.model.domain.order import AccessEvent
from streamlint.model.domain.paths import Index, IndexKind, Path, Root, RootKind
from streamlint.model.domain.state import State
from streamlint.model.domain.values import ITEMS_ONLY, MAX_TARGETS, MERGED, NO_ITEMS, RETURNS_NO_TENSOR, SEQUENCE, TOKENIZER, UNKNOWN, AbsValue, Memory, ValueKind
from streamlint.model.syntax.names import attribute_named
from streamlint.model.summary.apply import Binding, apply
from streamlint.model.summary.effects import Effect
from streamlint.model.summary.function_summary import Evidence
from streamlint.model.transfer import command_line, array_calls, fact_calls, handlers, mpi_calls, torch_calls
from streamlint.model.transfer.act import access, device_reads, host_reads, kernel, operation, unseen_devices
from streamlint.model.transfer.arguments import Arguments, Handled
from streamlint.model.transfer.devices import is_device, is_host, memory_named, placed
from streamlint.model.transfer.frame import CELL, SIDE_STREAM_FACT, CallContext, Frame

METHOD = "."  # a callee value for `receiver.<name>` whose receiver decides what it is
RAW = "raw"  # the framework of raw allocations (a MemoryPointer)
# Builtins that read their arguments on the host (formatting, conversion, printing).
HOST_READERS = frozenset({"print", "str", "repr", "float", "int", "bool", "complex", "format", "len", "list", "sum"})
# Methods the tables know on a framework's objects or on builtins: a call of one of these names
# through an unknown receiver is no evidence that the receiver is a project class.
FRAMEWORK_METHODS = (frozenset(torch_api.TENSOR_METHODS) | torch_api.TENSOR_PRESERVING
                     | frozenset(torch_api.TENSOR_COPIES) | frozenset(torch_api.STREAM_METHODS)
                     | frozenset(torch_api.EVENT_METHODS) | torch_api.BUILTIN_METHODS
                     | frozenset(torch_modules.TRAINING_STEP_CALLS) | torch_modules.MODULE_HOT_METHODS
                     | python_std.KEEPING_METHODS | python_std.LISTING_METHODS
                     | frozenset(tensorrt.CONTEXT_METHODS) | tensorrt.BINDING_METHODS)


def method_of(receiver: AbsValue, name: str) -> AbsValue:
    if receiver.kind is ValueKind.NAMESPACE:  # spelled canonically: `chainer.cuda.Stream` is `cupy.cuda.Stream`
        target = normalize(f"{receiver.target}.{name}") if MERGED not in receiver.target else ""
        constant = cupy_api.STREAM_CONSTANTS.get(target)
        if constant is not None:  # `cupy.cuda.Stream.null`: the legacy default stream
            ref = StreamRef.legacy() if constant == "legacy" else StreamRef(StreamRefKind.PER_THREAD)
            return AbsValue(ValueKind.STREAM, cupy_api.F, stream=ref)
        return AbsValue(ValueKind.NAMESPACE, target=target)
    if receiver.kind is ValueKind.CALLABLE and receiver.target and not receiver.target.startswith((METHOD, "kernel:")):
        return AbsValue(ValueKind.CALLABLE, target=f"{receiver.target}.{name}")  # `Class.helper(...)`
    return AbsValue(ValueKind.CALLABLE, target=METHOD + name)


def attribute_of(base: AbsValue, attr: str, path: Optional[Path]) -> AbsValue:
    """An attribute nobody stored: a tensor's `.data` is its memory, other attributes unknown."""
    if base.is_buffer and attr in interop.ADDRESS_ATTRIBUTES:
        return replace(base, framework=cuda_python.RAW_ADDRESS)  # the memory, as an address
    if base.is_buffer and attr in interop.MEMORY_ATTRIBUTES:
        return base
    if base.is_buffer and base.memory is not Memory.DEVICE and attr in numpy_api.SAME_MEMORY_ATTRIBUTES:
        return base  # `h.ctypes`: the host array's own memory (its `.data` is the address)
    if base.kind is ValueKind.UNKNOWN and base.identity is not None and attr in numpy_api.SAME_MEMORY_ATTRIBUTES:
        # only a NumPy array has `.ctypes`: a host array handed in, its pinnedness not told
        return AbsValue(ValueKind.BUFFER, "numpy", Memory.UNKNOWN, base.identity)
    if base.is_buffer and attr in torch_api.DEVICE_ATTRIBUTES and base.memory is not Memory.UNKNOWN:
        # (the CPU on the path where the tensor is a scalar built on the host: `host_built`)
        return AbsValue(ValueKind.DEVICE, base.framework, Memory.DEVICE if base.on_device else Memory.PAGEABLE,
                        path, built=base.built)
    if path is None:
        return UNKNOWN
    if base.is_buffer and attr in torch_api.TENSOR_ATTRIBUTES:
        return AbsValue(ValueKind.BUFFER, base.framework, base.memory, path, base.stream)
    if base.on_device and base.framework == torch_api.F and attr not in torch_api.TENSOR_HOST_ATTRIBUTES \
            and not attr.startswith("_"):
        # no tensor has it: a field of what a call on CUDA tensors returned (`outputs.loss`, `out.logits`), one of
        # the CUDA tensors made there (PyTorch's invariant)
        return AbsValue(ValueKind.BUFFER, base.framework, Memory.DEVICE, path, base.stream)
    return AbsValue(identity=path)


def left_on_holder(base: AbsValue, attr: str, state: State, frame: Frame) -> tuple[Optional[AbsValue], State]:
    """`node.state.x` of a holder a parameter reaches, stored nowhere here: what the project's functions that
    store `.x` on such a holder leave there (D-16), made on the producer's stream before the call."""
    if base.identity is None or base.identity.root.kind is not RootKind.PARAM or base.is_buffer or frame.program is None \
            or attr in torch_api.TENSOR_ATTRIBUTES:
        return None, state
    left = frame.program.left_on_holders(frame.module, attr, frame.qualname)
    if left is None:
        return None, state
    path = base.identity.attr(attr)
    if path not in frame.found.produced:
        frame.found.produced[path] = replace(left, identity=path)
        made = AccessEvent(path, True, left.stream, f"{frame.qualname}#entry", assumed=True)
        state = state.with_order(state.order.add(made))
    return frame.found.produced[path], state


def of_object(value: AbsValue, obj: Path) -> AbsValue:
    """A value the object's class keeps on `self`, seen from a holder of the object at `obj`."""
    def moved(path: Path) -> Path:
        return path.rebased(obj) if path.root.kind is RootKind.SELF else path

    return value.mapped(moved, lambda ref: replace(ref, path=moved(ref.path)) if ref.path is not None else ref)


def call(callee: AbsValue, arguments: Arguments, state: State, frame: Frame) -> Handled:
    if callee.kind is ValueKind.NAMESPACE and callee.target.endswith("()"):
        # calling a framework object (an `nn.Linear(...)` stored on self): a model, as below; one whose parameters
        # are CUDA memory computes on CUDA tensors, whatever it is given (PyTorch's invariant); so does one whose
        # device the code never shows, in a project that declares such memory CUDA's (`assume-device`)
        if callee.memory is Memory.DEVICE or (callee.memory is Memory.UNKNOWN and frame.assumes_cuda):
            weights = AbsValue(ValueKind.BUFFER, "torch", Memory.DEVICE)
            return _opaque(replace(arguments, positional=arguments.positional + ((weights, arguments.node),)), state,
                           frame, direct=True)
        return _run_model(None, arguments, state, frame)
    if callee.kind is ValueKind.NAMESPACE and MERGED in callee.target:
        return _one_of(callee, arguments, state, frame, _namespace_call)
    if callee.kind is ValueKind.NAMESPACE:
        return _namespace_call(callee.target, arguments, state, frame)
    if callee.kind is ValueKind.CALLABLE and callee.target.startswith(METHOD):
        return _method(callee.target[len(METHOD):], arguments, state, frame)
    if callee.kind is ValueKind.CALLABLE and callee.target.startswith("kernel:"):
        return array_calls.launch(callee, None, arguments, state, frame)
    if callee.kind is ValueKind.CALLABLE:  # (a project function: one of one)
        return _one_of(callee, arguments, state, frame)
    if callee.kind is ValueKind.UNKNOWN and callee.target == RETURNS_NO_TENSOR:  # (its annotation names its result)
        return UNKNOWN, _run_model(callee, arguments, state, frame)[1]
    own = f"{frame.module}.{frame.class_name}"
    if callee.identity == Path(Root.self_()) and frame.class_name and frame.program is not None \
            and frame.program.methods_named(own, "__call__"):
        return _project_call(f"{own}.__call__", replace(arguments, receiver=callee), state, frame)  # `self(x)`: its `__call__`
    if callee.kind in (ValueKind.UNKNOWN, ValueKind.BUFFER) and callee.identity is not None:
        return _run_model(callee, arguments, state, frame)
    instance = callee.kind is ValueKind.OBJECT and callee.target
    if instance and MERGED not in callee.target and frame.program is not None \
            and frame.program.methods_named(callee.target, "__call__"):
        # (calling an object of a project class that defines `__call__` runs that method: a transform, a functor)
        return _object_method(f"{callee.target}.__call__", replace(arguments, receiver=callee), state, frame)
    # a module moved to CUDA computes where its parameters are; so does a project module whose device the code never
    # shows, in a project that declares such memory CUDA's (`assume-device`)
    untold_module = instance and callee.memory is Memory.UNKNOWN and frame.assumes_cuda and MERGED not in callee.target \
        and frame.program is not None and frame.program.is_module(callee.target)
    # (a module kept in host memory computes on the host: its submodules went with it, whatever its forward shows)
    if instance and MERGED not in callee.target and callee.memory in (Memory.UNKNOWN, Memory.DEVICE) \
            and frame.program is not None and frame.program.is_module(callee.target) \
            and f"{callee.target}.forward" in frame.program.methods_named(callee.target, "forward"):
        return _module_forward(callee, arguments, state, frame, callee.memory is Memory.DEVICE or untold_module)
    if instance and (callee.memory is Memory.DEVICE or untold_module):
        module = AbsValue(ValueKind.BUFFER, "torch", Memory.DEVICE, callee.identity)
        arguments = replace(arguments, positional=arguments.positional + ((module, arguments.node),))
    return _opaque(arguments, state, frame, callee=f"{callee.target}()" if instance else "")


def _module_forward(callee: AbsValue, arguments: Arguments, state: State, frame: Frame, on_device: bool) -> Handled:
    """`model(x)` of a project module runs its `forward` on what it is handed (`nn.Module.__call__`); one whose
    parameters are CUDA memory returns a CUDA tensor made on the current stream where its `forward` tells nothing."""
    result, state = _object_method(f"{callee.target}.forward", replace(arguments, receiver=callee), state, frame)
    if result.kind is not ValueKind.UNKNOWN or not on_device:
        return result, state
    weights = AbsValue(ValueKind.BUFFER, "torch", Memory.DEVICE, callee.identity)
    return _opaque(replace(arguments, positional=((weights, arguments.node),), keywords={}, spread=None), state, frame)


def _module_memory(target: str, arguments: Arguments) -> Memory:
    """Where a PyTorch module's parameters are, as its making says: built with `device=`, or moved by its
    `.cuda()` / `.to(device)` (a module whose parameters are CUDA memory computes on CUDA tensors)."""
    owner, _, method = target.rpartition(".")
    if not target.startswith(torch_modules.MODULE_NAMESPACE):
        return Memory.UNKNOWN
    if owner.endswith("()") and method in torch_modules.MODULE_MOVES:
        return Memory.DEVICE if method == "cuda" else memory_named(arguments, Arg(0, "device")) or Memory.UNKNOWN
    return memory_named(arguments, Arg(kw="device")) or Memory.UNKNOWN


def _run_model(module: Optional[AbsValue], arguments: Arguments, state: State, frame: Frame) -> Handled:
    """A model called under a chosen stream runs there on tensors (PyTorch's invariant): its unknown arguments are,
    and it reads its parameters there when it is device memory, or given tensors by a function that holds it itself."""
    inputs = arguments
    if frame.chosen_stream(state):
        inputs = replace(arguments, positional=tuple((_as_tensor(v), e) for v, e in arguments.positional))
    held = inputs is not arguments and module is not None and module.identity.root.kind is not RootKind.PARAM
    if module is not None and (module.is_buffer or (held and _buffers_given(inputs))):
        inputs = replace(inputs, positional=inputs.positional + ((_as_tensor(module), arguments.node),))
    return _opaque(inputs, state, frame, direct=True)


def _as_tensor(value: AbsValue) -> AbsValue:
    if value.kind is not ValueKind.UNKNOWN or value.identity is None:
        return value
    return AbsValue(ValueKind.BUFFER, "torch", Memory.UNKNOWN, value.identity)


def _namespace_call(target: str, arguments: Arguments, state: State, frame: Frame) -> Handled:
    state = _started(target, arguments, state, frame)  # (a thread start: what its target does to what it is handed)
    if target in python_std.HOST_TIMERS:  # the code measures: a number the host has
        state = operation(state, frame, frame.site(arguments.node), target, OpKind.HOST_TIMER, None, False)
        return AbsValue(ValueKind.HOST_NUMBER), state
    stands_for = declared.active().namespaces.get(target)
    if stands_for is not None:  # a declared model: a wrapper that is a framework namespace
        return AbsValue(ValueKind.NAMESPACE, target=stands_for), state
    if target in interop.POINTER_LIBRARY_CLASSES:  # `cffi.FFI()`: its methods are pointer wrappers
        return AbsValue(ValueKind.NAMESPACE, target=f"{target}()"), state
    wrapped = arguments.value(interop.POINTER_WRAPPERS.get(target))
    if wrapped is not None and wrapped.is_buffer:  # a handle of the memory at an address (`fromaddress(ptr, n)`)
        return wrapped, state
    handler = next((function for roots, function in handlers.FUNCTIONS if target.startswith(roots)), None)
    handled = handler(target, arguments, state, frame) if handler else None
    if handled is None and target.startswith(mpi.MODULE_ROOT + "."):  # `MPI.COMM_WORLD.Bcast(buf)`
        handled = mpi_calls.comm_method(target.rsplit(".", 1)[-1], arguments, state, frame)
    if handled is not None:
        return handled
    given = arguments.value(python_std.IDENTITY_CALLS.get(target) or torch_api.IDENTITY_WRAPPERS.get(target))
    if given is not None:  # `typing.cast(List[T], [None] * n)`: the value given, as it is
        return given, state
    modelled = declared.active().facts.get(target)
    if modelled is not None:  # a declared model of a call we cannot see
        return fact_calls.apply_fact(modelled, arguments, state, frame, target)
    if target == "builtins.super":
        return _super(frame), state
    if target in python_std.ATTRIBUTE_SETTERS or target in python_std.DEFERRED_CALLS:
        # (`setattr(obj, "x", v)` stores; `functools.partial(f, x)` binds a call for later: nothing runs now)
        setter = python_std.ATTRIBUTE_SETTERS.get(target)
        return UNKNOWN, _set_attribute(setter, arguments, state) if setter is not None else state
    if target.startswith("builtins.") or target in python_std.PYTHON_OBJECT_MAKERS or target in python_std.ITERATOR_CALLS:
        return _builtin_or_opaque(target, arguments, state, frame)
    if target.rpartition(".")[0] in torch_api.TENSOR_FUNCTION_NAMESPACES \
            and target.rpartition(".")[2] in torch_api.TENSORS_OR_TUPLES and not _buffers_given(arguments):
        return UNKNOWN, state  # tensors of a device not told (or a tuple of them): no object of its own
    if handler is not None and not _buffers_given(arguments):
        # a framework object a call without a row made (`cp.cuda.Device()`): its methods' rows are under `Device().`
        return AbsValue(ValueKind.NAMESPACE, memory=_module_memory(target, arguments), target=f"{target}()"), state
    if target in declared.active().classes:  # a library class whose methods are declared (`rmm.DeviceBuffer(...)`)
        return AbsValue(ValueKind.OBJECT, identity=Path(Root.fresh(frame.site(arguments.node))),
                        target=f"{target}()"), state
    return _project_call(target, arguments, state, frame)


def _set_attribute(where: tuple, arguments: Arguments, state: State) -> State:
    """`setattr(holder, "x", v)`: what `holder.x = v` stores (api/python_std.ATTRIBUTE_SETTERS)."""
    holder, named, value = (arguments.located(arg) for arg in where)
    name = attribute_named(named[1]) if named is not None else None
    if holder is None or value is None or holder[0].identity is None or name is None or not name[1]:
        return state
    path = holder[0].identity.attr(name[0])
    return state.store(path, value[0]).with_order(state.order.replaced_at(path))


def _super(frame: Frame) -> AbsValue:
    """`super()`: the receiver as an instance of its class's first project base (a call-graph edge to its methods)."""
    base = frame.program.base_class(f"{frame.module}.{frame.class_name}") if frame.program and frame.class_name else None
    return UNKNOWN if base is None else AbsValue(ValueKind.OBJECT, identity=Path(Root.self_()), target=base)


def _answered_first(name: str, receiver: AbsValue, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    """A graph's launch, an optimizer's step, a module's parameters, a method the class defines itself."""
    if receiver.kind is ValueKind.GRAPH and receiver.identity is not None and name in ("launch", "replay"):
        return array_calls.launch_graph(receiver, arguments, state, frame)
    if receiver.kind is ValueKind.CONTAINER and receiver.target == torch_calls.OPTIMIZER:
        return torch_calls.optimizer_step(receiver, name, arguments, state, frame)
    if _project_module(name, receiver, frame):
        return _module_method(name, receiver, arguments, state)
    if name == "parameters" and torch_calls.parameters_of(receiver) is not None:
        return torch_calls.parameters_of(receiver), state
    if name in torch_modules.NAMED_ITEMS and torch_calls.parameters_of(receiver) is not None:
        # (name, item) pairs: the name a string the host has, the item as `parameters()` gives it
        pair = AbsValue(ValueKind.CONTAINER, positions=(AbsValue(ValueKind.HOST_NUMBER), UNKNOWN))
        return AbsValue(ValueKind.CONTAINER, "torch", element=pair), state
    if _own_method(name, receiver, frame):
        return _project_call(f"{frame.module}.{frame.class_name}.{name}", arguments, state, frame)
    return None


def _project_module(name: str, receiver: AbsValue, frame: Frame) -> bool:
    """A method PyTorch's `nn.Module` gives an object of a project module class that does not define it itself."""
    if name not in torch_modules.MODULE_MOVES and name not in torch_modules.MEMORY_LISTINGS:
        return False
    cls = receiver.target if receiver.kind is ValueKind.OBJECT else ""
    return bool(cls) and frame.program is not None and MERGED not in cls and frame.program.is_module(cls) \
        and f"{cls}.{name}" not in frame.program.methods_named(cls, name)


def _module_method(name: str, module: AbsValue, arguments: Arguments, state: State) -> Handled:
    """`model.to(device)`, `model.cuda()`: the module itself, its parameters and buffers where the call puts them (in
    place: every name holding it sees the move); `model.parameters()`: tensors in the module's memory."""
    if name in torch_modules.MEMORY_LISTINGS:
        item = AbsValue(ValueKind.BUFFER, "torch", module.memory,
                        module.identity.element(Index.any_()) if module.identity is not None else None)
        members = frozenset({module.identity}) if module.identity is not None else frozenset()
        return AbsValue(ValueKind.CONTAINER, "torch", element=item, members=members), state
    memory = Memory.DEVICE if name == "cuda" else memory_named(arguments, Arg(0, "device"))
    if memory is None:
        return module, state
    moved = replace(module, memory=memory)
    if module.identity is not None and state.stored(module.identity) == module:
        state = state.store(module.identity, moved)
    for bound, value in state.names:
        if value == module:
            state = state.bind(bound, moved)
    return moved, state


def _method(name: str, arguments: Arguments, state: State, frame: Frame) -> Handled:
    receiver = arguments.receiver or UNKNOWN
    if name == "__setattr__" and frame.class_name and _of_super(arguments.node):  # `object.__setattr__(self, ...)`
        self_ = (AbsValue(identity=Path(Root.self_())), arguments.node)
        return call(AbsValue(ValueKind.NAMESPACE, target="builtins.object.__setattr__"),
                    replace(arguments, positional=(self_,) + arguments.positional), state, frame)
    handled = _answered_first(name, receiver, arguments, state, frame)
    if handled is not None:
        return handled
    if name in torch_api.SHAPE_METHODS and (receiver.kind is ValueKind.UNKNOWN or receiver.framework == "torch"):
        # `t.size()[1:]`: numbers the host has, whatever the tensor's device (also of a value the code never shows)
        many = torch_api.SHAPE_METHODS[name] and not arguments.positional and not arguments.keywords
        return (AbsValue(ValueKind.CONTAINER, element=AbsValue(ValueKind.HOST_NUMBER)) if many
                else AbsValue(ValueKind.HOST_NUMBER)), state
    handled = _of_one_kind(name, receiver, arguments, state, frame)
    if handled is not None:
        return handled
    receiver = _evident_kind(receiver, name, arguments, state)
    # (no tensor has `items()`; a tensor's `values()` is its own values: what a call on tensors returned is a dict of
    # the tensors made there)
    batch = receiver if receiver.loader_batch or receiver.is_buffer \
        else receiver.element if receiver.kind is ValueKind.CONTAINER or receiver.target == ITEMS_ONLY else None
    if name in python_std.MAPPING_VIEWS and batch is not None and (batch is receiver or batch.is_buffer):
        # `batch.items()` of a loader's batch, or of a dict of tensors: those tensors
        item = replace(batch, identity=None)
        pairs = AbsValue(ValueKind.CONTAINER, element=item, target=fact_calls.ERROR_FIRST) if name == "items" else item
        return AbsValue(ValueKind.CONTAINER, element=pairs), state
    evident = torch_calls.evident_receiver(name, receiver, frame.chosen_stream(state), arguments.values()) \
        if receiver.kind is ValueKind.UNKNOWN else None
    if handlers.answers(receiver):
        handled = handlers.method(name, receiver, arguments, state, frame)
    elif evident is not None:  # a method that exists on one kind of tensor only tells what the receiver is
        _note_parameter(frame, evident, name in torch_api.RECEIVER_EVIDENCE)
        handled = torch_calls.tensor_method(name, evident, arguments, state, frame)
    elif receiver.kind is ValueKind.OBJECT and MERGED in receiver.target:
        # an object of one of a few classes (made on either side of a configuration test): each class's method
        return _any_of(tuple(receiver.target.split(MERGED)), name, arguments, state, frame)
    elif receiver.target == command_line.PARSER:
        handled = command_line.method(name, receiver, arguments, state)
    elif receiver.kind is ValueKind.OBJECT and receiver.target:
        return _object_method(f"{receiver.target}.{name}", arguments, state, frame)
    elif receiver.identity is not None and receiver.identity.root.kind is RootKind.SELF and not receiver.identity.steps:
        return _project_call(f"{frame.module}.{frame.class_name}.{name}", arguments, state, frame)
    if handled is None and not receiver.is_buffer:  # an NCCL communicator's collective, an MPI one's buffer method
        handled = mpi_calls.collective(name, arguments, state, frame) \
            or mpi_calls.comm_method(name, arguments, state, frame)
    if handled is None:
        return _unseen_method(receiver, name, arguments, state, frame)
    value, state = handled
    if name in python_std.LISTING_METHODS and value.kind is ValueKind.HOST_NUMBER:
        return AbsValue(ValueKind.CONTAINER, element=value), state  # a Python list of host values
    return handled


def _of_one_kind(name: str, receiver: AbsValue, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    """A method only one kind of object has, called on a value of unknown kind: what that kind's method does."""
    if name in python_std.STRING_ONLY_METHODS and receiver.kind in (ValueKind.UNKNOWN, ValueKind.BUFFER):
        return _text_method(name, receiver, state)
    if receiver.kind is not ValueKind.UNKNOWN:
        return None
    if name in python_std.TEXT_MAKING_METHODS and (receiver.target == TOKENIZER or name in python_std.TOKENIZER_ONLY_METHODS):
        return _decoded(name, arguments, _as_tokenizer(receiver, arguments, state), frame)
    if name in python_std.TOKENIZER_ONLY_METHODS:  # (what it returns stays unknown: ids, a template's text)
        return _opaque(arguments, _as_tokenizer(receiver, arguments, state), frame, callee=METHOD + name)
    if name in tensorrt.CONTEXT_METHODS:
        # TensorRT's execution context: inference on the handle given, over the memory bound to it
        return fact_calls.apply_fact(tensorrt.CONTEXT_METHODS[name], arguments, state, frame,
                                     f"tensorrt.IExecutionContext.{name}")
    return None


def _text_method(name: str, receiver: AbsValue, state: State) -> Handled:
    """A method only Python strings have (`token.startswith("<|s_")`): the receiver, and every name holding it, is
    text on the host; what the method returns is host text too."""
    text = AbsValue(ValueKind.HOST_NUMBER)
    if receiver.identity is not None:
        for bound, value in state.names:
            if value.identity == receiver.identity:
                state = state.bind(bound, text)
    return (AbsValue(ValueKind.CONTAINER, element=text) if name in python_std.STRING_LISTING_METHODS else text), state


def _as_tokenizer(receiver: AbsValue, arguments: Arguments, state: State) -> State:
    """The name or attribute the method was called through, and the names holding the same object, hold a tokenizer:
    a method only tokenizers have was called on it."""
    if receiver.target == TOKENIZER:
        return state
    tokenizer = replace(receiver, target=TOKENIZER)
    func = arguments.node.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):  # (`tokenizer.apply_chat_template(...)`)
        state = state.bind(func.value.value, tokenizer)
    if receiver.identity is None:
        return state
    for bound, value in state.names:
        if value.identity == receiver.identity:
            state = state.bind(bound, tokenizer)
    return state.store(receiver.identity, tokenizer) if receiver.identity.steps else state


def _decoded(name: str, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """`tokenizer.decode(ids)`: text the host makes of what it is given. Device memory among it is copied back once
    the current stream finished (as `print` reads it); the result is Python text, not memory a kernel made."""
    state = formatted_on_host(name, arguments.values(), frame.site(arguments.node), state, frame)
    text = AbsValue(ValueKind.HOST_NUMBER)
    return (AbsValue(ValueKind.CONTAINER, element=text) if name in python_std.TEXT_LISTING_METHODS else text), state


def _of_super(node: cst.Call) -> bool:
    """`super().m(...)`"""
    base = node.func.value if isinstance(node.func, cst.Attribute) else None
    return isinstance(base, cst.Call) and isinstance(base.func, cst.Name) and base.func.value == "super"


def _evident_kind(receiver: AbsValue, name: str, arguments: Arguments, state: State) -> AbsValue:
    """A stream's (or a MemoryPointer's) own method called on a value of unknown kind shows what it is; so does
    an event's `record(stream)` given a stream, or the stream the walk has entered (`with torch.cuda.stream(s):
    ev.record(s)`): no other object records itself on a stream."""
    if receiver.kind is not ValueKind.UNKNOWN or receiver.identity is None:
        return receiver
    if name in torch_api.STREAM_ONLY_METHODS:
        return AbsValue(ValueKind.STREAM, "torch", identity=receiver.identity)
    stream = arguments.value(torch_api.EVENT_METHODS["record"].stream_arg) if name == "record" else None
    if stream is not None and stream.kind is ValueKind.STREAM and stream.framework:
        return AbsValue(ValueKind.EVENT, stream.framework, identity=receiver.identity)
    if stream is not None and stream.identity is not None and state.current_stream(torch_api.F) == StreamRef.at(stream.identity):
        return AbsValue(ValueKind.EVENT, torch_api.F, identity=receiver.identity)
    if name in cupy_api.MEMORY_POINTER_ONLY:
        return AbsValue(ValueKind.BUFFER, RAW, Memory.DEVICE, receiver.identity)
    return receiver


def _unseen_method(receiver: AbsValue, name: str, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """A method no table and no project class answers for."""
    state = _started(name, arguments, state, frame)  # (a pool's `submit(fn, ...)`: what fn does to what it is handed)
    if receiver.kind is ValueKind.CONTAINER and receiver.target == NO_ITEMS and name in python_std.KEEPING_METHODS:
        state = _no_longer_empty(receiver, _added(receiver, name, arguments), arguments, state)
    state = _kept_by(receiver, arguments, state)
    if name in python_std.KEEPING_METHODS:
        _kept_in_parameter(receiver, arguments, frame)
    item = _item_of(receiver, name, state)
    default = arguments.value(python_std.DEFAULTED_ITEMS[name]) if name in python_std.DEFAULTED_ITEMS else None
    if default is not None and receiver.kind in (ValueKind.UNKNOWN, ValueKind.CONTAINER):
        # the item or the default the code gives: a default is evidence (a CUDA device on one path is the GPU path's)
        return (item or UNKNOWN).join(default), state
    if item is not None:
        _taken_out(receiver, item, name, arguments, frame)
        return item, state
    if receiver.kind is ValueKind.CONTAINER or name in python_std.KEEPING_METHODS \
            or name in torch_api.AUTOGRAD_CONTEXT_METHODS:
        return UNKNOWN, state  # a container's (or an autograd `ctx`'s) own method: it keeps its arguments, runs no kernel
    if name in python_std.LISTING_METHODS:
        _, state = _opaque(arguments, state, frame)
        return AbsValue(ValueKind.CONTAINER, element=AbsValue(ValueKind.HOST_NUMBER)), state
    classes = ()
    if receiver.kind is ValueKind.UNKNOWN and receiver.identity is not None and frame.program is not None \
            and name not in FRAMEWORK_METHODS:
        # class-hierarchy analysis: the project classes of one hierarchy that define the method and
        # can take the call's arguments, when no framework's object or builtin has a method of that name
        classes = frame.program.classes_with_method(frame.module, name, call=arguments.node)
    if classes:
        return _any_of(classes, name, arguments, state, frame)
    read = torch_api.TENSOR_METHODS.get(name)
    if receiver.kind is ValueKind.UNKNOWN and read is not None and read.kind is OpKind.IMPLICIT_SYNC:
        frame.unseen(frame.site(arguments.node), "device", receiver.identity)  # (`x.item()` of a value not told)
    named = receiver.kind is ValueKind.NAMESPACE and receiver.target  # (a framework object's method without a row)
    result, after = _opaque(arguments, state, frame, callee=f"{receiver.target}.{name}" if named else METHOD + name)
    if receiver.kind is not ValueKind.UNKNOWN:
        return result, after  # a framework's object whose method has no row: not told
    return result, _fills(arguments, state, after, frame)


def _no_longer_empty(receiver: AbsValue, filled: AbsValue, arguments: Arguments, state: State) -> State:
    """`parts.append(t)` on an empty display a name or attribute holds: its items are no longer known to be none."""
    if receiver.identity is not None and state.stored(receiver.identity) == receiver:  # `self.parts.append(t)`
        return state.store(receiver.identity, filled)
    func = arguments.node.func
    if not isinstance(func, cst.Attribute):
        return state
    held = func.value
    if isinstance(held, cst.Attribute) and isinstance(held.value, cst.Name):  # a display kept at `obj.parts`
        base = state.value(held.value.value).identity
        path = base.attr(held.attr.value) if base is not None else None
        return state.store(path, filled) if path is not None and state.stored(path) == receiver else state
    return state.bind(held.value, filled) if isinstance(held, cst.Name) else state


def _added(receiver: AbsValue, name: str, arguments: Arguments) -> AbsValue:
    """An empty container once `name` put its arguments in: the one item added (`append`), else not told."""
    position = python_std.ADDING_METHODS.get(name)
    item = arguments.positional[position][0] if position is not None and position < len(arguments.positional) else None
    told = item is not None and (item.kind is not ValueKind.UNKNOWN or item.identity is not None)
    return replace(receiver, target="", element=item if told else receiver.element)


def _any_of(classes: tuple[str, ...], name: str, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """A method one of several classes defines: each class's, on a side of its own."""
    ordinal = frame.numbering.tests.setdefault(id(arguments.node), len(frame.numbering.tests))
    calls = [(f"{cls}.{name}", replace(arguments, receiver=replace(arguments.receiver or UNKNOWN, kind=ValueKind.OBJECT,
                                                                   target=cls))) for cls in classes]
    return _sides(calls, f"{frame.qualname}?{ordinal}:", _project_call, state, frame)


def _one_of(callee: AbsValue, arguments: Arguments, state: State, frame: Frame, run=None) -> Handled:
    """A callable value that is one of a few project functions, a bound method, or a few framework functions (`run`)."""
    cells = cells_of(callee) if run is None else ()
    targets = callee.target.split(MERGED)
    receiver = arguments.receiver
    owner = targets[0].rpartition(".")[0]
    # a bound method's object (a function defined in a function, a closure handed in, binds no receiver)
    if callee.identity is not None and (frame.program is None or frame.program.is_class(owner)):
        receiver = AbsValue(ValueKind.OBJECT, identity=callee.identity, target=owner)
    calls = [(target, replace(arguments, receiver=receiver)) for target in targets]
    return _sides(calls, f"{frame.site(arguments.node)}?callee:", run or _project_call, state, frame,
                  *((cells,) if cells else ()))


def _sides(calls: list[tuple[str, Arguments]], label: str, run, state: State, frame: Frame, *extra) -> Handled:
    """Each call on a side of its own (as a test's sides; not in a loop, which may pick another each time), joined."""
    outside = frame.branch
    joined: Optional[Handled] = None
    for side, (target, arguments) in enumerate(calls):
        if len(calls) > 1 and not frame.loop_depth:
            frame.branch = outside + (f"{label}{side}",)
        value, after = run(target, arguments, state, frame, *extra)
        joined = (value, after) if joined is None else (joined[0].join(value), joined[1].join(after))
    frame.branch = outside
    return joined if joined is not None else (UNKNOWN, state)


def _item_of(receiver: AbsValue, name: str, state: State) -> Optional[AbsValue]:
    """`d.pop(k)`, `d.get(k)`: what the container's weak slot holds, else its items."""
    if name not in python_std.ITEM_METHODS:
        return None
    held = state.stored(receiver.identity.element(Index.any_())) if receiver.identity is not None else None
    if held is not None and held.kind is not ValueKind.UNKNOWN:
        return held
    # (a container a name holds, `q = queue.Queue(); q.put(t)`: its items as the name holds them)
    return receiver.element if receiver.kind is ValueKind.CONTAINER else None


def _taken_out(receiver: AbsValue, item: AbsValue, name: str, arguments: Arguments, frame: Frame) -> None:
    """An item another call made taken out of a container on `self`: the function holds the last reference."""
    if name not in python_std.TAKING_METHODS or receiver.identity is None or receiver.identity.root.kind is not RootKind.SELF:
        return
    for made in item.alternatives:  # (the memory it is on each path that told it: D-20)
        identity = made.identity
        if identity.root.kind is RootKind.FRESH and not identity.root.site.startswith(frame.qualname + "#"):
            frame.found.taken.setdefault(identity, frame.site(arguments.node))


def _fills(arguments: Arguments, before: State, after: State, frame: Frame) -> State:
    """A method of an unseen object given device memory made here and unwritten can only be filling it."""
    given = next((v for v in arguments.values() if v.kind is ValueKind.STREAM), None)
    stream = fact_calls.stream_of_value(given) if given is not None else after.current_stream("torch")
    site = frame.site(arguments.node)
    for value in arguments.values():
        root = value.identity.root if value.identity is not None else None
        fresh = root is not None and root.kind is RootKind.FRESH and not root.age
        if is_device(value) and fresh and not before.order.has_root(root) and stream.known:
            after = access(after, frame, site, value.identity, True, stream)
    return after


def _object_method(target: str, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """A method of an object: a declared model's, else the project's (or its subclasses', by hierarchy)."""
    modelled = declared.active().facts.get(target)
    if modelled is not None:
        return fact_calls.apply_fact(modelled, arguments, state, frame, target)
    cls, _, name = target.rpartition(".")
    program = frame.program
    subclasses = program.classes_with_method(frame.module, name, cls, arguments.node) if program is not None else ()
    if subclasses:
        return _any_of(subclasses, name, arguments, state, frame)
    return _project_call(target, arguments, state, frame)


def _iterating(target: str, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    """`zip(a, b)`: tuples of the iterables' items, by position; `enumerate(xs)`: pairs of a number and an item."""
    if target in python_std.PAIRING_CALLS and (arguments.positional or arguments.spread is not None):
        items = []  # tuples of the iterables' items, by position (`zip(*rows)`: items of rows, positions not told)
        for value, _ in arguments.positional:
            item, state = _items_of(value, arguments.node, state, frame)
            items.append(item)
        if arguments.spread is not None:
            item, state = _items_of(arguments.spread, arguments.node, state, frame)
            items.append(item)
        told = tuple(items) if arguments.spread is None else ()
        pair = AbsValue(ValueKind.CONTAINER, element=reduce(AbsValue.join, items), positions=told)
        return AbsValue(ValueKind.CONTAINER, element=pair), state
    if target in python_std.ITERATOR_CALLS and arguments.value(python_std.ITERATOR_CALLS[target]) is not None:
        item, state = _items_of(arguments.value(python_std.ITERATOR_CALLS[target]), arguments.node, state, frame)
        return (AbsValue(ValueKind.CONTAINER, element=item) if item != UNKNOWN else UNKNOWN), state
    if target in python_std.NEXT_CALLS:
        return _next_item(arguments, state, frame)
    if target in python_std.NUMBERING_CALLS:  # pairs of a number and an item of the iterable
        iterable = arguments.value(python_std.NUMBERING_CALLS[target])
        item, state = _items_of(iterable, arguments.node, state, frame) if iterable is not None else (UNKNOWN, state)
        pair = AbsValue(ValueKind.CONTAINER, element=item, target=fact_calls.ERROR_FIRST)
        return AbsValue(ValueKind.CONTAINER, element=pair), state
    return None


def _next_item(arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    """`next(it)`: the iterator's next item (a project object's `__next__`, an `iter(...)`'s item), or the default
    given for an exhausted one (`next(it, None)`: an item or None)."""
    iterator_arg, default_arg = python_std.NEXT_CALLS["builtins.next"]
    iterator = arguments.value(iterator_arg)
    if iterator is None:
        return None
    cls = iterator.target if iterator.kind is ValueKind.OBJECT else ""
    if cls and frame.program is not None and frame.program.methods_named(cls, "__next__"):
        item, state = _protocol_call(iterator, "__next__", arguments.node, state, frame)
    else:
        item = iterator.iterated()
    default = arguments.value(default_arg)
    if default is not None and item != UNKNOWN:
        item = item.join_none() if default.kind is ValueKind.NONE else item.join(default)
    return item, state


def _items_of(iterable: AbsValue, at: cst.CSTNode, state: State, frame: Frame) -> Handled:
    """What iterating `iterable` gives, as a `for` loop over it binds (`enumerate(loader)` of a project object: what
    its class's `__iter__` hands out)."""
    item, state = iterated_object(iterable, at, state, frame)
    return (iterable.iterated() if item is None else item), state


def iterated_object(receiver: AbsValue, at: cst.CSTNode, state: State, frame: Frame) -> tuple[Optional[AbsValue], State]:
    """The items of a project object a loop iterates (`for batch in Prefetcher(loader)`): what its class's `__iter__`
    returns the items of (a generator's, or a container's), or, when `__iter__` returns the object itself, what its
    `__next__` returns; None when the class defines neither (the loop's own rules then apply)."""
    cls = receiver.target if receiver.kind is ValueKind.OBJECT else ""
    if not cls or frame.program is None or not frame.program.methods_named(cls, "__iter__"):
        return None, state
    made, state = _protocol_call(receiver, "__iter__", at, state, frame)
    if made.kind is not ValueKind.OBJECT or made.target != cls or not frame.program.methods_named(cls, "__next__"):
        return made.iterated(), state
    return _protocol_call(receiver, "__next__", at, state, frame)


def run_property(method: str, receiver: AbsValue, at: cst.Attribute, state: State, frame: Frame) -> Handled:
    """A read of a property (`model.device`): its method, run on the object where the attribute is read."""
    return _protocol_call(receiver, method.rpartition(".")[2], at, state, frame, method)


def _protocol_call(receiver: AbsValue, name: str, at: cst.CSTNode, state: State, frame: Frame,
                   method: str = "") -> Handled:
    """A method Python calls for the code (`for x in obj` calls `obj.__iter__()`), placed at the statement that
    calls it: a call node of its own, numbered as that statement."""
    node = frame.numbering.once(f"protocol:{id(at)}:{name}", lambda: cst.Call(cst.Attribute(cst.Name("self"), cst.Name(name))))
    ordinals = frame.numbering.call_ordinals
    if id(node) not in ordinals and id(at) in ordinals:
        ordinals[id(node)] = ordinals[id(at)]
    return _object_method(method or f"{receiver.target}.{name}", Arguments((), {}, receiver, node), state, frame)


def _kept_by(receiver: AbsValue, arguments: Arguments, state: State) -> State:
    """An object we cannot see into may keep the buffers its method is given (`list.append`): as its items."""
    if receiver.identity is None or receiver.is_buffer:
        return state
    given = [v for v in arguments.values() if v.is_buffer and v.identity is not None]
    if not given:
        return state
    joined = reduce(AbsValue.join, given)
    items = receiver.identity.element(Index.items())
    held = state.at(items)
    kept = AbsValue(ValueKind.CONTAINER, element=joined if held.element is None else held.element.join(joined))
    return state.store(items, kept if len(given) == 1 else AbsValue(ValueKind.CONTAINER, element=joined))


def _started(target: str, arguments: Arguments, state: State, frame: Frame) -> State:
    """`threading.Thread(target=f, args=(q, s))`, `pool.submit(f, q, s)`: what `f` does to what it is handed is done (it
    runs on a thread of its own, from its default stream: the thread dimension of its context), placed where the thread
    is made: the items it puts in a queue the caller keeps are the caller's (a target that is no project function, or
    arguments not written out, tell nothing: the call stays unseen)."""
    started = _thread_call(target, arguments)
    if started is None:
        return state
    function, given = started
    return call(function, Arguments(given, {}, None, arguments.node), state, frame)[1]


def _thread_call(target: str, arguments: Arguments) -> Optional[tuple[AbsValue, tuple]]:
    """The function a thread start runs and the arguments it hands it, as (value, expression) pairs."""
    if target in python_std.THREAD_TARGET_METHODS:  # (`executor.submit(fn, a, b)`: the rest are fn's arguments)
        at_function, first = python_std.THREAD_TARGET_METHODS[target]
        given = arguments.positional[first:]
    elif target in python_std.THREAD_TARGETS:
        at_function, at_args = python_std.THREAD_TARGETS[target]
        located = arguments.located(Arg(*at_args))
        if located is not None and not (isinstance(located[1], cst.Tuple)
                                        and not any(isinstance(e, cst.StarredElement) for e in located[1].elements)):
            return None  # (`args=some_tuple`: what the thread is handed is not told)
        elements = located[1].elements if located is not None else ()
        given = tuple(zip(located[0].positions or (UNKNOWN,) * len(elements), (e.value for e in elements))) \
            if located is not None else ()
    else:
        return None
    function = arguments.value(Arg(*at_function))
    if function is None or function.kind is not ValueKind.CALLABLE or not function.target:
        return None
    return function, given


def _kept_in_parameter(receiver: AbsValue, arguments: Arguments, frame: Frame) -> None:
    """`out.append(t)`, `q.put(t)` into a container the caller handed in: the caller's container holds `t` after the
    call (the summary's `param_stores`)."""
    if receiver.identity is None or receiver.identity.root.kind is not RootKind.PARAM or receiver.identity.steps:
        return
    given = [v for v in arguments.values() if (v.is_buffer and v.identity is not None)
             or (v.kind is ValueKind.CONTAINER and any(p.is_buffer for p in (*v.positions, v.element) if p is not None))]
    if given:  # (a tensor, or a tuple of tensors: `ready.put((inputs, targets))`)
        name, found = receiver.identity.root.name, frame.found.param_items
        joined = reduce(AbsValue.join, given)
        found[name] = joined if name not in found else found[name].join(joined)


def _getattr(arguments: Arguments, state: State, frame: Frame) -> tuple[Optional[AbsValue], State]:
    """`getattr(obj, name)`: a project object's method of that name, or those whose names start with the constant
    prefix it is built from (<= MAX_TARGETS); else what the producers of a holder leave there (D-16)."""
    if len(arguments.positional) < 2:
        return None, state
    obj, (_, name_node) = arguments.positional[0][0], arguments.positional[1]
    named = attribute_named(name_node)
    if named is None or obj.identity is None:
        return None, state
    (name, exact), cls = named, obj.target if obj.kind is ValueKind.OBJECT else ""
    if not cls and obj.identity.root.kind is RootKind.SELF and not obj.identity.steps and frame.class_name:
        cls = f"{frame.module}.{frame.class_name}"
    targets = frame.program.methods_named(cls, name) if cls and frame.program is not None else ()
    targets = tuple(t for t in targets if t == f"{cls}.{name}") if exact else targets
    if targets and len(targets) <= MAX_TARGETS:
        return AbsValue(ValueKind.CALLABLE, identity=obj.identity, target=MERGED.join(targets)), state
    if not exact or state.stored(obj.identity.attr(name)):
        return None, state
    left, state = left_on_holder(obj, name, state, frame)  # (None with a default: `getattr(holder, "x", None)`)
    return (replace(left, may_be_none=True) if left is not None and len(arguments.positional) > 2 else left), state


def _builtin_or_opaque(target: str, arguments: Arguments, state: State, frame: Frame) -> Handled:
    if target in python_std.EMPTY_CONTAINERS or len(arguments.positional) <= python_std.EMPTY_WHEN_NO_ITEMS.get(
            target, -1) and (target != "builtins.dict" or not arguments.keywords):
        # `queue.Queue(maxsize=2)`, `OrderedDict()`, `defaultdict(list)`: no items yet, as `[]`
        return AbsValue(ValueKind.CONTAINER, target=NO_ITEMS), state
    if target in python_std.OPTION_PARSERS:
        return command_line.made(arguments, frame), state
    if target in python_std.ATTRIBUTE_BAGS and not arguments.positional:  # each keyword is an attribute of a new object
        made = Path(Root.fresh(frame.site(arguments.node)))
        for key, (value, _) in arguments.keywords.items():
            state = state.store(made.attr(key), value)
        return AbsValue(ValueKind.OBJECT, identity=made), state
    name = target[len("builtins."):]
    if name == "dict" and not arguments.positional and arguments.keywords:  # `dict(non_blocking=True)`
        items = tuple(v for v, _ in arguments.keywords.values())
        return AbsValue(ValueKind.CONTAINER, element=reduce(AbsValue.join, items), positions=items,
                        keys=tuple(arguments.keywords)), state
    if name == "getattr":
        method, state = _getattr(arguments, state, frame)
        if method is not None:
            return method, state
    site = frame.site(arguments.node)
    values = [v for v, _ in arguments.positional]
    tested = placed(values[0], frame.assumes_cuda) if len(values) == 1 else None
    if target in python_std.ELEMENTWISE_TRUTH and tested is not None and tested.is_buffer and is_device(tested):
        # `all(done)` of a CUDA tensor: the host reads its elements' truth one by one (a wait per element)
        return torch_calls.read_back(target, [tested], state.current_stream(tested.framework or "torch"),
                                     fact_calls.made_at(tested), tested.framework or "torch", site, state, frame)
    listed = _listed_items(target, arguments)
    by_items = (listed, state) if listed is not None else _folded(target, arguments, state, frame)
    if by_items is not None:
        return by_items
    if name in host_math.FORMATTING_READERS or (name in host_math.SCALAR_CONVERSIONS and len(values) == 1):
        # `print(loss)`, `int(t)`: the host copies the value back once the current stream finished
        state = formatted_on_host(name, values, site, state, frame)
    if name in HOST_READERS:
        return AbsValue(ValueKind.HOST_NUMBER), host_reads(state, frame, site, arguments.values())
    if target in python_std.TYPE_QUERIES:  # its type, not its data: no device work
        return UNKNOWN, state
    iterating = _iterating(target, arguments, state, frame)
    if iterating is not None:
        return iterating
    if name in host_math.NUMBER_SEQUENCES:  # `range(n)`: its items (a loop's counter) are host numbers
        state = host_reads(state, frame, site, arguments.values())
        return AbsValue(ValueKind.CONTAINER, element=AbsValue(ValueKind.HOST_NUMBER)), state
    return _opaque(arguments, state, frame)


def _folded(target: str, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    """`sum(losses)`: `0 + item + ...`, an operation on the tensors among the items where they live (PyTorch's
    invariant), or None when no item is a tensor (numbers the host adds)."""
    iterable = arguments.value(python_std.FOLDING_CALLS.get(target))
    if iterable is None:
        return None
    item = iterable if iterable.is_buffer else iterable.iterated()  # (a tensor's rows are views of its memory)
    buffers = [b for b in ((item,) if item.is_buffer else item.either)]
    if not buffers:
        return None
    operator = Arguments((), {}, None, arguments.node)  # type: ignore[arg-type]
    return torch_calls.run_operation(buffers, None, False, operator, state, frame)


def formatted_on_host(api: str, values: list[AbsValue], site: str, state: State, frame: Frame) -> State:
    """The host formats or converts values (`print(t)`, `int(t)`, an f-string): device memory among them, or
    in a tuple of them, is copied back once the current stream finished (one read, one wait); host memory among them
    the host reads where it is (a copy into it may still be running)."""
    seen = [placed(v, frame.assumes_cuda) for value in values for v in (value, *value.positions)]
    state = host_reads(state, frame, site, seen)
    read = [v for v in seen if is_device(v)]
    unseen_devices(frame, site, seen)
    if not read:
        return state
    current = state.current_stream(read[0].framework or torch_calls.F)
    return torch_calls.read_back(api, read[:1], current, fact_calls.made_at(read[0]), read[0].framework, site,
                                 state, frame)[1]


def _listed_items(target: str, arguments: Arguments) -> Optional[AbsValue]:
    """`list(t.split(n))`: a new container of the items of device memory or of a container with known items;
    `int(t.data_ptr())`: the address itself, a number the host has (no read back)."""
    given = arguments.values()
    if target.removeprefix("builtins.") in host_math.ADDRESS_KEEPING and len(given) == 1 and given[0].is_buffer \
            and given[0].framework in POINTER_FRAMEWORKS:
        return given[0]
    iterable = arguments.value(python_std.LISTING_CALLS.get(target)) if len(arguments.values()) == 1 else None
    if target in python_std.LISTING_CALLS and iterable is not None and iterable.kind is ValueKind.CONTAINER \
            and iterable.items is None:
        # (items not told: no numbers; nor memory told, which an optimizer over it would take for CUDA parameters)
        return AbsValue(ValueKind.CONTAINER, iterable.framework)
    if iterable is None or (iterable.is_buffer and not is_device(iterable)) or iterable.items is None:
        return None
    return AbsValue(ValueKind.CONTAINER, element=iterable.items, members=iterable.members)


def _own_method(name: str, receiver: AbsValue, frame: Frame) -> bool:
    """`self.m(...)` where the walked method's class defines `m` itself (not `super().m(...)`)."""
    identity = receiver.identity
    if receiver.kind is not ValueKind.UNKNOWN or identity is None or identity.root.kind is not RootKind.SELF \
            or identity.steps or frame.program is None:
        return False
    own = f"{frame.module}.{frame.class_name}.{name}"
    return bool(frame.class_name) and own in frame.program.methods_named(f"{frame.module}.{frame.class_name}", name)


def _project_call(target: str, arguments: Arguments, state: State, frame: Frame, cells: tuple = ()) -> Handled:
    """A project function's summary applied here; `C(...)` of a project class: a new object, its `__init__` applied."""
    obj = None
    if frame.program is not None and frame.program.is_class(target):
        obj = AbsValue(ValueKind.OBJECT, identity=Path(Root.fresh(frame.site(arguments.node))), target=target)
        target, arguments = f"{target}.__init__", replace(arguments, receiver=obj)
    elif frame.program is not None and arguments.receiver is not None:
        target, arguments = _aliased(target, arguments, frame)
    context = _context(arguments, state, frame)
    if cells:  # a closure's cells: what its free names hold, a dimension of the context (D-21)
        context = replace(context, args=context.args + tuple((key, _fact(value, state)) for key, value in cells))
    summary = frame.program.summary(target, context) if frame.program is not None else None
    if summary is None:
        return (obj, state) if obj is not None else _opaque(arguments, state, frame, callee=target)
    if target.rpartition(".")[0] != frame.qualname:  # (a closure of another function: what its cells hold, as facts)
        cells = tuple((key, _fact(value, state)) for key, value in cells)
    arguments, state = _named_for_keys(summary, arguments, state)
    bound = _bound_args(summary.params, arguments) + cells  # (a cell is bound as the parameter it is in the walk)
    receiver = arguments.receiver
    if receiver is None and frame.class_name and target.rpartition(".")[0] == frame.qualname:
        receiver = AbsValue(identity=Path(Root.self_()))  # (a closure of a method: its free receiver is this `self`)
    binding = Binding(frame.site(arguments.node), bound, receiver, frame.branch, shared=frame.program.memoized(target))
    applied = apply(summary, state, binding)
    for effect in applied.effects:
        frame.emit(_in_this_loop(effect, frame, frame.guards_at(arguments.node)))
    frame.report(list(applied.conflicts))
    state = _kept_in_named(applied.kept, summary.params, arguments, applied.state)
    for param, tags in summary.evidence:
        # what the callee's use of a parameter showed it to be, the caller's argument is
        given = binding.arg(param)
        if given is None or given.kind is not ValueKind.UNKNOWN or given.identity is None:
            continue
        memory = Memory.DEVICE if Evidence.CUDA_BUFFER in tags else Memory.PAGEABLE if Evidence.HOST_BUFFER in tags \
            else Memory.UNKNOWN
        state = torch_calls.learn(state, AbsValue(ValueKind.BUFFER, "torch", memory, given.identity))
    return (obj or applied.returns), state


def _aliased(target: str, arguments: Arguments, frame: Frame) -> tuple[str, Arguments]:
    """`model.decode(mel)` where the class binds `decode = decode_function`: `decode_function(model, mel)` (a function
    of a module is handed the instance first; a method of the class takes it as its receiver)."""
    alias = frame.program.method_alias(target)
    if alias is None:
        return target, arguments
    qualname, method = alias
    if method:
        return qualname, arguments
    receiver = (arguments.receiver, arguments.node)
    return qualname, replace(arguments, positional=(receiver,) + arguments.positional, receiver=None)


def _named_for_keys(summary, arguments: Arguments, state: State) -> tuple[Arguments, State]:
    """An object a name holds, handed to a callee that stores items in it under keys written out (a loader's batch
    given to `prepare_batch(batch)`): named by the caller's name from here on, so that what the callee leaves there is
    what the caller reads there after the call."""
    keyed = {param for param, _, _ in summary.param_keys}
    if not keyed:
        return arguments, state
    names = [p for p in summary.params if p not in ("self", "cls")] if arguments.receiver is not None else list(summary.params)
    positional = list(arguments.positional)
    keywords = dict(arguments.keywords)
    for param, (value, node), put in [*((n, a, i) for i, (n, a) in enumerate(zip(names, positional))),
                                      *((n, keywords[n], n) for n in keywords)]:
        if param not in keyed or not isinstance(node, cst.Name) or not holds_keys(value):
            continue
        value = replace(value, identity=Path(Root.local(node.value)))
        state = state.named_anew(node.value, value)
        if isinstance(put, int):
            positional[put] = (value, node)
        else:
            keywords[put] = (value, node)
    return replace(arguments, positional=tuple(positional), keywords=keywords), state


def holds_keys(value: AbsValue) -> bool:
    """A value of no identity that may be a mapping: a loader's batch, a value of kind not told."""
    return value.identity is None and not value.either and (value.loader_batch or (
        value.kind is ValueKind.UNKNOWN and not value.target))


def _kept_in_named(kept: tuple, params: tuple[str, ...], arguments: Arguments, state: State) -> State:
    """A container the caller's name holds (`out = []`, `q = queue.Queue()`) and hands to a callee that puts items in
    it holds those items after the call, beside its own (the summary's `param_stores`)."""
    if not kept:
        return state
    names = [p for p in params if p not in ("self", "cls")] if arguments.receiver is not None else list(params)
    nodes = {name: node for name, (_, node) in zip(names, arguments.positional)}
    nodes.update({name: node for name, (_, node) in arguments.keywords.items()})
    for param, items in kept:
        node = nodes.get(param)
        held = state.value(node.value) if isinstance(node, cst.Name) else None
        if held is None or held.kind is not ValueKind.CONTAINER or held.identity is not None:
            continue
        element = items if held.element is None else held.element.join(items)
        state = state.bind(node.value, replace(held, element=element, target="" if held.target == NO_ITEMS else held.target))
    return state


def _bound_args(params: tuple[str, ...], arguments: Arguments) -> tuple[tuple[str, AbsValue], ...]:
    """The arguments by parameter: positional ones up to a `*args`, keywords by name."""
    names = [p for p in params if p not in ("self", "cls")] if arguments.receiver is not None else list(params)
    starred = [i for i, name in enumerate(names) if name.startswith("*")]
    positional = names[:starred[0]] if starred else names
    bound = {name: value for name, (value, _) in zip(positional, arguments.positional)}
    if starred and names[starred[0]] != "*" and not names[starred[0]].startswith("**"):  # `*args`: a tuple of the rest, each item the caller's
        rest = tuple(value for value, _ in arguments.positional[len(positional):])
        bound[names[starred[0]][1:]] = AbsValue(ValueKind.CONTAINER, positions=rest) if rest else UNKNOWN
    bound.update({name: value for name, (value, _) in arguments.keywords.items()
                  if name in params and not name.startswith("*")})
    return tuple(bound.items())


def _context(arguments: Arguments, state: State, frame: Frame) -> CallContext:
    """What this call tells the callee of its arguments (kind, memory, stream) and of the current stream."""
    keyed = [(str(i), given) for i, given in enumerate(arguments.positional)] + list(arguments.keywords.items())
    facts = tuple((key, _fact(value, state)) for key, (value, _) in keyed)
    receiver = _receiver_fact(arguments.receiver, state) if arguments.receiver is not None else None
    entered = tuple(f for f in LEGACY_BY_DEFAULT if state.current_stream(f).kind is not StreamRefKind.LEGACY)
    handed_on = [key for key, (value, _) in keyed if _work_stream_of(value)]
    complete = isinstance(arguments.node, cst.Call) and not any(a.star for a in arguments.node.args)
    sometimes = frame.guards_at(arguments.node) > 0
    hot = frame.context.hot if not sometimes else ""  # (on every call of a hot entry: hot too)
    now_and_then = sometimes and frame.numbering.periodic > 0  # (not a configuration's test: `if __name__ == "__main__":`)
    return CallContext(facts, receiver, hot, chosen=frame.chosen_stream(state), entered=tuple(sorted(entered)),
                       cold=frame.context.cold or _cold_entry(frame),
                       work_stream=handed_on[0] if len(handed_on) == 1 else "", complete=complete,
                       now_and_then=now_and_then)


def _cold_entry(frame: Frame) -> str:
    """The cold entry the walked function is (asked once per function: a fact of its name and class)."""
    return frame.numbering.once("cold_entry", lambda: frame.program.cold_entry(frame.qualname) if frame.program else "")


def _work_stream_of(value: AbsValue) -> bool:
    """A work stream the callers hand this function, handed on (CallContext.work_stream)."""
    ref = value.stream
    return (value.kind is ValueKind.STREAM and ref is not None and ref.kind is StreamRefKind.PATH and ref.fresh
            and ref.path is not None and ref.path.root.kind is RootKind.PARAM and not ref.path.steps)


def _fact(value: AbsValue, state: State) -> AbsValue:
    """What a callee may know of an argument whoever passes it: its kind and memory, never the caller's
    identities (a side stream other than the current one is a fact: SIDE_STREAM_FACT)."""
    ref = value.stream
    side = value.kind is ValueKind.STREAM and ref is not None and not ref.blocking and ref.fresh \
        and ref.distinct_from(state.current_stream(ref.framework or "torch"))
    element = _fact(value.element, state) if value.kind is ValueKind.CONTAINER and value.element is not None else None
    target = "" if value.target == SEQUENCE else value.target  # (the caller's own annotation: the callee reads its own)
    told = AbsValue(value.kind, value.framework, value.memory, None, SIDE_STREAM_FACT if side else None,
                    value.may_be_none, element, target, loader_batch=value.loader_batch)
    if value.kind in (ValueKind.CALLABLE, ValueKind.OBJECT) and value.keys:  # (a closure's cells, an object's fields)
        told = replace(told, positions=tuple(_fact(v, state) for v in value.positions), keys=value.keys)
    elif value.kind is ValueKind.CONTAINER and value.positions \
            and any(v.kind is not ValueKind.HOST_NUMBER for v in value.positions):
        # a tuple whose items the text shows, handed on (`run(args, fn)`): each item's facts (not a shape's numbers);
        # a dict written out, each key's
        told = replace(told, positions=tuple(_fact(v, state) for v in value.positions), keys=value.keys)
    elif not value.positions:
        keyed = told_keys(value, state)
        if keyed:  # (a batch whose items the caller stored under keys written out: `batch["img"] = img.cuda()`)
            told = replace(told, keys=tuple(k for k, _ in keyed), positions=tuple(_fact(v, state) for _, v in keyed))
    return told


def _receiver_fact(receiver: AbsValue, state: State) -> AbsValue:
    """The receiver's facts, with what the caller's heap holds in the fields of an object it made or was handed
    (`loop = TrainLoop(model=model)` after `model.to(dev)`: `loop.model` is a module on the device). The callee's class
    composition takes a field from here where its own stores leave it untold (the project's own call sites are
    evidence, D-16). `self`'s own too: a method entered with its caller's fields hands them on to the methods it
    calls."""
    told = _fact(receiver, state)
    identity = receiver.identity
    if receiver.kind is not ValueKind.OBJECT or identity is None or told.keys:
        return told
    depth = len(identity.steps) + 1
    fields = sorted((path.steps[-1], held) for path, held in state.heap
                    if path.root == identity.root and len(path.steps) == depth and path.steps[:-1] == identity.steps
                    and isinstance(path.steps[-1], str) and _informative(held))
    if not fields:
        return told
    return replace(told, keys=tuple(k for k, _ in fields), positions=tuple(_fact(v, state) for _, v in fields))


def _informative(value: AbsValue) -> bool:
    """A field value that says where memory lives: a module or buffer on a told memory, a container of such."""
    if value.kind is ValueKind.CONTAINER:
        return value.element is not None and _informative(value.element)
    return value.kind in (ValueKind.OBJECT, ValueKind.BUFFER) and value.memory is not Memory.UNKNOWN


def told_keys(value: AbsValue, state: State) -> list:
    """What the code stored under keys written out in the object a value is, by key (none unless something was
    stored under a key: every store leaves the object's weak slot)."""
    identity = value.identity
    if identity is None or value.kind not in _KEYED_KINDS or state.stored(identity.element(Index.any_())) is None:
        return []
    depth = len(identity.steps) + 1
    return sorted(((path.steps[-1].const, held) for path, held in state.heap
                   if path.root == identity.root and len(path.steps) == depth and path.steps[:-1] == identity.steps
                   and isinstance(path.steps[-1], Index) and path.steps[-1].kind is IndexKind.CONST
                   # (a tensor's item is its memory; no tensor takes a string key: a batch's mapping does)
                   and (isinstance(path.steps[-1].const, str) or not value.is_buffer)
                   and (held.kind is not ValueKind.UNKNOWN or held.either)), key=lambda item: str(item[0]))


# The kinds of value a caller may have stored items in by key: a dict, a batch, a value of kind not told.
_KEYED_KINDS = frozenset({ValueKind.CONTAINER, ValueKind.BUFFER, ValueKind.UNKNOWN})


def cells_of(callee: AbsValue) -> tuple[tuple[str, AbsValue], ...]:
    """A closure's cells, keyed `cell:<name>` (D-21)."""
    if callee.kind is not ValueKind.CALLABLE or not callee.keys or len(callee.keys) != len(callee.positions):
        return ()
    return tuple((CELL + name, value) for name, value in zip(callee.keys, callee.positions))


def _opaque(arguments: Arguments, state: State, frame: Frame, direct: bool = False,
            callee: Optional[str] = None) -> Handled:
    """An unknown callable: on CUDA tensors it runs on the current stream (the invariant), or on a given stream.
    `callee`: its name where a declared model could name it ("" unnamed; None: a model's or a builtin's call)."""
    if callee is not None:
        _unseen_call(callee, arguments, state, frame)
    tensors = _buffers_given(arguments, state)
    if arguments.receiver is not None and arguments.receiver.is_buffer:
        tensors.append(arguments.receiver)
    given = next((v for v in arguments.values() if v.kind is ValueKind.STREAM), None)
    if given is not None:  # (`f(x, stream=s)`: it reads the device arrays it is given; what it writes is not told)
        stream = fact_calls.stream_of_value(given)
        # (a tensor of a device not told, handed to work queued on a stream, is device memory there)
        on_stream = [placed(v) if v.framework == "torch" else v for v in tensors]
        return UNKNOWN, device_reads(state, frame, frame.site(arguments.node), on_stream, stream) if stream.known else state
    frameworks = ("torch", "cupy", "") if direct else ("torch", "")  # a function passed in runs where it is called
    if any(v.framework in frameworks for v in tensors):
        out = arguments.value(Arg(kw="out"))  # PyTorch's `out=`: the result is written there
        written = out if out is not None and out.is_buffer else None
        return torch_calls.run_operation(tensors, written, False, arguments, state, frame)
    if direct and frame.chosen_stream(state):
        # a model called under a stream the code chose runs there, whatever memory it reads (PyTorch's
        # invariant): its kernels are queued on that stream, though what they touch is unknown
        current = state.current_stream("torch")
        state = kernel(state, frame, frame.site(arguments.node), "torch.operation", current, "torch")
    return UNKNOWN, state


def _unseen_call(callee: str, arguments: Arguments, state: State, frame: Frame) -> None:
    """A call nothing resolves, given GPU data or a stream: noted for `readings/untold.py` (no finding). A framework's
    function without a row is no such call (PyTorch's invariant says where it runs); a stream's method is on a
    stream not identified."""
    given = [v for v in [arguments.receiver, *arguments.values()] if v is not None]
    given += [v.element for v in given if v.kind is ValueKind.CONTAINER and v.element is not None]
    site = frame.site(arguments.node)
    stream = next((v for v in given if v.kind is ValueKind.STREAM), None)
    if (stream is not None and not fact_calls.stream_of_value(stream).known) \
            or callee[len(METHOD):] in torch_api.STREAM_ONLY_METHODS and callee.startswith(METHOD):
        frame.unseen(site, "stream")
    elif api.framework_of(callee) is None and any(
            v.kind in (ValueKind.STREAM, ValueKind.EVENT) or (v.is_buffer and not is_host(v)) for v in given):
        frame.unseen(site, "opaque", None, callee)


def _buffers_given(arguments: Arguments, state: Optional[State] = None) -> list[AbsValue]:
    """The buffers a call is given, and the items of a list or tuple of buffers (`torch.cat([a, b])`); of a container
    whose items are CUDA tensors on some paths of its filling and untold on others (a batch's dict moved key by key,
    other entries passed through), those CUDA tensors: the container holds every path's items at once. With the
    caller's `state`: the tensors stored under keys written out in a mapping given (`batch["img"] = img.cuda()`), in
    place of the loader's batch they were moved out of."""
    found = []
    for value in arguments.values():
        keyed = [item for _, item in told_keys(value, state) if item.is_buffer] if state is not None else []
        if keyed:
            found.extend(keyed)
            if value.is_buffer:
                continue  # (a string key shows it a mapping: the tensor it was taken for is not handed)
        if value.is_buffer:
            found.append(value)
        elif value.kind is ValueKind.CONTAINER and value.element is not None and value.element.is_buffer:
            item = value.element
            found.extend(replace(item, identity=member) for member in sorted(value.members, key=repr))
        elif value.kind is ValueKind.CONTAINER and value.element is not None and not value.positions:
            # (not a tuple written out: which of its items a raw kernel writes, the text does not say)
            found.extend(v for v in value.element.either if is_device(v))
    return found


def _in_this_loop(effect: Effect, frame: Frame, guards: int) -> Effect:
    """A callee's operation runs in a loop when the call does, and only sometimes when the call does."""
    operation = effect.operation
    if operation is None:
        return effect
    in_loop, conditional = operation.in_loop or frame.loop_depth > 0, operation.conditional or guards > 0
    if (in_loop, conditional, operation.in_loop) == (operation.in_loop, operation.conditional, effect.inner_loop):
        return effect
    return replace(effect, operation=replace(operation, in_loop=in_loop, conditional=conditional),
                   inner_loop=operation.in_loop)


def _note_parameter(frame: Frame, value: AbsValue, by_method: bool = False) -> None:
    """A parameter (or `self.x`, shown by a method of one kind of tensor) shown by its use to be a tensor."""
    identity = value.identity
    if identity is None:
        return
    tag = {Memory.DEVICE: Evidence.CUDA_BUFFER, Memory.PAGEABLE: Evidence.HOST_BUFFER}.get(value.memory, Evidence.TENSOR)
    if identity.root.kind is RootKind.PARAM and not identity.steps:
        frame.note(identity.root.name, tag)
    elif by_method and identity.root.kind is RootKind.SELF and len(identity.steps) == 1 and isinstance(identity.steps[0], str):
        frame.note(f"{Evidence.SELF}{identity.steps[0]}", tag)
