"""The walker's calls into library APIs beyond one tensor: modules' parameters,
optimizers, multi-tensor ops, storage release, cross-framework views, per-thread default
streams, effect facts (tables and declared models) and the conservative fallback for an
unknown call given a stream. The knowledge is data (api/torch_modules.py, interop.py,
per_thread.py, cuda_core.py, declared.py); this mixin interprets it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional

import libcst as cst

from streamlint.model import declared
from streamlint.model.api import per_thread, torch_modules
from streamlint.model.api.facts import Arg, Fact
from streamlint.model.hazards import ANY, DEVICE, HOSTMEM, UNSURE, Access
from streamlint.model.ops import OpKind
from streamlint.model.values import (
    UNKNOWN,
    Buffer,
    Const,
    Event,
    Instance,
    Mem,
    QualRef,
    Seq,
    Stream,
    StreamKind,
    TorchModule,
    Value,
    legacy_stream,
)
from streamlint.model.walk_common import _UNKNOWN_STREAM_METHODS, _const_bool, _is_cpu_target, _is_cuda_target

if TYPE_CHECKING:
    from streamlint.model.walk_common import Args


@dataclass(frozen=True)
class Optimizer:
    """A torch.optim optimizer over the parameters of `params` (a module's name, or the
    name of a parameter list), as the text names them; "" when it cannot tell."""

    params: str
    site: int = 0


# Methods of unknown receivers that order streams rather than queue work on them.
_ORDERING_METHODS = _UNKNOWN_STREAM_METHODS | {"record", "wait", "record_event", "record_stream", "query"}
_SIMPLE = re.compile(r"^(self\.)?[A-Za-z_][A-Za-z0-9_]*$")


class LibraryMixin:
    """Methods of Walker for library APIs (see the module docstring)."""

    # --- per-thread default streams
    def per_thread_frameworks(self) -> frozenset:
        """Frameworks whose default stream this file switches to the per-thread one."""
        cached = getattr(self.an, "_per_thread", None)
        if cached is None:
            cached = frozenset(per_thread_switched(getattr(self.an.result, "source", "") or ""))
            cached |= declared.per_thread_configured()
            self.an._per_thread = cached
        return cached

    def default_stream(self, framework: str) -> Stream:
        """The legacy default stream, or the per-thread one where the file switched it."""
        if framework in self.per_thread_frameworks():
            return Stream(framework, StreamKind.PER_THREAD, True, "the per-thread default stream", site=-3)
        return legacy_stream(framework)

    # --- effect facts
    def effect_accesses(self, fact: Fact, node: cst.Call, args: "Args") -> Optional[tuple[Access, ...]]:
        """The accesses a fact with explicit effects names (None: it names none)."""
        if not (fact.reads or fact.writes or fact.reads_from is not None or fact.self_reads or fact.self_writes):
            return None
        src_space = HOSTMEM if fact.kind is OpKind.COPY_H2D else DEVICE if fact.kind in (OpKind.COPY_D2H, OpKind.COPY_D2D) else ANY
        dst_space = HOSTMEM if fact.kind is OpKind.COPY_D2H else DEVICE if fact.kind in (OpKind.COPY_H2D, OpKind.COPY_D2D) else ANY
        recv = node.func.value if isinstance(node.func, cst.Attribute) else None
        out: tuple[Access, ...] = ()
        for arg in fact.reads:
            if args.has(arg):
                out += self.accesses(self.list_pairs(*args.pair(arg)), space=src_space)
        if fact.self_reads and recv is not None:
            out += self.accesses([(recv, self.self_value(recv))], space=DEVICE if fact.kind is not OpKind.COPY_H2D else DEVICE)
        if fact.reads_from is not None:
            rest = [(e, args.values.get(id(e), UNKNOWN)) for e in args.positional[fact.reads_from:]]
            out += self.accesses(rest, space=UNSURE)  # (a parameter may be a scalar: UNSURE)
            if fact.args_written:
                out += tuple(replace(a, assumed=True) for a in self.accesses(rest, write=True, space=DEVICE))
        for arg in fact.writes:
            if args.has(arg):
                out += self.accesses(self.list_pairs(*args.pair(arg)), write=True, space=dst_space)
        if fact.self_writes and recv is not None:
            out += self.accesses([(recv, self.self_value(recv))], write=True, space=DEVICE)
        return out

    def self_value(self, recv: cst.BaseExpression) -> Value:
        """The receiver as a buffer for the ordering check: a Buffer keeps its identity;
        an object (a QualRef instance) is keyed by the name that holds it."""
        value = self.eval_quiet(recv)
        return value if isinstance(value, Buffer) else UNKNOWN

    def eval_quiet(self, expr: cst.BaseExpression) -> Value:
        if isinstance(expr, cst.Name):
            return self.lookup(expr.value)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            key = f"self.{expr.attr.value}"
            return self.state.vars.get(key, UNKNOWN)
        return UNKNOWN

    @staticmethod
    def list_pairs(expr: Optional[cst.BaseExpression], value: Value) -> list[tuple]:
        """An argument opened up into its buffers: a list display element by element; a
        name holding a list of buffers as each of them; anything else as itself."""
        if expr is None:
            return []
        if isinstance(expr, (cst.List, cst.Tuple)) and isinstance(value, Seq) and value.items is not None:
            return list(zip((e.value for e in expr.elements), value.items))
        if isinstance(value, Seq):
            items = value.items if value.items is not None else (value.element,)
            found = [(expr, v) for v in items if isinstance(v, Buffer)]
            return found or [(expr, UNKNOWN)]
        return [(expr, value)]

    # --- the conservative fallback
    def stream_given_call(self, node: cst.Call, args: "Args") -> bool:
        """An unknown call given a stream (`stream=s`, or a stream value as an argument)
        is stream work on that stream that reads its array arguments."""
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _ORDERING_METHODS:
            return False
        stream: Optional[Stream] = None
        stream_expr = args.keywords.get("stream")
        if stream_expr is not None:
            value = args.values.get(id(stream_expr), UNKNOWN)
            if isinstance(value, Const) and value.value in (0, None):
                return False
            if isinstance(value, Stream):
                stream = value
            elif isinstance(value, (Event, Buffer, Seq)):
                return False
            else:
                fw = "torch" if self.an.torch_imported else "cupy"
                stream = self.param_stream(stream_expr, fw)
        else:
            for expr, value in args.pairs():
                if isinstance(value, Stream) and not value.one_of:
                    stream, stream_expr = value, expr
                    break
        if stream is None:
            return False
        pairs = [(e, v) for e, v in args.pairs() if e is not stream_expr and not isinstance(v, (Const, Stream, Event))]
        if not pairs:
            return False
        opened: list[tuple] = []
        for expr, value in pairs:
            opened.extend(self.list_pairs(expr, value))
        accesses = tuple(a for e, v in opened for a in self.accesses([(e, v)], space=ANY if isinstance(v, Buffer) else UNSURE))
        self.emit(OpKind.KERNEL, self.code(node.func), node, stream.framework, stream=stream,
                  reads=tuple(v for _, v in opened if isinstance(v, Buffer)), accesses=accesses)
        return True

    # --- cross-framework views
    def buffer_view(self, framework: str, node: cst.Call, args: "Args") -> Value:
        """DLPack / CUDA Array Interface: the same memory under another framework's name."""
        source = args.value(Arg(0))
        if isinstance(source, Buffer):
            return replace(source, framework=framework, bound_stream=None)
        first = args.positional[0] if args.positional else None
        if source is UNKNOWN and first is not None and _SIMPLE.match(self.code(first)):
            # A value we cannot see (a parameter): the view is keyed by its name, so the
            # ordering check sees the two names as one buffer.
            return Buffer(framework, Mem.DEVICE, label=self.code(first), param=self.code(first))
        if framework == "numba" or source is not UNKNOWN:
            return Buffer(framework, Mem.DEVICE, site=self.site(node))
        return Buffer(framework, Mem.DEVICE, site=self.site(node)) if args.positional else UNKNOWN

    def torch_view_creation(self, node: cst.Call, args: "Args") -> Optional[Value]:
        """`torch.as_tensor(cupy_array)`: a view when it stays on the device, a D2H copy
        when asked for the CPU; `torch.tensor(device_array)`: a D2D copy (new memory)."""
        source = args.value(Arg(0))
        if not (isinstance(source, Buffer) and source.mem is Mem.DEVICE):
            return None
        name = self.code(node.func).rsplit(".", 1)[-1]
        device = args.value(Arg(kw="device"))
        src_expr = args.positional[0] if args.positional else None
        stream = self.state.current["torch"]
        if "device" in args.keywords and _is_cpu_target(device):
            result = Buffer("torch", Mem.PAGEABLE, site=self.site(node))
            accesses = self.accesses([(src_expr, source)], space=DEVICE) + self.result_access(result, node, HOSTMEM)
            self.emit(OpKind.COPY_D2H, self.code(node.func), node, "torch", stream=stream, host_blocking=True,
                      host_buffer=result, receiver=source, result=result, reads=(source,), writes=(result,),
                      accesses=accesses)
            return result
        if "device" in args.keywords and not _is_cuda_target(device):
            return None
        if name in torch_modules.VIEW_CREATORS:
            return replace(source, framework="torch", bound_stream=None)
        result = Buffer("torch", Mem.DEVICE, site=self.site(node))
        accesses = self.accesses([(src_expr, source)], space=DEVICE) + self.result_access(result, node)
        self.emit(OpKind.COPY_D2D, self.code(node.func), node, "torch", stream=stream, receiver=source,
                  result=result, reads=(source,), writes=(result,), accesses=accesses)
        return result

    def numpy_fresh_index(self, base: Buffer, expr: cst.Subscript, indices: list) -> Optional[Value]:
        """NumPy/torch advanced indexing (`x[index_list]`, `x[index_array]`) copies into
        a fresh pageable array, whatever memory `x` is."""
        if base.mem not in (Mem.PINNED, Mem.PAGEABLE) or len(indices) != 1:
            return None
        value, index = indices[0]
        if index is None:
            return None  # a slice: a view
        fresh = Buffer(base.framework, Mem.PAGEABLE, site=self.site(expr))
        if isinstance(index, (cst.List, cst.ListComp)):
            return fresh
        if isinstance(index, cst.Call) and (
            (isinstance(index.func, cst.Attribute) and index.func.attr.value == "tolist")
            or (isinstance(index.func, cst.Name) and index.func.value in ("list", "sorted"))
        ):
            return fresh
        if isinstance(value, Seq) or (isinstance(value, Buffer) and value.mem is not Mem.DEVICE and not value.maybe_scalar):
            return fresh
        return None

    # --- torch functions beyond the 2-part namespace
    def torch_kernel_namespace(self, qualname: str) -> bool:
        module, _, name = qualname.rpartition(".")
        return module in torch_modules.KERNEL_NAMESPACES and name not in torch_modules.NON_KERNEL_FUNCTIONS

    def foreach(self, qualname: str, node: cst.Call, args: "Args") -> Value:
        """torch._foreach_<op>[_]: in place, it writes every tensor of its first list
        (the others it reads); out of place, it reads them and returns new CUDA tensors."""
        name = qualname.rsplit(".", 1)[-1]
        inplace = name.endswith("_")
        pairs: list[tuple] = []
        for expr, value in [(e, args.values.get(id(e), UNKNOWN)) for e in args.positional]:
            pairs.append(self.list_pairs(expr, value))
        if not pairs:
            return UNKNOWN
        reads = self.accesses([p for group in pairs for p in group])
        result = Buffer("torch", Mem.DEVICE, site=self.site(node))
        writes = self.accesses(pairs[0], write=True) if inplace else self.result_access(result, node)
        self.emit(OpKind.KERNEL, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                  accesses=reads + writes, result=None if inplace else result)
        return UNKNOWN if inplace else Seq(element=result)

    # --- storage release
    def storage_release(self, node: cst.Call) -> bool:
        """`t.untyped_storage().resize_(0)`: t's memory goes back to the allocator now."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "resize_"):
            return False
        inner = func.value
        if not (isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)
                and inner.func.attr.value in torch_modules.STORAGE_METHODS):
            return False
        if not (len(node.args) == 1 and isinstance(node.args[0].value, cst.Integer) and node.args[0].value.value == "0"):
            return False
        tensor_expr = inner.func.value
        value = self.eval(tensor_expr)
        hb = self.state.hb
        if hb is not None and isinstance(value, Buffer) and value.site and ("b", value.site, "") in hb.allocs:
            for hazard in hb.released(("b", value.site, ""), node, self.code(tensor_expr)):
                self.hazards.setdefault(hazard.identity, hazard)
        return True

    # --- modules and optimizers
    def module_params(self, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The expression naming a module whose parameters the ordering check can key."""
        return expr if _SIMPLE.match(self.code(expr)) else None

    def module_method(self, method: str, node: cst.Call, args: "Args") -> bool:
        """`model.to(device, non_blocking=True)`, `model.half()`, `model.cpu()`: what
        they do to the module's parameters, on the current stream (True: handled)."""
        effect = torch_modules.MODULE_METHODS.get(method)
        recv = self.module_params(node.func.value) if isinstance(node.func, cst.Attribute) else None
        if effect is None or recv is None or effect == torch_modules.MODULE_NONE:
            return False
        stream = self.state.current["torch"]
        label = self.code(node.func)
        if effect == torch_modules.MODULE_DEVICE:
            target = args.value(Arg(0, "device"))
            if "device" not in args.keywords and not args.positional:
                return False
            if _is_cpu_target(target):
                effect = torch_modules.MODULE_RELEASE
            elif _is_cuda_target(target) or isinstance(target, QualRef):
                effect = torch_modules.MODULE_WRITE
            else:
                return False
        if effect == torch_modules.MODULE_RELEASE:
            # Copied out on the current stream (a blocking D2H copy), then freed: the
            # allocator hands the memory to the current stream's next allocation, a write
            # as far as another stream still reading the parameters is concerned.
            self.emit(OpKind.COPY_D2H, label, node, "torch", stream=stream, host_blocking=True,
                      accesses=self.accesses([(recv, UNKNOWN)], space=DEVICE)
                      + self.accesses([(recv, UNKNOWN)], write=True, space=DEVICE))
            return True
        non_blocking = _const_bool(args.value(Arg(kw="non_blocking") if method == "to" else Arg(0, "non_blocking")))
        kind = OpKind.KERNEL if method in ("half", "bfloat16", "float", "double", "type", "zero_grad") else OpKind.COPY
        accesses = self.accesses([(recv, UNKNOWN)], write=True, space=DEVICE)
        if kind is OpKind.COPY:
            self.emit(kind, label, node, "torch", stream=stream, non_blocking=non_blocking,
                      host_blocking=None if non_blocking is None else not non_blocking, accesses=accesses)
        else:
            self.emit(kind, label, node, "torch", stream=stream, accesses=accesses)
        return True

    def discarded_module_call(self, expr: cst.BaseExpression) -> bool:
        """`model.to(device, non_blocking=True)` as a statement: its result is dropped, so
        it is called for its effect on the receiver: a module's parameters (a tensor's
        `.to()` would be pointless, so even a receiver typed as a tensor is a module here)."""
        if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
                and expr.func.attr.value in torch_modules.MODULE_RETURNS_SELF and self.an.torch_imported):
            return False
        recv = self.module_params(expr.func.value)
        if recv is None:
            return False
        held = self.eval_quiet(recv)
        if not (held is UNKNOWN or isinstance(held, (TorchModule, Instance))
                or (isinstance(held, Buffer) and held.framework == "torch" and held.mem is Mem.DEVICE)):
            return False  # a host tensor's `.cuda()` is a copy, whatever happens to its result
        return self.module_method(expr.func.attr.value, expr, self.eval_args(expr))

    def module_reads(self, node: cst.Call) -> tuple[Access, ...]:
        """Calling a module reads its parameters. Parameters made before the body began
        are taken as complete (set up long before, with blocking copies): only a write
        the body shows (`model.to(..., non_blocking=True)`, `opt.step()` on a side stream)
        is ordered against the call, hence UNSURE (never against the parameter entry)."""
        recv = self.module_params(node.func)
        return self.accesses([(recv, UNKNOWN)], space=UNSURE) if recv is not None else ()

    @staticmethod
    def optimizer_class(qualname: str) -> bool:
        if not qualname.startswith(torch_modules.OPTIMIZER_NAMESPACES):
            return False
        parts = qualname.split(".")
        return parts[-1][:1].isupper() and not any(p in torch_modules.OPTIMIZER_NOT_CLASSES for p in parts)

    def make_optimizer(self, node: cst.Call, args: "Args") -> Value:
        params = args.expr(Arg(0, "params"))
        label = ""
        if isinstance(params, cst.Call) and isinstance(params.func, cst.Attribute) and \
                params.func.attr.value in ("parameters", "named_parameters"):
            params = params.func.value
        if params is not None and _SIMPLE.match(self.code(params)):
            label = self.code(params)
        return Optimizer(label, site=self.site(node))

    def optimizer_method(self, opt: Optimizer, method: str, node: cst.Call) -> Value:
        """`opt.step()`: reads the gradients and writes the parameters on the current
        stream; `opt.zero_grad()`: writes the gradients."""
        self.eval_args(node)
        effect = torch_modules.OPTIMIZER_METHODS.get(method)
        if effect is None or not self.an.torch_imported:
            return UNKNOWN
        accesses: tuple[Access, ...] = ()
        if opt.params:
            key = ("n", opt.params, "")
            if effect == torch_modules.OPT_STEP:
                accesses = (Access(key, opt.params, False, DEVICE), Access(key, opt.params, True, DEVICE))
            else:
                accesses = (Access(key, opt.params, True, DEVICE),)
        self.emit(OpKind.KERNEL, self.code(node.func), node, "torch", stream=self.state.current["torch"],
                  accesses=accesses)
        return UNKNOWN


def per_thread_switched(source: str) -> set[str]:
    """Frameworks a file switches to the per-thread default stream: an assignment of an
    'on' value to one of per_thread.SWITCHES (`os.environ[...] = "1"`,
    `os.environ.setdefault("...", "1")`, `config.CUDA_PER_THREAD_DEFAULT_STREAM = 1`),
    and those the project's config names (`per-thread-default-stream`)."""
    found: set[str] = set(declared.per_thread_configured())
    if "PER_THREAD_DEFAULT_STREAM" not in source:
        return found
    for name, frameworks in per_thread.SWITCHES.items():
        pattern = (r"(?<![A-Z_])" + re.escape(name) + r"""['"]?\s*(?:\]\s*=|,|=)\s*['"]?(\w+)""")
        for m in re.finditer(pattern, source):
            if m.group(1) in per_thread.ON_VALUES:
                found.update(frameworks)
    return found
