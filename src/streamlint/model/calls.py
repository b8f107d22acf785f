"""The walker's calls: table facts, framework fallbacks, methods, launches, helpers."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Optional

import libcst as cst

from streamlint.model import api, declared, evidence, host_numbers, peers
from streamlint.model.api import cuda_python, interop, mpi, nccl, numpy_api, python_std, torch_api, torch_modules
from streamlint.model.api import cupy as cupy_api
from streamlint.model.api.mpi import Role
from streamlint.model.api.facts import (
    BLOCK_ALWAYS,
    BLOCK_FLAG,
    BLOCK_UNLESS_STREAM,
    STREAM_ARG,
    STREAM_ARG_OR_BOUND,
    STREAM_ARG_OR_CURRENT,
    STREAM_CURRENT,
    STREAM_LEGACY,
    STREAM_SELF,
    Arg,
    Fact,
)
from streamlint.model.hazards import ANY, DEVICE, HOSTMEM, UNSURE, Access
from streamlint.model.library import LibraryMixin, Optimizer
from streamlint.model.ops import (
    DEVICE_WORK,
    GpuOp,
    OpKind,
)
from streamlint.model.values import (
    UNKNOWN,
    Buffer,
    Const,
    Device,
    DictOf,
    Event,
    Graph,
    HostOrDevice,
    Instance,
    Kernel,
    Launch,
    Loader,
    LocalFunction,
    Mem,
    QualRef,
    Seq,
    Stream,
    StreamContext,
    StreamKind,
    TorchModule,
    Value,
    join,
    legacy_stream,
)
from streamlint.model.walk_common import (
    _BUILTIN_SYNCS,
    _EVENT_TIMERS,
    _MEMORY_STATS,
    _WAITS_ON_USER,
    LOOP_INTERACTIVE,
    _CAPTURE_BEGIN,
    _CAPTURE_END,
    _CONTAINER_STORES,
    _GRAPH_LAUNCHES,
    _TIMERS,
    _UNKNOWN_STREAM_METHODS,
    CURRENT_FRAMEWORKS,
    LOCAL,
    Args,
    _AutoSync,
    _Batch,
    _blocks,
    _Capture,
    _const_bool,
    _direction,
    _is_cpu_target,
    _is_cuda_target,
    _Pinned,
)

if TYPE_CHECKING:
    pass

# Frameworks that keep a per-thread current stream.


class CallsMixin(LibraryMixin):
    """Methods of Walker that evaluate calls."""

    def call(self, node: cst.Call, label: str = "") -> Value:
        func = node.func
        if self.peer_values and isinstance(func, cst.Name) and func.value == "getattr":
            held = self.peer_attr(node)
            if held is not None:
                return held
        if isinstance(func, cst.Attribute) and func.attr.value == "resize_" and self.storage_release(node):
            return UNKNOWN
        if isinstance(func, cst.Attribute) and func.attr.value == "__setattr__":
            named = _setattr_on_self(node, self.state.vars.get("self"))
            if named is not None:
                # `super().__setattr__("x", v)` (a class that overrides `__setattr__`) and
                # `object.__setattr__(self, "x", v)` set `self.x` as `self.x = v` does.
                self.bind_self_attr(f"self.{named[0]}", self.eval_arg(named[1]))
                return UNKNOWN
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            # (the method decides what it reads; a copy also sees a tensor CUDA on some paths only)
            receiver = self.eval_arg(func.value, raw=method in torch_api.DEVICE_MOVES)
            step = torch_modules.TRAINING_STEP_CALLS.get(method)
            if step is not None and not isinstance(receiver, QualRef):
                self.mark_loops(step)  # `loss.backward()`, `optimizer.step()`: not `debug_api.step()`
            if method in torch_modules.HOOK_REGISTRATIONS:
                self.note_hook(node)
            if isinstance(receiver, QualRef):
                static = self.static_method(receiver, method)
                if static is not None:
                    return self.an.call_local(static, node, self.eval_args(node), self)
                if receiver.qualname.startswith(LOCAL) and method in _UNKNOWN_STREAM_METHODS:
                    # `Cls.stream.wait_stream(...)`: a class attribute we do not follow; a
                    # wait on something we cannot see still orders (stay silent).
                    return self.unknown_receiver_method(method, node)
                qualname = api.normalize(f"{receiver.qualname}.{method}")
                return self.call_qualified(qualname, node, label)
            return self.call_method(receiver, method, node, label)
        callee = self.eval(func)
        if isinstance(callee, QualRef):
            return self.call_qualified(callee.qualname, node, label)
        if isinstance(callee, Launch):
            return self.numba_launch(callee, node)
        if isinstance(callee, Kernel) and callee.framework == "cupy":
            return self.cupy_kernel_call(callee, node)
        if isinstance(callee, Kernel) and callee.framework == "numba" and len(node.args) == 1:
            # cuda.jit("void(float32[:])")(fn): the decorator applied to a function
            target = self.eval(node.args[0].value)
            if isinstance(target, LocalFunction):
                return Kernel("numba", target.name, node=target.node, site=target.site)
            # A function we cannot see: still a kernel (its body unknown: arguments written).
            return Kernel("numba", self.code(node.args[0].value))
        if isinstance(callee, LocalFunction):
            args = self.eval_args(node)
            return self.an.call_local(callee, node, args, self)
        if isinstance(callee, TorchModule) or (isinstance(callee, Instance) and self.an.is_torch_module_class(callee.cls)):
            return self.module_call(node)
        if isinstance(func, cst.Name) and not self.is_bound(func.value):
            if func.value in _WAITS_ON_USER:
                self.mark_loops(LOOP_INTERACTIVE)
            return self.builtin(func.value, node)
        return self.opaque_call(node, self.eval_args(node))

    def note_hook(self, node: cst.Call) -> None:
        """`x.register_hook(fn)`, also through `functools.partial(fn, ...)`: a function of
        this file that PyTorch calls on every step (a hot entry, analysis.mark_hot_helpers)."""
        given = next((a.value for a in node.args if a.keyword is None or a.keyword.value == "hook"), None)
        if isinstance(given, cst.Call) and self.code(given.func).split(".")[-1] == "partial" and given.args:
            given = given.args[0].value
        target = self.eval(given) if given is not None else None
        if isinstance(given, cst.Attribute) and not isinstance(target, LocalFunction):
            owner = self.eval(given.value)  # `self._on_grad`: a method of the instance's class
            if isinstance(owner, Instance):
                target = self.an.method_of(owner.cls, given.attr.value)
        if isinstance(target, LocalFunction) and (target.home is None or target.home is self.an):
            self.an.hooks.add(target.site)

    def mark_loops(self, kind: str) -> None:
        for loop in self.loop_stack:
            self.record.loops[loop].marks.add(kind)

    def static_method(self, receiver: QualRef, method: str) -> Optional[LocalFunction]:
        """`Handler.reload(...)`: a `@staticmethod` of a class of this file, called through it."""
        if not receiver.qualname.startswith(LOCAL):
            return None
        function = self.an.method_of(receiver.qualname[len(LOCAL):], method)
        if function is None or not any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
                                        for d in function.node.decorators):
            return None
        return function

    def opaque_call(self, node: cst.Call, args: "Args") -> Value:
        """A callable we cannot see (a model, a loss, a submodule passed in).

        PyTorch's invariant: called with a CUDA tensor, it runs on the current stream,
        reads its tensor arguments and returns CUDA tensors made there. Under a side
        stream the code plainly means GPU work, whatever the arguments show."""
        tensors = [v for v in self.flat_values(args) if isinstance(v, Buffer) and v.framework == "torch"]
        arrays = [v for v in self.flat_values(args) if isinstance(v, Buffer) and v.framework == "cupy"
                  and v.mem is Mem.DEVICE]
        if arrays and not any(t.mem is Mem.DEVICE for t in tensors):
            # The same invariant for CuPy: work on CuPy arrays runs on the current stream.
            result = Buffer("cupy", Mem.DEVICE, site=self.site(node), opaque=True)
            accesses = self.accesses([(e, v) for e, v in self.flat_pairs(args) if v in arrays])
            accesses += self.result_access(result, node)
            self.emit(OpKind.KERNEL, self.code(node.func), node, "cupy", stream=self.state.current["cupy"],
                      reads=tuple(arrays), writes=(result,), accesses=accesses, result=result)
            return result
        if any(t.mem is Mem.DEVICE for t in tensors) or (
            self.on_side_stream("torch") and self.an.torch_imported and args.positional
            and any(not isinstance(v, Const) for v in args.all())
        ):
            # (`opaque`: made by a call we cannot see; a predicate may return a bool instead)
            result = Buffer("torch", Mem.DEVICE, site=self.site(node), opaque=True)
            accesses = self.accesses(self.tensor_pairs(args)) + self.module_reads(node) + self.result_access(result, node)
            self.emit(OpKind.KERNEL, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                      reads=tuple(tensors), writes=(result,), accesses=accesses, result=result)
            return result
        if not self.stream_given_call(node, args):
            self.unseen_call_on_side_stream(node, args)
        return UNKNOWN

    def tensor_pairs(self, args: "Args") -> list[tuple]:
        """Arguments that may be tensors: not the keywords that never are (`non_blocking=`,
        `dtype=`, `group=`)."""
        skip = {id(e) for k, e in args.keywords.items() if k in torch_api.NON_TENSOR_KEYWORDS}
        return [(e, v) for e, v in self.flat_pairs(args) if id(e) not in skip]

    @staticmethod
    def flat_values(args: "Args") -> list[Value]:
        out: list[Value] = []
        for value in args.all():
            if isinstance(value, Seq):
                out.extend(value.items or (value.element,))
            else:
                out.append(value)
        return out

    def gpu_relevant(self, args: "Args") -> bool:
        """Is a call into another module worth reading that module for? Only if it is
        given GPU values, or made where streams are in play (reading costs a parse)."""
        if self.an.results_matter and (self.an.results_matter_in is None or id(self.record.node) in self.an.results_matter_in):
            return True
        if self.record.enters_stream or self.record.passes_stream:
            return True
        if any(s.explicit for s in self.state.current.values()):
            return True
        if any(isinstance(v, Instance) and v.home is not None for v in args.all()):
            return True  # an object of a project class that keeps GPU memory (analysis.foreign_instance)
        if mpi.MODULE_ROOT in self.an.imported_roots:
            # A module handing buffers to MPI: a helper may make a device buffer of what it
            # is given (`array_to_buffer_object(array)`, narrowed by a type test).
            return True
        return holds_gpu_values(args)

    def unseen_call_on_side_stream(self, node: cst.Call, args: "Args") -> None:
        """A call we cannot see into, made with arguments under `torch.cuda.stream(s)` /
        `with s:`: the code plainly queues GPU work there. It reads its arguments (on
        which device the caller's values tell) and makes the loop around it a hot path."""
        if not any(not isinstance(v, Const) for v in args.all()):
            return  # logging and the like: nothing GPU-side is passed
        for fw in CURRENT_FRAMEWORKS:
            if self.on_side_stream(fw) and args.positional and (fw != "torch" or self.an.torch_imported):
                pairs = self.flat_pairs(args)
                accesses = self.accesses(pairs, space=UNSURE) + self.output_arguments(pairs)
                self.emit(OpKind.KERNEL, self.code(node.func), node, fw, stream=self.state.current[fw],
                          accesses=accesses)
                return

    def output_arguments(self, pairs: list) -> tuple:
        """Arguments that can only be outputs: parts of device memory this body allocated
        and nothing has written yet (`halo = buf[:, h:h+1]` of a `torch.empty` buffer). A
        call given uninitialized memory fills it; nobody reads it."""
        hb = self.state.hb
        if hb is None:
            return ()
        out = []
        for expr, value in pairs:
            if not (isinstance(value, Buffer) and value.mem is Mem.DEVICE and not value.param and not value.opaque):
                continue
            acc = self.access(expr, value, write=True, space=DEVICE)
            if acc is None or hb.pending_writes(acc.key):
                continue
            made_here = ("b", value.site, "") in hb.allocs if value.site else bool(value.region)
            if made_here:  # (a joined value: only a part of it, the halo rows of a padded buffer)
                out.append(replace(acc, assumed=True))
        return tuple(out)

    def builtin(self, name: str, node: cst.Call) -> Value:
        args = self.eval_args(node)
        first = args.value(Arg(0)) if args.positional else UNKNOWN
        if name in _BUILTIN_SYNCS:
            for expr in args.positional:
                self.builtin_sync(f"{name}()", node, args.values[id(expr)], expr)
            return UNKNOWN
        if name in ("list", "tuple", "iter", "reversed", "sorted"):
            if isinstance(first, Buffer) and first.mem is Mem.DEVICE and first.framework == "torch":
                return Seq(element=self.element_of(first))  # `list(t.split(sizes))`: device views
            return first if isinstance(first, (Seq, Loader, _Batch)) else UNKNOWN
        if name == "dict" and not args.positional and not args.spread and \
                all(isinstance(args.values.get(id(e)), Const) for e in args.keywords.values()):
            # `dict(non_blocking=True)`: keyword arguments, for a call's `**kwargs`.
            result: Value = DictOf(empty=True)
            for expr in args.keywords.values():
                result = result.stored(args.values[id(expr)]) if isinstance(result, DictOf) else UNKNOWN
            keys = tuple((k, args.values[id(e)]) for k, e in args.keywords.items())
            return replace(result, keys=keys) if isinstance(result, DictOf) else UNKNOWN
        if name == "next":
            return self.element_of(first)
        if name == "enumerate":
            return Seq(element=Seq(items=(UNKNOWN, self.element_of(first))))
        if name == "zip":
            return Seq(element=Seq(items=tuple(self.element_of(args.values[id(e)]) for e in args.positional)))
        self.stream_given_call(node, args)  # a function of no module we know, given a stream
        return UNKNOWN

    def builtin_sync(self, what: str, node: cst.CSTNode, value: Value, expr: Optional[cst.BaseExpression] = None) -> None:
        if self.state.hb is not None and expr is not None:
            self.host_touch(expr, value, write=False)
        if isinstance(value, Buffer) and value.mem is Mem.DEVICE and value.framework in ("torch", "cupy"):
            self.emit(OpKind.IMPLICIT_SYNC, what, node, value.framework,
                      stream=self.state.current.get(value.framework), receiver=value, host_blocking=True)

    def call_qualified(self, qualname: str, node: cst.Call, label: str) -> Value:
        if qualname in _WAITS_ON_USER:
            self.mark_loops(LOOP_INTERACTIVE)
        elif qualname in torch_modules.TRAINING_STEP_FUNCTIONS:
            self.mark_loops(torch_modules.TRAINING_STEP_FUNCTIONS[qualname])
        if qualname in _TIMERS or qualname in _EVENT_TIMERS:
            self.record.measures = True
            for loop in self.loop_stack:
                self.record.loops[loop].timed = True
        elif qualname in _MEMORY_STATS:
            self.record.measures = True
        if qualname == "numba.cuda.pinned":
            self.eval_args(node)
            return _Pinned(tuple(a.value.value for a in node.args if isinstance(a.value, cst.Name)))
        if qualname.startswith(mpi.MODULE_ROOT + ".") and qualname.rsplit(".", 1)[-1] in mpi.COMM_METHODS:
            return self.mpi_call(qualname.rsplit(".", 1)[-1], node, self.eval_args(node))
        models = declared.active()
        namespace = models.namespaces.get(qualname)
        if namespace is not None:
            self.eval_args(node)
            return QualRef(namespace)
        fact = models.facts.get(qualname) or api.lookup(qualname)
        if fact is None and qualname in models.classes:
            self.eval_args(node)
            return QualRef(qualname + "()")  # an instance of a class with declared methods
        if qualname in interop.POINTER_LIBRARY_CLASSES:
            self.eval_args(node)
            return QualRef(qualname + "()")
        same = python_std.IDENTITY_CALLS.get(qualname)
        if same is not None:
            return self.eval_args(node).value(same)
        pointer = interop.POINTER_WRAPPERS.get(qualname)
        if pointer is not None:
            wrapped = self.eval_args(node).value(pointer)
            return wrapped if isinstance(wrapped, Buffer) and wrapped.mem is Mem.DEVICE else UNKNOWN
        memory = interop.MEMORY_VIEWS.get(qualname)
        if memory is not None and _passes(node, memory):
            held = self.eval_args(node).value(memory)
            if isinstance(held, Buffer) and held.mem is Mem.DEVICE:
                return replace(held, framework=api.framework_of(qualname) or held.framework)
            return UNKNOWN
        view = interop.VIEWS.get(qualname)
        if view is not None:
            return self.buffer_view(view, node, self.eval_args(node))
        if self.optimizer_class(qualname):
            return self.make_optimizer(node, self.eval_args(node))
        if fact is not None:
            return self.apply(fact, self.code(node.func), node, self.eval_args(node), label=label)
        if qualname.startswith(LOCAL):
            self.eval_args(node)
            return self.an.instantiate(qualname[len(LOCAL):])
        device_wanted = _names_a_device(label)
        if api.framework_of(qualname) is None and not qualname.startswith("numpy.") and not device_wanted \
                and not self.an.follow_imports and self.an.torch_imported and _spells_host_device(node):
            # `move_to(x, "cpu")`: a project helper given the host as the destination may
            # hand back a copy still in flight (read even where imports are not followed).
            args = self.eval_args(node)
            if any(_is_cpu_target(v) for v in args.all()) and self.an.may_copy_to_host(qualname):
                foreign = self.an.foreign(qualname, wanted=True)
                if isinstance(foreign, LocalFunction):
                    return self.an.call_local(foreign, node, args, self)
            self.stream_given_call(node, args)
            return UNKNOWN
        if api.framework_of(qualname) is None and not qualname.startswith("numpy.") and (
                self.an.follow_imports or device_wanted):
            args = self.eval_args(node)
            if qualname.rsplit(".", 1)[-1][:1].isupper():
                # `_memory_utility.DeviceMemory()`: an instance of a project class, whose
                # methods' summaries apply to it.
                instance = self.an.foreign_instance(qualname, holds_gpu_values(args))
                if instance is not UNKNOWN:
                    return instance
            if device_wanted or self.gpu_relevant(args):
                foreign = self.an.foreign(qualname, wanted=device_wanted)
                if isinstance(foreign, LocalFunction):
                    return self.an.call_local(foreign, node, args, self)
            self.stream_given_call(node, args)
            return UNKNOWN
        root = qualname.split(".", 1)[0]
        last = qualname.rsplit(".", 1)[-1]
        if root in ("cupy", "cupyx", "numba", "cuda") and last[:1].isupper() and not qualname.startswith("cupy.random."):
            self.eval_args(node)
            return QualRef(qualname + "()")  # an instance of a framework class (`cp.cuda.Device(0)`)
        if root in ("cupy", "cupyx"):
            return self.cupy_function(qualname, node)
        if root == "torch":
            return self.torch_function(qualname, node)
        if root == "numpy":
            return self.numpy_function(qualname, node)
        args = self.eval_args(node)
        if api.framework_of(qualname) and qualname.rsplit(".", 1)[-1][:1].isupper():
            return QualRef(qualname + "()")  # an instance of a framework class
        self.stream_given_call(node, args)
        return UNKNOWN

    # --- framework fallbacks for calls no table entry names
    def cupy_function(self, qualname: str, node: cst.Call) -> Value:
        args = self.eval_args(node)
        name = qualname.rsplit(".", 1)[-1]
        stream = self.state.current["cupy"]
        if name in cupy_api.NON_KERNEL_FUNCTIONS:
            return UNKNOWN  # host-side helpers and predicates: no device work
        if name in cupy_api.FILLING_CREATORS or qualname.startswith("cupy.random."):
            result = Buffer("cupy", Mem.DEVICE, site=self.site(node))
            self.emit(OpKind.KERNEL, self.code(node.func), node, "cupy", stream=stream, writes=(result,),
                      accesses=self.result_access(result, node))
            return result
        arrays = tuple(v for v in args.all() if isinstance(v, Buffer) and v.framework == "cupy" and v.mem is Mem.DEVICE)
        if not arrays and not self.cupy_kernel_function(qualname, args):
            return UNKNOWN
        out_expr = args.keywords.get("out")
        if name in cupy_api.DESTINATION_FIRST and args.positional:
            out_expr = args.positional[0]  # `cp.copyto(dst, src)`: dst is written, not read
        out = args.value(Arg(kw="out")) if out_expr is args.keywords.get("out") else args.value(Arg(0))
        # `cp.ceil(n / 32)` of numbers the host has: a device scalar made from them alone.
        from_host = not arrays and out is UNKNOWN and self.host_numbers_only(node)
        result = out if isinstance(out, Buffer) else Buffer("cupy", Mem.DEVICE, site=self.site(node), literal=from_host)
        reads = self.accesses((e, v) for e, v in args.pairs() if e is not out_expr)
        writes = self.accesses([(out_expr, out)], write=True) if out_expr is not None else self.result_access(result, node)
        if name in cupy_api.DESTINATION_FIRST:
            arrays = tuple(v for e, v in args.pairs() if e is not out_expr and v in arrays)
        self.emit(OpKind.KERNEL, self.code(node.func), node, "cupy", stream=stream, reads=arrays, writes=(result,),
                  accesses=reads + writes)
        return result

    def host_numbers_only(self, node: cst.Call) -> bool:
        """Are all the call's arguments numbers the host computed (host_numbers.py)?"""
        if not node.args or any(a.keyword is not None or a.star for a in node.args):
            return False
        if self.host_number_names is None:
            self.host_number_names = host_numbers.known_numbers(self.record.node)
        return all(host_numbers.is_number(a.value, self.host_number_names) for a in node.args)

    @staticmethod
    def cupy_kernel_function(qualname: str, args: "Args") -> bool:
        """`cp.sqrt(x)` launches a kernel whatever `x` is (CuPy refuses host arrays);
        namespaces and helpers that compute nothing on the device are excluded."""
        module, _, name = qualname.rpartition(".")
        if module not in cupy_api.KERNEL_NAMESPACES or name in cupy_api.NON_KERNEL_FUNCTIONS:
            return False
        return bool(args.positional) and not all(isinstance(v, Const) for v in args.all())

    def torch_function(self, qualname: str, node: cst.Call) -> Value:
        args = self.eval_args(node)
        parts = qualname.split(".")
        name = parts[-1]
        if qualname in torch_api.SAME_DATA_WRAPPERS:
            data = args.value(Arg(0))
            return data if isinstance(data, Buffer) else UNKNOWN  # `nn.Parameter(w.cuda())`: w's memory
        if qualname.startswith("torch.nn.") and name[:1].isupper():
            return TorchModule(site=self.site(node))
        if len(parts) == 2 and name in torch_api.CREATORS:
            return self.torch_creation(name, node, args)
        if len(parts) == 2 and name in torch_api.LIKE_CREATORS:
            base = args.value(Arg(0))
            device = args.value(Arg(kw="device"))
            if _is_cuda_target(device) or (isinstance(base, Buffer) and base.mem is Mem.DEVICE and device is UNKNOWN and "device" not in args.keywords):
                return self.torch_creation(name, node, args, force_cuda=True)
            if isinstance(base, Buffer) and "device" not in args.keywords:
                return Buffer("torch", Mem.PAGEABLE if base.mem is not Mem.DEVICE else Mem.DEVICE, site=self.site(node))
            return UNKNOWN
        written = torch_api.COLLECTIVES.get(qualname)
        if written is not None:
            return self.collective(qualname, node, args, written)
        if len(parts) == 2 and name.startswith("_foreach_"):
            return self.foreach(qualname, node, args)
        if name in torch_api.NON_TENSOR_FUNCTIONS or not (self.torch_kernel_namespace(qualname) or len(parts) == 2):
            return UNKNOWN
        tensors = [v for v in args.all() if isinstance(v, Buffer) and v.framework == "torch"]
        for value in args.all():
            if isinstance(value, Seq):
                tensors.extend(v for v in (value.items or (value.element,)) if isinstance(v, Buffer) and v.framework == "torch")
        unsure = not tensors and bool(args.positional) and not all(isinstance(v, Const) for v in args.all())
        if unsure and not self.on_side_stream("torch") and self.state.hb is None:
            unsure = False  # outside a side stream only the hazard walk needs these
        if any(t.mem is Mem.DEVICE for t in tensors) or unsure:
            out = args.value(Arg(kw="out"))
            result = out if isinstance(out, Buffer) else Buffer("torch", Mem.DEVICE, site=self.site(node))
            out_expr = args.keywords.get("out")
            # On tensors we cannot see, the device is the caller's business (UNSURE maps
            # to the caller's arguments), except under a side stream, where GPU work is meant.
            space = UNSURE if unsure and not self.on_side_stream("torch") else ANY
            reads = self.accesses(self.flat_pairs(args, skip=out_expr), space=space)
            writes = self.accesses([(out_expr, out)], write=True, space=space) if out_expr is not None else self.result_access(result, node)
            self.emit(OpKind.KERNEL, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                      reads=tuple(tensors), writes=(result,), accesses=reads + writes, result=result)
            return result
        if tensors and all(t.mem in (Mem.PAGEABLE, Mem.PINNED) for t in tensors):
            return Buffer("torch", Mem.PAGEABLE, site=self.site(node))
        return UNKNOWN

    def collective(self, qualname: str, node: cst.Call, args: "Args", written: tuple[int, ...]) -> Value:
        """A torch.distributed collective: queued after the current stream's work (NCCL
        orders it there), it reads its tensor arguments and writes its outputs."""
        tensor_args = evidence.COLLECTIVE_TENSOR_ARGS.get(qualname.rsplit(".", 1)[-1], (0,) + tuple(written))
        pairs = [(e, args.values.get(id(e), UNKNOWN)) for i, e in enumerate(args.positional) if i in tensor_args]
        if not pairs or all(isinstance(v, Const) for _, v in pairs):
            return UNKNOWN
        accesses = self.accesses(pairs, space=DEVICE)
        accesses += self.accesses([(e, args.values.get(id(e), UNKNOWN)) for i, e in enumerate(args.positional)
                                   if i in written], write=True, space=DEVICE)
        stream = self.state.current["torch"]
        self.emit(OpKind.KERNEL, self.code(node.func), node, "torch", stream=stream, accesses=accesses)
        if _const_bool(args.value(Arg(kw="async_op"))):
            # The Work handle: `work.wait()` makes the then-current stream wait for the collective.
            work = Event("torch", "the collective's work", site=self.site(node), recorded_on=stream)
            self.emit(OpKind.EVENT_RECORD, self.code(node.func), node, "torch", stream=stream, event=work)
            return work
        return UNKNOWN

    def shape_rank(self, shape: Optional[cst.BaseExpression]) -> Optional[int]:
        """Dimensions of an array made with this shape argument, when the text shows it."""
        if isinstance(shape, (cst.Tuple, cst.List)):
            return len(shape.elements)
        if isinstance(shape, (cst.Integer, cst.Name, cst.BinaryOperation)):
            return 1
        return None

    def on_side_stream(self, framework: str) -> bool:
        current = self.state.current.get(framework)
        return current is not None and current.explicit

    @staticmethod
    def flat_pairs(args: "Args", skip: Optional[cst.BaseExpression] = None) -> list[tuple]:
        """Argument (expression, value) pairs, list/tuple displays opened up."""
        out = []
        for expr, value in args.pairs():
            if expr is skip:
                continue
            if isinstance(expr, (cst.List, cst.Tuple)) and isinstance(value, Seq) and value.items is not None:
                out.extend(zip((e.value for e in expr.elements), value.items))
            else:
                out.append((expr, value))
        return out

    def torch_creation(self, name: str, node: cst.Call, args: "Args", force_cuda: bool = False) -> Value:
        device = args.value(Arg(kw="device"))
        pinned = args.value(Arg(kw="pin_memory"))
        if name in ("tensor", "as_tensor") and not force_cuda:
            view = self.torch_view_creation(node, args)  # from device memory: a view or a copy
            if view is not None:
                return view
        if force_cuda or _is_cuda_target(device):
            result = Buffer("torch", Mem.DEVICE, site=self.site(node))
            if name in ("tensor", "as_tensor") and not force_cuda and isinstance(args.expr(Arg(0)), (cst.List, cst.Tuple)):
                # `torch.tensor([a, b], device="cuda")`: built on the host, then a blocking
                # copy from pageable memory (API facts §4.3): an upload, not a kernel.
                source = Buffer("torch", Mem.PAGEABLE, site=self.site(node), literal=True)
                self.emit(OpKind.COPY_H2D, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                          host_blocking=True, non_blocking=False, host_buffer=source, reads=(source,),
                          writes=(result,), result=result, accesses=self.result_access(result, node))
                return result
            kind = OpKind.ALLOC if name in torch_api.ALLOCATING_ONLY else OpKind.KERNEL
            self.emit(kind, self.code(node.func), node, "torch", stream=self.state.current["torch"], writes=(result,),
                      result=result, accesses=self.result_access(result, node) if kind is OpKind.KERNEL else ())
            return result
        if "device" in args.keywords and not _is_cpu_target(device):
            return UNKNOWN
        if isinstance(pinned, Const) and pinned.value is True:
            return Buffer("torch", Mem.PINNED, site=self.site(node))
        if "pin_memory" in args.keywords and not isinstance(pinned, Const):
            return UNKNOWN
        if name in ("tensor", "as_tensor"):
            source = args.value(Arg(0))
            if isinstance(source, Buffer) and source.mem is Mem.DEVICE:
                return UNKNOWN
            data = args.expr(Arg(0))
            if isinstance(data, (cst.BaseNumber, cst.List, cst.Tuple)):
                return Buffer("torch", Mem.PAGEABLE, site=self.site(node), literal=True)
        return Buffer("torch", Mem.PAGEABLE, site=self.site(node))

    def numpy_function(self, qualname: str, node: cst.Call) -> Value:
        args = self.eval_args(node)
        name = qualname[len("numpy."):]
        destination = args.positional[0] if name in numpy_api.DESTINATION_FIRST and args.positional else None
        if self.state.hb is not None:
            out_expr = args.keywords.get("out")
            for expr, value in args.pairs():
                write = expr is out_expr or (destination is not None and expr is destination)
                self.host_touch(expr, value, write=write)
        if name in numpy_api.SAME_MEMORY:
            source = args.value(Arg(0))
            if isinstance(source, Buffer) and source.mem in (Mem.PINNED, Mem.PAGEABLE, Mem.MAPPED):
                return Buffer("numpy", source.mem, site=source.site, pinned_by=source.pinned_by)
            if isinstance(source, Buffer):
                if source.framework == "numba" and source.mem is Mem.DEVICE and name in ("asarray", "asanyarray"):
                    return Buffer("numpy", Mem.PAGEABLE, site=self.site(node))
                return UNKNOWN
            return Buffer("numpy", Mem.PAGEABLE, site=self.site(node)) if name in ("asarray", "asanyarray") and isinstance(source, (Seq, Const)) else UNKNOWN
        scalar_below = numpy_api.SCALAR_WITHOUT_SIZE.get(name)
        if scalar_below is not None and "size" not in args.keywords and len(args.positional) <= scalar_below:
            return UNKNOWN  # np.random.randint(500): a Python/NumPy scalar
        if name in numpy_api.PAGEABLE_CREATORS:
            ndim = 1 if name in ("arange", "linspace", "logspace") else self.shape_rank(args.positional[0] if args.positional else None)
            return Buffer("numpy", Mem.PAGEABLE, site=self.site(node), ndim=ndim)
        return UNKNOWN

    # --- method calls on known values
    def call_method(self, receiver: Value, method: str, node: cst.Call, label: str) -> Value:
        if isinstance(receiver, HostOrDevice):
            return self.host_or_device_copy(receiver, method, node)
        label_api = self.code(node.func)
        if method == "elapsed_time":  # CUDA-event timing: a measurement harness
            self.record.measures = True
            for loop in self.loop_stack:
                self.record.loops[loop].timed = True
        if method in _CAPTURE_BEGIN or method in _CAPTURE_END:
            self.eval_args(node)
            # Capture is per stream: ending capture on a stream that is not capturing
            # (it raises) does not end another stream's capture.
            key = self.code(node.func.value)  # type: ignore[attr-defined]
            if method in _CAPTURE_BEGIN:
                self.capturing = self.capturing | {key}
                self.captured = []
                return UNKNOWN
            if key not in self.capturing:
                return UNKNOWN
            self.capturing = self.capturing - {key}
            graph = Graph(tuple(self.captured), site=self.site(node))
            self.captured = []
            return graph
        if isinstance(receiver, Graph) and method in _GRAPH_LAUNCHES:
            return self.launch_graph(receiver, node)
        if method in _CONTAINER_STORES and not isinstance(receiver, (Stream, Event, Buffer)):
            args = self.eval_args(node)
            self.keep(args.all())
            for value in args.all():
                self.escape(value)
            holder = self.code(node.func.value)  # type: ignore[attr-defined]
            if method == "append" and isinstance(receiver, Seq) and holder.startswith("self.") and holder.count(".") == 1 \
                    and len(args.positional) == 1:
                # `self.buffers.append(buf)`: a list kept on `self` holds buffers of this kind.
                self.state.vars[holder] = receiver.appended(args.values.get(id(args.positional[0]), UNKNOWN))
            return UNKNOWN
        if isinstance(receiver, Optimizer):
            return self.optimizer_method(receiver, method, node)
        if isinstance(receiver, Stream):
            if receiver.framework == "numba" and method == "auto_synchronize":
                self.eval_args(node)
                return _AutoSync(receiver)
            fact = api.STREAM_METHODS.get(receiver.framework, {}).get(method)
            if fact is not None:
                return self.apply(fact, label_api, node, self.eval_args(node), receiver=receiver, label=label)
        elif isinstance(receiver, Event):
            fact = api.EVENT_METHODS.get(receiver.framework, {}).get(method)
            if fact is not None:
                return self.apply(fact, label_api, node, self.eval_args(node), receiver=receiver, label=label)
        elif isinstance(receiver, Buffer):
            return self.buffer_method(receiver, method, node, label)
        elif isinstance(receiver, TorchModule):
            self.module_method(method, node, self.eval_args(node))
            return receiver if method in torch_modules.MODULE_RETURNS_SELF else UNKNOWN
        elif isinstance(receiver, Instance):
            owner = receiver.home or self.an
            function = owner.method_of(receiver.cls, method)
            if function is not None:
                if owner is not self.an:
                    function = replace(function, home=owner)  # a class of another module
                args = self.eval_args(node)
                if method in self.an.wanted_methods:
                    self.note_method_call(method, node, args)  # (maybe a class of the hierarchy asked about)
                return self.an.call_local(function, node, args, self)
            if self.an.is_torch_module_class(receiver.cls) and method in torch_modules.MODULE_RETURNS_SELF:
                self.module_method(method, node, self.eval_args(node))
                return receiver
            # Not a method: an attribute holding something callable (`self.conv1(x)`).
            held = self.attribute(node.func) if isinstance(node.func, cst.Attribute) else UNKNOWN
            if isinstance(held, TorchModule) or (isinstance(held, Instance) and self.an.is_torch_module_class(held.cls)):
                return self.module_call(node)
            if isinstance(held, Launch):
                return self.numba_launch(held, node)
            if isinstance(held, Kernel) and held.framework == "cupy":
                return self.cupy_kernel_call(held, node)  # `self.kernel(x, y, stream=s)`
            args = self.eval_args(node)
            if method in self.an.wanted_methods and isinstance(node.func, cst.Attribute) \
                    and isinstance(node.func.value, cst.Name) and node.func.value.value == "self":
                # `self.m(...)`: a method a base class of another module defines (asked
                # about: reverse.method_call_sites).
                self.note_method_call(method, node, args)
            return self.opaque_call(node, args)
        elif isinstance(receiver, Kernel) and receiver.framework == "numba" and method == "forall":
            self.eval_args(node)
            return UNKNOWN
        elif isinstance(receiver, _Batch):
            return self.buffer_method(receiver.batch, method, node, label)
        elif isinstance(receiver, DictOf):
            return self.dict_method(receiver, method, node)
        elif isinstance(receiver, Loader) and method == "__iter__":
            return _Batch(Buffer("torch", Mem.PINNED if receiver.pin_memory else Mem.PAGEABLE, site=receiver.site, loader_site=receiver.site))
        elif receiver is UNKNOWN:
            return self.unknown_receiver_method(method, node)
        self.eval_args(node)
        return UNKNOWN

    def host_or_device_copy(self, receiver: HostOrDevice, method: str, node: cst.Call) -> Value:
        """`(norm if grads else torch.tensor(0.0)).to(total.device)`: on the path where the
        tensor is the one built on the host and the target is CUDA, an upload. The target
        `x.device` of the same tensor is no copy on any path (host on host, CUDA on CUDA)."""
        args = self.eval_args(node)
        target = Const("cuda") if method == "cuda" else args.value(Arg(0, "device"))
        if isinstance(target, Buffer) and target.framework == "torch":
            target = Device(cuda=target.mem is Mem.DEVICE)  # `.to(other)`: other's device
        same = isinstance(target, Device) and target.of == receiver
        if self.an.torch_imported and _is_cuda_target(target) and not same:
            return self.torch_copy(receiver.host, method, node, args=args)
        return self.unknown_receiver_method(method, node, args)

    def method_label(self, func: cst.BaseExpression) -> str:
        """How a message names a method call: `(...).to` for a receiver written over
        several lines (`(a if c else b).to`), else as the code spells it."""
        text = self.code(func)
        if "\n" in text and isinstance(func, cst.Attribute):
            return f"(...).{func.attr.value}"
        return text

    def dict_method(self, receiver: DictOf, method: str, node: cst.Call) -> Value:
        """`batch.items()`, `out.get("loss")`: what a dict of known values gives back."""
        args = self.eval_args(node)
        value = UNKNOWN if receiver.empty else receiver.value
        if method == "items":
            return Seq(element=Seq(items=(UNKNOWN, value)))
        if method == "values":
            return Seq(element=value)
        if method in ("get", "pop"):
            default = args.value(Arg(1, "default"))
            return value if not args.has(Arg(1, "default")) else join(value, default)
        if method == "copy":
            return receiver
        if method == "update":  # what the other dict holds joins what this one did
            other = args.value(Arg(0, "other"))
            self.rebind_dict(node.func.value, join(receiver, other) if isinstance(other, DictOf) else UNKNOWN)  # type: ignore[attr-defined]
        return UNKNOWN

    def launch_graph(self, graph: Graph, node: cst.Call) -> Value:
        """`g.launch(stream)`, `g.replay()`: the captured work runs again, on the stream it
        is launched on (given, else the current one), reading and writing what it did."""
        args = self.eval_args(node)
        fw = graph.ops[0].framework if graph.ops else None
        if fw is None or self.state.hb is None:
            return UNKNOWN
        stream_expr, stream_value = args.pair(Arg(0, "stream"))
        stream = self.stream_from(stream_value, stream_expr, fw) if stream_expr is not None else self.state.current.get(fw)
        for op in graph.ops:
            if op.kind in DEVICE_WORK:
                self.order(replace(op, stream=stream, node=node))  # reported at the launch
        return UNKNOWN

    def note_method_call(self, method: str, node: cst.Call, args: "Args") -> None:
        """What a call of a method asked about hands it (reverse.method_call_sites)."""
        if self.state.hb is None:
            starred = any(a.star for a in node.args)
            self.an.method_calls_out.setdefault(method, []).append(None if starred else args)
            receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
            if _is_super(receiver) and self.record.class_name:
                # `super().m(...)`: the method of a base class of the caller's class (typed:
                # reverse.super_call_sites takes it without duck typing).
                self.an.super_calls_out.setdefault(method, []).append(
                    (self.record.class_name, None if starred else args))

    def hands_peer(self, args: "Args") -> bool:
        held = {v.site for v in self.peer_values.values()}
        return any(isinstance(v, Buffer) and v.site in held for v in self.flat_values(args))

    def peer_attr(self, node: cst.Call) -> Optional[Value]:
        """`getattr(holder, "name", default)`: the holder attribute, when the walk binds it
        (peers.py); its default is evaluated too."""
        if len(node.args) not in (2, 3) or any(a.keyword is not None or a.star for a in node.args):
            return None
        name = node.args[1].value
        base = peers.dotted(node.args[0].value)
        if base is None or not isinstance(name, cst.SimpleString):
            return None
        held = self.peer_values.get(f"{base}.{name.evaluated_value}")
        if held is not None and len(node.args) == 3:
            self.eval(node.args[2].value)
        return held

    def unknown_receiver_method(self, method: str, node: cst.Call, args: Optional["Args"] = None) -> Value:
        """Methods whose name alone tells the result kind, whatever the receiver."""
        args = args if args is not None else self.eval_args(node)
        if method in self.an.wanted_methods:
            self.note_method_call(method, node, args)
        if method in ("item", "tolist") and isinstance(node.func.value, cst.Subscript) and (  # type: ignore[attr-defined]
                self.loop_stack or self.comprehension_depth):
            self.an.unknown_element_reads.add(id(self.record.node))
        if method == "record_stream" and args.positional and self.an.torch_imported:
            # Only CUDA tensors have `record_stream` (evidence): the allocator fact, not a
            # kernel, whatever stream is current.
            receiver = Buffer("torch", Mem.DEVICE, label=self.code(node.func.value))  # type: ignore[attr-defined]
            fact = torch_api.TENSOR_METHODS[method]
            return self.apply(fact, self.code(node.func), node, args, receiver=receiver,
                              label=self.code(node.func.value))  # type: ignore[attr-defined]
        if method == "pin_memory" and not args.positional and not args.keywords and self.an.torch_imported:
            result = Buffer("torch", Mem.PINNED, site=self.site(node), pinned_by=id(node))
            self.emit(OpKind.PIN, self.code(node.func), node, "torch", result=result)
            return result
        if method in mpi.COMM_METHODS and mpi.MODULE_ROOT in self.an.imported_roots:
            return self.mpi_call(method, node, args)
        if method in nccl.COMMUNICATOR_METHODS and self.nccl_call(method, node, args):
            return UNKNOWN
        if method in cupy_api.MEMORY_POINTER_METHODS and "cupy" in self.an.imported_roots:
            # Only CuPy's MemoryPointer has these (`dst.data.copy_from_device(src, n)`):
            # the copy runs whatever the pointer's array, which the caller's argument tells.
            return self.apply(cupy_api.MEMORY_POINTER_METHODS[method], self.code(node.func), node, args)
        if method in _UNKNOWN_STREAM_METHODS and (self.an.gpu_imported or mpi.MODULE_ROOT in self.an.imported_roots):
            # (a module handing device buffers to MPI syncs streams it is given)
            return self.unknown_stream_method(method, node, args)
        if method == "record_event" and self.an.torch_imported and not args.positional:
            # Only streams have `record_event()`: an event recorded on the stream the text names.
            stream = self.param_stream(node.func.value, "torch")  # type: ignore[attr-defined]
            event = Event("torch", self.code(node), site=self.site(node), recorded_on=stream)
            self.emit(OpKind.EVENT_RECORD, self.code(node.func), node, "torch", stream=stream, event=event)
            return event
        if method == "copy_" and self.an.torch_imported and args.positional:
            nb = _const_bool(args.value(Arg(1, "non_blocking")))
            source = args.value(Arg(0, "src"))
            if nb and isinstance(source, Buffer) and source.framework == "torch" and source.mem is Mem.PINNED:
                # A non-blocking copy out of pinned memory only makes sense to the GPU: the
                # receiver is a CUDA tensor (evidence, as for a pinned receiver below).
                return self.torch_copy(Buffer("torch", Mem.DEVICE), method, node, args=args)
            # dst.copy_(src) with neither side known: a copy on the current stream whose
            # direction the caller's arguments will tell (helpers are summarized this way).
            accesses = self.accesses([args.pair(Arg(0, "src"))], space=UNSURE) + self.accesses(
                [(node.func.value, UNKNOWN)], write=True, space=UNSURE)
            self.emit(OpKind.COPY, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                      non_blocking=nb, host_blocking=None if nb is None else not nb, accesses=accesses)
            return UNKNOWN
        if method == "to" and self.an.torch_imported and _is_cpu_target(args.value(Arg(0, "device"))) and \
                _const_bool(args.value(Arg(kw="non_blocking"))):
            # A non-blocking copy to the host only makes sense from the GPU: the receiver
            # is a CUDA tensor (evidence), and the result pinned memory filled later.
            receiver = Buffer("torch", Mem.DEVICE)
            return self.torch_copy(receiver, method, node, args=args)
        if method in ("cuda", "to") and self.an.torch_imported:
            target = args.value(Arg(0, "device")) if method == "to" else Const("cuda")
            if _is_cuda_target(target):
                non_blocking = _const_bool(args.value(Arg(kw="non_blocking") if method == "to" else Arg(1, "non_blocking")))
                result = Buffer("torch", Mem.DEVICE, site=self.site(node))
                # The source is either host memory (then this is an H2D copy) or already
                # on the device (then nothing is copied): never a device read to order.
                accesses = self.accesses([(node.func.value, UNKNOWN)], space=HOSTMEM) + self.result_access(result, node)
                self.emit(OpKind.COPY, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                          non_blocking=non_blocking, host_blocking=None, accesses=accesses)
                return result
        if self.on_side_stream("torch") and self.an.torch_imported and method not in torch_api.NON_TENSOR_METHODS \
                and method not in _CONTAINER_STORES and not method.startswith("__"):
            return self.opaque_method(method, node, args)
        if self.peer_values and method not in torch_api.NON_TENSOR_METHODS and method not in _CONTAINER_STORES \
                and not method.startswith("__") and self.hands_peer(args):
            # A tensor another stream made, handed to a method we cannot see (a submodule's
            # step): PyTorch's invariant, it runs on the current stream and reads it.
            return self.opaque_method(method, node, args)
        if not self.stream_given_call(node, args) and method not in torch_api.NON_TENSOR_METHODS:
            # (`self.cache.pop(key)`, `d.get(k)` under a side stream: container methods
            # tensors do not have, no GPU work)
            self.unseen_call_on_side_stream(node, args)
        return UNKNOWN

    def nccl_call(self, method: str, node: cst.Call, args: "Args") -> bool:
        """`comm.reduce(a.data.ptr, b.data.ptr, n, dtype, op, root, stream.ptr)`: an NCCL
        collective handed a stream is queued there, reading its send buffer and writing
        its receive buffer (api/nccl.py). False: not handed a stream, not one of these."""
        stream_expr = args.keywords.get("stream")
        pairs = args.pairs()
        stream = args.values.get(id(stream_expr), UNKNOWN) if stream_expr is not None else None
        if stream is None:
            stream_expr, stream = next(((e, v) for e, v in pairs if isinstance(v, Stream) and not v.one_of), (None, None))
        if not isinstance(stream, Stream):
            return False
        buffers = [(e, v) for e, v in pairs if e is not stream_expr and isinstance(v, Buffer) and v.mem is Mem.DEVICE]
        roles = nccl.COMMUNICATOR_METHODS[method]
        if len(buffers) != len(roles):
            return False  # (the pointers the text shows do not match the collective's)
        accesses: list[Access] = []
        for (expr, value), role in zip(buffers, roles):
            if role is not Role.RECEIVED:
                accesses.extend(self.accesses([(expr, value)], space=DEVICE))
            if role is not Role.SENT:
                accesses.extend(self.accesses([(expr, value)], write=True, space=DEVICE))
        self.emit(OpKind.KERNEL, self.code(node.func), node, stream.framework, stream=stream,
                  reads=tuple(v for (_, v), r in zip(buffers, roles) if r is not Role.RECEIVED),
                  writes=tuple(v for (_, v), r in zip(buffers, roles) if r is not Role.SENT),
                  accesses=tuple(accesses))
        return True

    def mpi_call(self, method: str, node: cst.Call, args: "Args") -> Value:
        """`comm.Allreduce(sendbuf, recvbuf)`: MPI reads the send buffers and writes the
        receive buffers from the host side, now, outside every stream (api/mpi.py)."""
        device: list[Access] = []
        framework = ""
        roles = mpi.COMM_METHODS[method]
        if any(args.value(b.arg) == QualRef(mpi.IN_PLACE) for b in roles):
            # `Allreduce(MPI.IN_PLACE, buf)`: the receive buffer is the send buffer too.
            roles = tuple(replace(b, role=Role.BOTH) if b.role is Role.RECEIVED else b for b in roles)
        for buffer in roles:
            expr, value = args.pair(buffer.arg)
            if isinstance(expr, (cst.List, cst.Tuple)) and expr.elements:
                # `[buf, MPI.FLOAT]`: a buffer specification whose first item is the array.
                expr = expr.elements[0].value
                value = value.item(0) if isinstance(value, Seq) else UNKNOWN
            elif isinstance(value, Seq) and value.items:
                value = value.items[0]  # a name bound to one (`buf = (ffi.buffer(p, n), MPI.FLOAT)`)
            if expr is None or not isinstance(value, Buffer):
                continue
            if value.mem is not Mem.DEVICE:
                if buffer.role is not Role.RECEIVED:
                    self.host_touch(expr, value, write=False)
                if buffer.role is not Role.SENT:
                    self.host_touch(expr, value, write=True)
                continue
            framework = framework or value.framework
            if buffer.role is not Role.RECEIVED:
                device.extend(self.accesses([(expr, value)], space=DEVICE))
            if buffer.role is not Role.SENT:
                device.extend(self.accesses([(expr, value)], write=True, space=DEVICE))
        if device:
            self.emit(OpKind.OUTSIDE_STREAMS, self.code(node.func), node, framework, accesses=tuple(device))
        return UNKNOWN

    def opaque_method(self, method: str, node: cst.Call, args: "Args") -> Value:
        """`t.div_(n)`, `t.clone()` on a value we cannot see, under a PyTorch side stream:
        GPU work on that stream that reads the receiver (writes it, for an in-place
        method) and its arguments, and makes a CUDA tensor there."""
        recv_expr = node.func.value  # type: ignore[attr-defined]
        inplace = method.endswith("_") and method not in torch_api.NON_KERNEL_INPLACE
        result = Buffer("torch", Mem.DEVICE, site=self.site(node), opaque=True)
        accesses = self.accesses([(recv_expr, UNKNOWN)] + self.tensor_pairs(args))
        accesses += self.accesses([(recv_expr, UNKNOWN)], write=True) if inplace else self.result_access(result, node)
        accesses += self.output_arguments(self.tensor_pairs(args))
        self.emit(OpKind.KERNEL, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                  writes=(result,), accesses=accesses, result=result)
        return result

    def unknown_stream_method(self, method: str, node: cst.Call, args: "Args") -> Value:
        """`self.side.wait_stream(...)`, `ev.synchronize()` on values we cannot see: keep
        the ordering they give (a linter that is unsure stays silent). The receiver is
        taken as the stream its text names, as in `torch.cuda.stream(self.side)`."""
        fw = "torch" if self.an.torch_imported else "cupy"
        recv_expr = node.func.value  # type: ignore[attr-defined]
        if method in ("synchronize", "sync"):
            self.emit(OpKind.EVENT_SYNC, self.code(node.func), node, fw, host_blocking=True)
            return UNKNOWN
        stream = self.param_stream(recv_expr, fw)
        if method == "wait_stream":
            target_expr, target = args.pair(Arg(0, "stream"))
            other = self.stream_from(target, target_expr, fw) if target_expr is not None else None
            self.emit(OpKind.WAIT_STREAM, self.code(node.func), node, fw, stream=stream, target=other)
        elif method == "wait_event":
            event = args.value(Arg(0, "event"))
            self.emit(OpKind.STREAM_WAIT_EVENT, self.code(node.func), node, fw, stream=stream,
                      event=event if isinstance(event, Event) else None)
        elif method == "wait" and not args.positional and not args.keywords:
            self.emit(OpKind.STREAM_WAIT_EVENT, self.code(node.func), node, fw, stream=self.state.current[fw])
        return UNKNOWN

    def buffer_method(self, receiver: Buffer, method: str, node: cst.Call, label: str) -> Value:
        fw = receiver.framework
        label_api = self.code(node.func)
        if fw == "torch":
            if receiver.loader_site and method in ("items", "values"):
                self.eval_args(node)
                return Seq(element=Seq(items=(UNKNOWN, receiver)) if method == "items" else receiver)
            if method in torch_api.TENSOR_COPIES:
                return self.torch_copy(receiver, method, node)
            fact = torch_api.TENSOR_METHODS.get(method)
            if fact is not None:
                if fact.kind is OpKind.IMPLICIT_SYNC and receiver.mem is not Mem.DEVICE:
                    self.eval_args(node)
                    if method != "numpy":  # .numpy() is a zero-copy view: it reads nothing
                        self.host_touch(node.func.value, receiver, write=False)  # .item()/.tolist() read it
                    return receiver if method == "numpy" else UNKNOWN
                if fact.kind is OpKind.PIN and receiver.mem is Mem.PINNED:
                    self.eval_args(node)
                    return receiver
                return self.apply(fact, label_api, node, self.eval_args(node), receiver=receiver, label=label)
            args = self.eval_args(node)
            inplace = method.endswith("_") and method not in torch_api.NON_KERNEL_INPLACE
            if method in torch_api.TENSOR_PRESERVING or inplace:
                if method in torch_api.VIEW_METHODS:
                    return receiver
                if receiver.mem is Mem.DEVICE:
                    return self.device_method(receiver, node, label_api, args, "torch", inplace=inplace)
                self.host_touch(node.func.value, receiver, write=method.endswith("_"))
                return Buffer("torch", Mem.PAGEABLE, site=self.site(node))
            if receiver.mem is not Mem.DEVICE:
                self.host_touch(node.func.value, receiver, write=False)
                return UNKNOWN
            if method in torch_api.NON_TENSOR_METHODS:
                return UNKNOWN
            # Any other operation on a CUDA tensor runs on the current stream, reads
            # the tensor and returns a CUDA tensor made there (PyTorch's invariant).
            return self.device_method(receiver, node, label_api, args, "torch", inplace=False)
        if fw == "cupy":
            fact = cupy_api.ARRAY_METHODS.get(method)
            if fact is not None:
                return self.apply(fact, label_api, node, self.eval_args(node), receiver=receiver, label=label)
            args = self.eval_args(node)
            if method in cupy_api.VIEW_METHODS:
                return receiver
            if method in cupy_api.KERNEL_METHODS:
                return self.device_method(receiver, node, label_api, args, "cupy", inplace=method == "fill")
            return UNKNOWN
        if fw == "numba":
            fact = api.ARRAY_METHODS["numba"].get(method)
            if fact is not None:
                return self.apply(fact, label_api, node, self.eval_args(node), receiver=receiver, label=label)
            self.eval_args(node)
            if method in ("bind",):
                return receiver
            return receiver if method in ("reshape", "ravel", "view", "split") else UNKNOWN
        if fw == "numpy":
            self.eval_args(node)
            if method in ("reshape", "view", "ravel", "transpose", "squeeze", "__array__"):
                return receiver
            self.host_touch(node.func.value, receiver, write=method in ("fill", "put", "sort", "itemset", "resize"))
            if method in ("copy", "astype", "flatten"):
                return Buffer("numpy", Mem.PAGEABLE, site=self.site(node))
            return UNKNOWN
        fact = api.ARRAY_METHODS.get(fw, {}).get(method)
        if fact is not None:
            return self.apply(fact, label_api, node, self.eval_args(node), receiver=receiver, label=label)
        self.eval_args(node)
        return UNKNOWN

    def device_method(self, receiver: Buffer, node: cst.Call, label_api: str, args: "Args", fw: str, inplace: bool) -> Value:
        """A method of a device array that launches a kernel on the current stream."""
        result = receiver if inplace else Buffer(fw, Mem.DEVICE, site=self.site(node))
        recv_expr = node.func.value  # type: ignore[attr-defined]
        accesses = self.accesses([(recv_expr, receiver)] + self.flat_pairs(args))
        accesses += self.accesses([(recv_expr, receiver)], write=True) if inplace else self.result_access(result, node)
        self.emit(OpKind.KERNEL, label_api, node, fw, stream=self.state.current[fw], receiver=receiver,
                  reads=(receiver,) + tuple(v for v in args.all() if isinstance(v, Buffer)), writes=(result,),
                  accesses=accesses, result=result)
        return result

    def torch_copy(self, receiver: Buffer, method: str, node: cst.Call, args: Optional["Args"] = None) -> Value:
        args = args if args is not None else self.eval_args(node)
        fact = torch_api.TENSOR_COPIES[method]
        label_api = self.method_label(node.func)
        stream = self.state.current["torch"]
        non_blocking = _const_bool(args.value(fact.flag)) if fact.flag else False
        if fact.flag and not args.has(fact.flag):
            non_blocking = False
        recv_expr = node.func.value  # type: ignore[attr-defined]
        if method == "copy_":
            src_expr, source = args.pair(Arg(0, "src"))
            dst_dev, src_dev = receiver.mem is Mem.DEVICE, isinstance(source, Buffer) and source.mem is Mem.DEVICE
            src_host = isinstance(source, Buffer) and source.mem is not Mem.DEVICE
            if dst_dev and src_host:
                kind, host = OpKind.COPY_H2D, source
            elif not dst_dev and (src_dev or (source is UNKNOWN and receiver.mem is Mem.PINNED and non_blocking)):
                # A non_blocking copy into a pinned host tensor only makes sense from the GPU.
                kind, host = OpKind.COPY_D2H, receiver
            elif dst_dev and src_dev:
                kind, host = OpKind.COPY_D2D, UNKNOWN
            elif dst_dev:
                # From something we cannot see (host or device): the destination is written.
                accesses = self.accesses([(src_expr, source)], space=UNSURE) + self.accesses(
                    [(recv_expr, receiver)], write=True, space=DEVICE)
                self.emit(OpKind.COPY, label_api, node, "torch", stream=stream, non_blocking=non_blocking,
                          host_blocking=None, receiver=receiver, accesses=accesses)
                return receiver
            else:
                self.host_touch(recv_expr, receiver, write=True)
                return receiver
            src_space = HOSTMEM if kind is OpKind.COPY_H2D else DEVICE
            dst_space = HOSTMEM if kind is OpKind.COPY_D2H else DEVICE
            accesses = self.accesses([(src_expr, source)], space=src_space) + self.accesses([(recv_expr, receiver)], write=True, space=dst_space)
            # (device to device: queued on the stream whatever `non_blocking` says, API facts §4.3)
            blocking = False if kind is OpKind.COPY_D2D else _blocks(fact, non_blocking)
            self.emit(kind, label_api, node, "torch", stream=stream, non_blocking=non_blocking,
                      host_blocking=blocking, host_buffer=host, receiver=receiver,
                      pinned_out=kind is OpKind.COPY_D2H and receiver.mem is Mem.PINNED, is_async_api=True,
                      reads=(source,), writes=(receiver,), accesses=accesses)
            return receiver
        if method == "cpu":
            target: Value = Const("cpu")
        elif method == "cuda":
            target = Const("cuda")
        else:
            target = args.value(Arg(0, "device"))
            if target is UNKNOWN and "device" not in args.keywords and not args.positional:
                return receiver
            if isinstance(target, QualRef):
                return receiver  # a dtype: same device
            if isinstance(target, Buffer) and target.framework == "torch":
                target = Const("cuda") if target.mem is Mem.DEVICE else Const("cpu")
            if target is UNKNOWN and receiver.mem is Mem.DEVICE:
                # `.to(self.dtype)` (or a device we cannot see): either way the current
                # stream reads the tensor; the result is taken as a CUDA tensor made there.
                return self.device_method(receiver, node, label_api, args, "torch", inplace=False)
        if _is_cuda_target(target):
            if receiver.mem is Mem.DEVICE:
                return receiver
            result = Buffer("torch", Mem.DEVICE, site=self.site(node))
            accesses = self.accesses([(recv_expr, receiver)], space=HOSTMEM) + self.result_access(result, node)
            self.emit(OpKind.COPY_H2D, label_api, node, "torch", stream=stream, non_blocking=non_blocking,
                      host_blocking=_blocks(fact, non_blocking), host_buffer=receiver,
                      receiver=receiver, is_async_api=True, result=result, reads=(receiver,), writes=(result,),
                      accesses=accesses)
            return result
        if _is_cpu_target(target):
            if receiver.mem is not Mem.DEVICE:
                return receiver
            mem = Mem.PINNED if non_blocking else Mem.PAGEABLE
            result = Buffer("torch", mem, site=self.site(node))
            accesses = self.accesses([(recv_expr, receiver)], space=DEVICE) + self.result_access(result, node, HOSTMEM)
            self.emit(OpKind.COPY_D2H, label_api, node, "torch", stream=stream, non_blocking=non_blocking,
                      host_blocking=_blocks(fact, non_blocking), host_buffer=result,
                      receiver=receiver, pinned_out=bool(non_blocking), is_async_api=True, result=result,
                      reads=(receiver,), writes=(result,), accesses=accesses)
            return result
        return UNKNOWN

    def module_call(self, node: cst.Call) -> Value:
        """An nn.Module called on CUDA tensors (or on anything inside a side-stream
        context, where the code plainly means GPU work) launches kernels there."""
        args = self.eval_args(node)
        tensors = tuple(v for v in args.all() if isinstance(v, Buffer) and v.framework == "torch")
        if any(t.mem is Mem.DEVICE for t in tensors) or (self.on_side_stream("torch") and args.positional and not tensors):
            result = Buffer("torch", Mem.DEVICE, site=self.site(node))
            accesses = self.accesses(self.flat_pairs(args)) + self.module_reads(node) + self.result_access(result, node)
            self.emit(OpKind.KERNEL, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                      reads=tensors, writes=(result,), accesses=accesses, result=result)
            return result
        return UNKNOWN

    def numba_launch(self, launch: Launch, node: cst.Call) -> Value:
        args = self.eval_args(node)
        stream = launch.stream if isinstance(launch.stream, Stream) else self.default_stream("numba")
        values = tuple(args.values[id(e)] for e in args.positional)
        written = self.an.kernel_writes(launch.kernel)
        accesses: list[Access] = []
        for i, (expr, value) in enumerate(zip(args.positional, values)):
            accesses.extend(self.accesses([(expr, value)], space=DEVICE))
            if written is None or i in written:
                accesses.extend(replace(a, assumed=written is None) for a in self.accesses([(expr, value)], write=True, space=DEVICE))
        self.emit(OpKind.KERNEL, launch.kernel.label, node, "numba", stream=stream, receiver=launch.kernel,
                  reads=values, writes=values, accesses=tuple(accesses))
        return UNKNOWN

    def cupy_kernel_call(self, kernel: Kernel, node: cst.Call) -> Value:
        args = self.eval_args(node)
        stream_value = args.value(Arg(kw="stream"))
        stream = self.stream_from(stream_value, args.keywords.get("stream"), "cupy") if "stream" in args.keywords else self.state.current["cupy"]
        config = {id(e) for arg in args.positional[:kernel.args_from]
                  for e in ((arg, *(el.value for el in arg.elements)) if isinstance(arg, (cst.Tuple, cst.List)) else (arg,))}
        pairs = [p for p in self.flat_pairs(args) if p[0] is not args.keywords.get("stream") and id(p[0]) not in config]
        buffers = tuple(v for _, v in pairs if isinstance(v, Buffer))
        # A raw kernel's body is C++ we do not read: every array argument may be written.
        accesses = self.accesses(pairs, space=DEVICE) + tuple(
            replace(a, assumed=True) for a in self.accesses(pairs, write=True, space=DEVICE)
        )
        self.emit(OpKind.KERNEL, self.code(node.func), node, "cupy", stream=stream, receiver=kernel, reads=buffers,
                  writes=buffers, accesses=accesses)
        return UNKNOWN

    def stream_from(self, value: Value, expr: Optional[cst.BaseExpression], framework: str) -> Stream:
        """The stream an argument denotes; absent, 0 and None mean the legacy default stream."""
        if isinstance(value, Stream):
            return value
        if expr is None or (isinstance(value, Const) and value.value in (0, None)):
            return self.default_stream(framework)
        if isinstance(value, Seq) and isinstance(value.element, Stream):
            return value.element
        return self.param_stream(expr, framework)

    # --- applying a table fact
    def apply(self, fact: Fact, label_api: str, node: cst.Call, args: "Args",
              receiver: Value = UNKNOWN, label: str = "") -> Value:  # noqa: C901
        fw = fact.framework
        cur_fw = fw if fw in CURRENT_FRAMEWORKS else None
        stream: Optional[Stream] = None
        stream_given = fact.stream_arg is not None and args.has(fact.stream_arg)
        stream_value = args.value(fact.stream_arg) if fact.stream_arg else UNKNOWN
        if isinstance(stream_value, _Capture):
            return UNKNOWN  # cuda.core: launched into a GraphBuilder, recorded for later, not run now
        if fact.stream == STREAM_CURRENT and cur_fw:
            stream = self.state.current[cur_fw]
        elif fact.stream == STREAM_LEGACY:
            stream = self.default_stream(fw)
        elif fact.stream == STREAM_SELF and isinstance(receiver, Stream):
            stream = receiver
        elif fact.stream == STREAM_ARG:
            stream = self.stream_from(stream_value, args.expr(fact.stream_arg) if stream_given else None, fw)
        elif fact.stream == STREAM_ARG_OR_CURRENT:
            if stream_given and not (isinstance(stream_value, Const) and stream_value.value is None):
                stream = self.stream_from(stream_value, args.expr(fact.stream_arg), fw)
            elif cur_fw:
                stream = self.state.current[cur_fw]
        elif fact.stream == STREAM_ARG_OR_BOUND:
            if stream_given and not (isinstance(stream_value, Const) and stream_value.value in (0, None)):
                stream = self.stream_from(stream_value, args.expr(fact.stream_arg), fw)
            elif isinstance(receiver, Buffer) and receiver.bound_stream is not None:
                stream = receiver.bound_stream
            elif isinstance(receiver, Buffer):
                stream = self.default_stream(fw)
            else:
                stream = None  # unknown receiver: its bound stream is unknown

        # Host blocking.
        flag: Optional[bool] = None
        if fact.blocking == BLOCK_ALWAYS:
            blocking: Optional[bool] = True
        elif fact.blocking == BLOCK_UNLESS_STREAM:
            blocking = None if stream is None else stream.kind is StreamKind.LEGACY
        elif fact.blocking == BLOCK_FLAG and fact.flag is not None:
            flag = _const_bool(args.value(fact.flag)) if args.has(fact.flag) else fact.flag_default
            blocking = None if flag is None else flag == fact.flag_blocks_when
        else:
            blocking = False

        kind = fact.kind
        if kind is OpKind.IMPLICIT_SYNC and not any(
            isinstance(v, Buffer) and v.mem is Mem.DEVICE for v in (receiver, *args.all())
        ):
            kind = None  # e.g. torch.equal on CPU tensors: nothing to wait for
        host_buffer: Value = UNKNOWN
        if fact.host is not None:
            host_buffer = args.value(fact.host)
        if fact.direction is not None:
            kind = _direction(args.value(fact.direction), args.expr(fact.direction))
            if kind is OpKind.COPY_H2D:
                host_buffer = args.value(Arg(1))
            elif kind is OpKind.COPY_D2H:
                host_buffer = args.value(Arg(0))
        out = args.value(fact.out) if fact.out is not None and args.has(fact.out) else None

        returned = self.result_of(fact, node, args, receiver, stream, stream_value if stream_given else None, out, label)
        # cuda-python returns (err, value): the op records the value, the caller gets the tuple.
        result = returned.item(1) if fact.returns_tuple and isinstance(returned, Seq) else returned
        if kind in (OpKind.COPY_D2H,) and host_buffer is UNKNOWN:
            host_buffer = out if out is not None else result

        if kind is OpKind.COPY_H2D and fw == "cupy" and fact.host is not None:
            source = args.value(fact.host)
            if isinstance(source, Buffer) and source.mem is Mem.DEVICE and fact.result.startswith("device"):
                return replace(source, framework="cupy", bound_stream=None)  # a view: same memory, no copy

        if kind is OpKind.STREAM_WAIT_EVENT and fact.target is not None and isinstance(args.value(fact.target), Stream):
            kind = OpKind.WAIT_STREAM  # cuda.core's Stream.wait(event_or_stream)
        if kind is not None:
            target = None
            event: Optional[Value] = None
            if fact.target is not None:
                tv = args.value(fact.target)
                if isinstance(tv, Stream):
                    target = tv
                elif isinstance(tv, Event):
                    target, event = tv.recorded_on, tv
                elif kind is OpKind.WAIT_STREAM and args.has(fact.target):
                    target = self.stream_from(tv, args.expr(fact.target), fw)
            if isinstance(receiver, Event):
                event = receiver
                if kind is OpKind.EVENT_SYNC:
                    target = receiver.recorded_on
            elif isinstance(result, Event) and event is None:
                event = result
            if kind is OpKind.STREAM_SYNC and target is None and isinstance(receiver, Stream):
                target = receiver
            if kind is OpKind.RECORD_STREAM and fact.target is not None:
                target = self.stream_from(args.value(fact.target), args.expr(fact.target), fw)
            op = self.emit(
                kind, label_api, node, fw, stream=stream, host_blocking=blocking,
                is_async_api=fact.async_api, sync_api=fact.sync_api and bool(blocking),
                host_buffer=host_buffer, receiver=receiver, result=result,
                non_blocking=None if flag is None else (not flag if fact.flag_blocks_when else flag),
                pinned_out=isinstance(out, Buffer) and out.mem is Mem.PINNED, target=target,
                reads=tuple(v for v in args.all() if isinstance(v, Buffer)),
                writes=(result,) if isinstance(result, Buffer) else (),
                accesses=self.fact_accesses(kind, fact, node, args, receiver, result, out), event=event,
            )
            self.after_op(op, fact, args, receiver)
        return returned

    def fact_accesses(self, kind: OpKind, fact: Fact, node: cst.Call, args: "Args", receiver: Value,
                      result: Value, out: Optional[Value]) -> tuple[Access, ...]:
        """Which buffers a table API reads and writes (source read, destination written)."""
        declared_effects = self.effect_accesses(fact, node, args)
        if declared_effects is not None:
            return declared_effects
        recv = (node.func.value, receiver) if isinstance(node.func, cst.Attribute) and receiver is not UNKNOWN else (None, UNKNOWN)
        out_pair = args.pair(fact.out) if out is not None else None
        raw_pair = fact.direction is not None or fact.framework == "cuda-python"
        if kind is OpKind.RECORD_STREAM or kind is OpKind.IMPLICIT_SYNC:
            return self.accesses([recv], space=DEVICE)
        if kind is OpKind.MEMSET:
            return self.accesses([args.pair(Arg(0))], write=True, space=DEVICE)
        if kind not in (OpKind.COPY_H2D, OpKind.COPY_D2H, OpKind.COPY_D2D):
            return ()
        src_space = HOSTMEM if kind is OpKind.COPY_H2D else DEVICE
        dst_space = HOSTMEM if kind is OpKind.COPY_D2H else DEVICE
        if raw_pair:
            src, dst = args.pair(Arg(1)), args.pair(Arg(0))
        elif kind is OpKind.COPY_H2D:
            src = args.pair(fact.host)
            dst = recv if recv[0] is not None else (None, UNKNOWN)
        else:
            src = recv if recv[0] is not None else args.pair(Arg(0))
            dst = out_pair if out_pair is not None else (None, UNKNOWN)
        accesses = self.accesses([src], space=src_space) + self.accesses([dst], write=True, space=dst_space)
        if dst[0] is None:
            accesses += self.result_access(result, node, dst_space)
        return accesses

    def after_op(self, op: GpuOp, fact: Fact, args: "Args", receiver: Value) -> None:
        kind = op.kind
        if kind is OpKind.STREAM_CREATE and isinstance(op.result, Stream) and op.result.explicit:
            self.record.enters_stream = True
        elif kind is OpKind.SET_STREAM:
            fw = op.framework
            stream = receiver if isinstance(receiver, Stream) else args.value(fact.stream_arg) if fact.stream_arg else UNKNOWN
            if isinstance(stream, Stream) and fw in CURRENT_FRAMEWORKS:
                self.make_current(fw, stream)
        elif kind is OpKind.EVENT_RECORD:
            event = receiver if isinstance(receiver, Event) else args.value(fact.target) if fact.target else UNKNOWN
            if isinstance(event, Event) and op.stream is not None:
                self.rebind(event, replace(event, recorded_on=op.stream))
        elif kind is OpKind.HOST_REGISTER:
            registered = args.value(fact.host) if fact.host else UNKNOWN
            if isinstance(registered, Buffer):
                self.rebind(registered, replace(registered, mem=Mem.PINNED))

    def rebind(self, old: Value, new: Value) -> None:
        for name, value in list(self.state.vars.items()):
            if value == old:
                self.state.vars[name] = new

    def result_of(self, fact: Fact, node: cst.Call, args: "Args", receiver: Value,
                  stream: Optional[Stream], stream_value: Optional[Value], out: Optional[Value], label: str) -> Value:  # noqa: C901
        spec = fact.result
        fw = fact.framework
        site = self.site(node)
        value: Value = UNKNOWN
        if spec == "stream":
            # Streams and events keep one identity per creating call: a stream made anew
            # each iteration is taken as one stream (in order: no hazard between them).
            value = Stream(fw, StreamKind.EXPLICIT, self.created_blocking(fact, args), label, site=id(node))
        elif spec == "event":
            recorded = stream if fact.kind is OpKind.EVENT_RECORD else None
            given = args.value(fact.target) if fact.target is not None else UNKNOWN
            value = given if isinstance(given, Event) else Event(fw, label, site=id(node), recorded_on=recorded)
        elif spec.startswith(("device:", "pinned:", "pageable:", "mapped:")):
            mem_name, framework, *rest = spec.split(":")
            mem = {"device": Mem.DEVICE, "pinned": Mem.PINNED, "pageable": Mem.PAGEABLE, "mapped": Mem.MAPPED}[mem_name]
            if out is not None:
                return out
            bound = None
            if rest and rest[0] == "bound":
                bv = args.value(fact.stream_arg) if fact.stream_arg else UNKNOWN
                if isinstance(bv, Stream):
                    bound = bv
                elif fact.stream_arg and args.has(fact.stream_arg) and not (isinstance(bv, Const) and bv.value in (0, None)):
                    bound = self.param_stream(args.expr(fact.stream_arg), fw)
            pinned_by = site if fact.kind is OpKind.PIN else 0
            ndim = self.shape_rank(args.expr(Arg(0, "shape"))) if fact.kind in (OpKind.ALLOC, OpKind.PINNED_ALLOC) else None
            value = Buffer(framework, mem, site=site, label=label, bound_stream=bound, pinned_by=pinned_by, ndim=ndim)
        elif spec.startswith("kernel:"):
            _, framework, *config = spec.split(":")
            value = Kernel(framework, label or self.code(node.func), node=node, site=site,
                           args_from=int(config[0]) if config else 0)
        elif spec == "current_stream":
            value = self.state.current.get(fw, UNKNOWN)
        elif spec == "none":
            value = Const(None)
        elif spec == "cuda_device":
            value = Const("cuda")
        elif spec == "legacy_stream":
            value = legacy_stream(fw)
        elif spec == "per_thread_stream":
            value = Stream(fw, StreamKind.PER_THREAD, True, "the per-thread default stream", site=-3)
        elif spec == "context":
            sv = args.value(fact.stream_arg) if fact.stream_arg else UNKNOWN
            if isinstance(sv, Const) and sv.value is None:
                value = UNKNOWN
            elif isinstance(sv, Stream):
                value = StreamContext(sv, fw)
            elif fact.stream_arg and args.has(fact.stream_arg):
                value = StreamContext(self.param_stream(args.expr(fact.stream_arg), fw), fw)
        elif spec == "loader":
            pin = args.value(Arg(kw="pin_memory"))
            if "pin_memory" not in args.keywords:
                pinned: Optional[bool] = False
            else:
                pinned = _const_bool(pin)
            value = Loader(pinned, site, label)
        elif spec == "device":
            first = args.value(Arg(0, "type"))
            value = first if isinstance(first, Const) else UNKNOWN
        elif spec.startswith("like_arg0:"):
            first = args.value(Arg(0))
            if isinstance(first, Buffer):
                value = Buffer(spec.split(":")[1], first.mem, site=first.site, pinned_by=first.pinned_by)
        elif spec == "self":
            value = receiver
        elif spec == "capture":
            value = _Capture()
        if fact.returns_tuple:
            return Seq(items=(UNKNOWN, value))
        return value

    def created_blocking(self, fact: Fact, args: "Args") -> Optional[bool]:
        how = fact.creates_blocking
        if how == "yes":
            return True
        if how == "no":
            return False
        if how == "cuda_core":  # StreamOptions(nonblocking=True) is the default
            return False if not args.positional and not args.keywords else None
        if how and how.startswith("not:"):
            kw = how[4:]
            if kw not in args.keywords:
                return True
            flag = _const_bool(args.value(Arg(kw=kw)))
            return None if flag is None else not flag
        if how and how.startswith("flags:"):
            arg = Arg(int(how[6:]), "flags")
            if not args.has(arg):
                return True
            value, expr = args.value(arg), args.expr(arg)
            if isinstance(value, Const) and isinstance(value.value, int):
                return value.value == 0
            name = self.code(expr).rsplit(".", 1)[-1] if expr is not None else ""
            if isinstance(value, QualRef):
                name = value.qualname.rsplit(".", 1)[-1]
            if name in cuda_python.NON_BLOCKING_FLAGS:
                return False
            if name in cuda_python.BLOCKING_FLAGS:
                return True
        return None


def _spells_host_device(node: cst.Call) -> bool:
    """A call whose arguments spell the host as a device: `"cpu"`, `torch.device("cpu")`."""
    for arg in node.args:
        value = arg.value
        if isinstance(value, cst.Call) and isinstance(value.func, (cst.Attribute, cst.Name)) and value.args:
            name = value.func.attr.value if isinstance(value.func, cst.Attribute) else value.func.value
            value = value.args[0].value if name == "device" else value
        if isinstance(value, cst.SimpleString) and value.value.strip("'\"") == "cpu":
            return True
    return False


def _names_a_device(label: str) -> bool:
    """`self._device = utils.get_device(cfg.device)`: a project helper whose result is
    kept as a device. Reading it tells whether the code's device is CUDA (what it
    returns decides, not the name; the name only says the helper is worth reading)."""
    last = label.rsplit(".", 1)[-1].lstrip("_").lower()
    return last == "device" or last.endswith("_device")


def holds_gpu_values(args: "Args") -> bool:
    """Is a call given a buffer, a stream or an event (also in a list or tuple)?"""
    for value in args.all():
        items = value.items or (value.element,) if isinstance(value, Seq) else (value,)
        if any(isinstance(v, (Buffer, Stream, Event)) for v in items):
            return True
    return False


def _passes(node: cst.Call, arg: Arg) -> bool:
    """Whether a call spells the argument (by keyword, or by position before any keyword)."""
    positional = [a for a in node.args if a.keyword is None and not a.star]
    return any(a.keyword is not None and a.keyword.value == arg.kw for a in node.args) or (
        arg.pos is not None and arg.pos < len(positional))


def _setattr_on_self(node: cst.Call, own: Optional[Value]) -> Optional[tuple[str, cst.BaseExpression]]:
    """The attribute name and value expression of `super().__setattr__("x", v)` /
    `super(Cls, self).__setattr__("x", v)` / `object.__setattr__(self, "x", v)` in a
    method (`own`: what `self` is), else None."""
    if not isinstance(own, Instance) or any(a.star or a.keyword is not None for a in node.args):
        return None
    receiver = node.func.value  # type: ignore[attr-defined]
    args = [a.value for a in node.args]
    if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super":
        pass
    elif isinstance(receiver, cst.Name) and receiver.value == "object" and args \
            and isinstance(args[0], cst.Name) and args[0].value == "self":
        args = args[1:]
    else:
        return None
    if len(args) != 2 or not isinstance(args[0], cst.SimpleString):
        return None
    name = args[0].evaluated_value
    if not isinstance(name, str) or not name.isidentifier():
        return None
    return name, args[1]


def _is_super(expr: Optional[cst.BaseExpression]) -> bool:
    """`super()` (no arguments: the enclosing class's bases)."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "super" \
        and not expr.args
