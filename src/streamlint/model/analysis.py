"""One analysis per file: walk the module, every function and every method once.

The result, `FileAnalysis`, is a plain record (functions -> GpuOps) that rules query.
Calls to functions of the same file use the callee's record as its summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Iterator, Mapping, Optional

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from pathlib import Path

from streamlint.model import api, project
from streamlint.model.flow import LOCAL, Walker
from streamlint.model.hazards import DEVICE, HOSTMEM, UNSURE
from streamlint.model.ops import DEVICE_WORK, HOST_SYNCS, FunctionRecord, GpuOp, HelperRef, OpKind
from streamlint.model.values import (
    UNKNOWN, Buffer, Instance, Mem, Kernel, LocalFunction, QualRef, Stream, StreamKind, TorchModule, Value,
)

if TYPE_CHECKING:
    from streamlint.model.flow import Args

_TORCH_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# Ops a helper contributes at its call site: work on the caller's or the default
# stream, and host synchronizations (both change what the caller's streams can overlap).
_PROPAGATED = DEVICE_WORK | HOST_SYNCS | {OpKind.RAW_ALLOC}
# ... and, for the ordering check, the helper's waits, event records and record_stream.
_ORDERING = frozenset({OpKind.EVENT_RECORD, OpKind.STREAM_WAIT_EVENT, OpKind.WAIT_STREAM, OpKind.RECORD_STREAM})


@dataclass
class FileAnalysis:
    module: cst.Module
    functions: list[FunctionRecord]
    _codes: dict[int, str] = field(default_factory=dict, repr=False)
    _positions: Optional[Mapping[cst.CSTNode, CodeRange]] = field(default=None, repr=False)
    path: str = ""  # the file, when known (messages about other modules name it)

    @property
    def ops_seen(self) -> bool:
        return any(record.ops for record in self.functions)

    def all_ops(self, helpers: bool = False) -> Iterator[tuple[FunctionRecord, GpuOp]]:
        """Every operation with its body. `helpers=True` adds the operations that
        same-module helpers contribute at their call sites (rules about hidden
        default-stream work and blocking copies report those there)."""
        for record in self.functions:
            for op in record.ops:
                if helpers or op.helper is None:
                    yield record, op

    def code(self, node: cst.CSTNode) -> str:
        key = id(node)
        text = self._codes.get(key)
        if text is None:
            text = self.module.code_for_node(node).strip()
            self._codes[key] = text
        return text

    def positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        """Source ranges of every node. A full extra pass over the tree, so it runs
        only when a rule reports something (findings and their messages need it)."""
        if self._positions is None:
            # unsafe_skip_copy keeps the node identities the analysis recorded.
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = wrapper.resolve(PositionProvider)
        return self._positions

    def line_of(self, node: cst.CSTNode) -> int:
        rng = self.positions().get(node)
        return rng.start.line if rng else 0


@dataclass
class _Function:
    value: LocalFunction
    node: cst.FunctionDef
    params: list[str]
    class_name: Optional[str]
    record: Optional[FunctionRecord] = None
    returns: Value = UNKNOWN
    created_streams: frozenset = frozenset()
    in_progress: bool = False


@dataclass
class _Class:
    name: str
    node: cst.ClassDef
    torch_module: bool
    methods: dict[str, LocalFunction] = field(default_factory=dict)
    attrs: dict[str, Value] = field(default_factory=dict)
    init_done: bool = False


class FileAnalyzer:
    def __init__(self, module: cst.Module, path: str = "", depth: int = 0) -> None:
        self.module = module
        self.path = path
        self.depth = depth  # how many modules away from the file being checked
        self.result = FileAnalysis(module, [], path=path)
        self.functions: dict[int, _Function] = {}
        self.classes: dict[str, _Class] = {}
        self.torch_imported = False
        self.numba_imported = False
        self.gpu_imported = False
        self.module_walker: Optional[Walker] = None
        self._kernel_writes: dict[int, frozenset[int]] = {}
        self.called: set[int] = set()  # functions of this file called from this file

    def module_vars(self) -> dict[str, Value]:
        return self.module_walker.state.vars if self.module_walker is not None else {}

    def code(self, node: cst.CSTNode) -> str:
        return self.result.code(node)

    # ------------------------------------------------------------------ driver
    def run(self) -> FileAnalysis:
        record = FunctionRecord("<module>", self.module, "module")
        walker = Walker(self, record)
        self.module_walker = walker
        walker.walk(self.module.body)
        self.result.functions.insert(0, record)
        for function in list(self.functions.values()):
            self.analyse(function)
        if self.needs_hazard_walk(record):
            self.hazard_walk(record, list(self.module.body), [], {})
        # A helper's parameters are checked at its call sites, with the real arguments;
        # the parameter convention only speaks for functions nobody here calls.
        for rec in self.result.functions:
            if id(rec.node) in self.called:
                rec.hazards = [h for h in rec.hazards if not h.param]
        return self.result

    def analyse(self, function: _Function) -> Optional[FunctionRecord]:
        if function.record is not None:
            return function.record
        if function.in_progress:
            return None  # recursion: no summary
        function.in_progress = True
        cls = self.classes.get(function.class_name) if function.class_name else None
        name = function.value.name
        kind = "method" if cls else "function"
        record = FunctionRecord(
            f"{cls.name}.{name}" if cls else name, function.node, kind,
            class_name=cls.name if cls else None,
            is_forward=bool(cls and cls.torch_module and name == "forward"),
        )
        seed: dict[str, Value] = {p: UNKNOWN for p in function.params}
        params = list(function.params)
        if cls and params:
            seed[params[0]] = Instance(cls.name)
            if params[0] == "self":
                # Attributes set in __init__ are known in every method.
                if name != "__init__":
                    seed.update({f"self.{k}": v for k, v in self.init_attrs(cls).items()})
            params = params[1:]
        walker = Walker(self, record, params=params, seed=seed)
        body = function.node.body.body if isinstance(function.node.body, cst.IndentedBlock) else [function.node.body]
        walker.walk(body)
        function.record = record
        function.returns = walker.returns if walker.returns is not None else UNKNOWN
        function.created_streams = frozenset(
            op.result.site for op in record.ops if op.kind is OpKind.STREAM_CREATE and isinstance(op.result, Stream)
        )
        if cls and name == "__init__":
            cls.attrs.update({k[5:]: v for k, v in walker.state.vars.items() if k.startswith("self.")})
            cls.init_done = True
        if self.needs_hazard_walk(record):
            self.hazard_walk(record, list(body), params, seed)
        function.in_progress = False
        self.result.functions.append(record)
        return record

    # ------------------------------------------------------------------ bindings
    def import_bindings(self, node: cst.Import | cst.ImportFrom) -> Iterator[tuple[str, Value]]:
        if isinstance(node, cst.Import):
            for alias in node.names:
                dotted = self.code(alias.name)
                self.note_framework(dotted)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    yield alias.asname.name.value, QualRef(api.normalize(dotted))
                else:
                    root = dotted.split(".", 1)[0]
                    yield root, QualRef(root)
            return
        if isinstance(node.names, cst.ImportStar) or node.module is None and not node.relative:
            return
        base = ("." * len(node.relative)) + (self.code(node.module) if node.module is not None else "")
        self.note_framework(base)
        for alias in node.names:  # type: ignore[union-attr]
            name = self.code(alias.name)
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
            yield local, QualRef(api.normalize(f"{base}.{name}"))

    def note_framework(self, dotted: str) -> None:
        root = dotted.split(".", 1)[0]
        if root == "torch":
            self.torch_imported = True
        elif root == "numba":
            self.numba_imported = True
        if api.framework_of(dotted):
            self.gpu_imported = True

    def define_function(self, node: cst.FunctionDef, walker: Walker) -> None:
        for decorator in node.decorators:
            kernel = self.kernel_decorator(decorator.decorator, walker)
            if kernel is True:
                walker.state.vars[node.name.value] = Kernel("numba", node.name.value, node=node, site=id(node))
                return
            if kernel is False:  # a device function: not launchable from the host
                walker.state.vars[node.name.value] = UNKNOWN
                return
        params = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        params += [p.name.value for p in node.params.kwonly_params]
        owner = walker.record.class_name if walker.record.kind == "class" else None
        value = LocalFunction(node.name.value, node, site=id(node), owner=owner)
        function = _Function(value, node, params, owner)
        self.functions[id(node)] = function
        walker.state.vars[node.name.value] = value

    def kernel_decorator(self, expr: cst.BaseExpression, walker: Walker) -> Optional[bool]:
        """True for @cuda.jit kernels, False for @cuda.jit(device=True), None otherwise."""
        target = expr.func if isinstance(expr, cst.Call) else expr
        value = walker.lookup(target.value) if isinstance(target, cst.Name) else None
        if value is None and isinstance(target, cst.Attribute):
            saved = len(walker.record.ops)
            value = walker.eval(target)
            del walker.record.ops[saved:]
        if not (isinstance(value, QualRef) and value.qualname == "numba.cuda.jit"):
            return None
        if isinstance(expr, cst.Call):
            for arg in expr.args:
                if arg.keyword is not None and arg.keyword.value == "device":
                    return not (isinstance(arg.value, cst.Name) and arg.value.value == "True")
        return True

    def define_class(self, node: cst.ClassDef, walker: Walker) -> None:
        torch_module = False
        for base in node.bases:
            saved = len(walker.record.ops)
            value = walker.eval(base.value)
            del walker.record.ops[saved:]
            if isinstance(value, QualRef):
                if value.qualname in _TORCH_MODULE_BASES:
                    torch_module = True
                elif value.qualname.startswith(LOCAL):
                    parent = self.classes.get(value.qualname[len(LOCAL):])
                    torch_module = torch_module or bool(parent and parent.torch_module)
        info = _Class(node.name.value, node, torch_module)
        self.classes[info.name] = info
        body_record = FunctionRecord(info.name, node, "class", class_name=info.name)
        body = Walker(self, body_record)
        for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else []:
            if isinstance(stmt, cst.FunctionDef):
                body.stmt(stmt)
                value = body.state.vars.get(stmt.name.value)
                if isinstance(value, LocalFunction):
                    info.methods[stmt.name.value] = value
                    self.functions[value.site].class_name = info.name
            else:
                body.stmt(stmt)
        info.attrs.update({k: v for k, v in body.state.vars.items() if k not in info.methods})
        if body_record.ops:
            walker.record.ops.extend(replace(op, index=len(walker.record.ops) + i) for i, op in enumerate(body_record.ops))
        walker.state.vars[info.name] = QualRef(LOCAL + info.name)

    def kernel_writes(self, kernel: Kernel) -> Optional[frozenset[int]]:
        """Positions of the parameters a Numba kernel's body writes (None: cannot tell).

        A parameter is written when it is the base of a subscript assignment
        (`y[i] = ...`, `y[i] += ...`) or the first argument of `cuda.atomic.*`."""
        node = kernel.node
        if not isinstance(node, cst.FunctionDef):
            return None
        cached = self._kernel_writes.get(id(node))
        if cached is not None:
            return cached
        params = [p.name.value for p in node.params.params]
        written: set[str] = set()

        class Finder(cst.CSTVisitor):
            def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
                written.update(_subscript_bases(target.target))

            def visit_AugAssign(self, aug: cst.AugAssign) -> None:
                written.update(_subscript_bases(aug.target))

            def visit_Call(self, call: cst.Call) -> None:
                func = call.func
                if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and func.value.attr.value == "atomic":
                    if call.args and isinstance(call.args[0].value, (cst.Name, cst.Subscript)):
                        written.update(_subscript_bases(call.args[0].value) or {getattr(call.args[0].value, "value", "")})

        node.body.visit(Finder())
        result = frozenset(i for i, name in enumerate(params) if name in written)
        self._kernel_writes[id(node)] = result
        return result

    # ------------------------------------------------------------------ hazards
    def hazard_walk(self, record: FunctionRecord, body: list, params: list[str], seed: dict) -> None:
        """Walk a body again with the happens-before state; store what it finds."""
        scratch = FunctionRecord(record.name, record.node, record.kind, class_name=record.class_name,
                                 is_forward=record.is_forward)
        walker = Walker(self, scratch, params=params, seed=seed, hazard_mode=True)
        if record.kind == "module":
            walker.state.vars = dict(self.module_vars())
        walker.walk(body)
        walker.finish()
        record.hazards = sorted(walker.hazards.values(), key=lambda h: (h.code, id(h.node)))

    @staticmethod
    def needs_hazard_walk(record: FunctionRecord) -> bool:
        """Only bodies that queue work on explicit streams, copy asynchronously or
        record streams can have cross-stream hazards."""
        for op in record.ops:
            if op.on_explicit_stream or op.kind is OpKind.RECORD_STREAM:
                return True
            if op.kind in (OpKind.COPY_D2H, OpKind.COPY_H2D, OpKind.COPY) and op.host_blocking is False:
                return True
        return False

    # ------------------------------------------------------------------ other modules
    def foreign(self, qualname: str) -> Value:
        """What an imported name denotes in another module of the project, if it is one
        (a function, a kernel, a module-level stream or buffer); UNKNOWN otherwise."""
        if not self.path or "." not in qualname.lstrip("."):
            return UNKNOWN
        module_name, _, name = qualname.rpartition(".")
        if module_name.endswith(".") or not module_name:
            module_name = module_name or "."
        path = project.module_file(self.path, module_name)
        if path is None or str(path) == str(Path(self.path).resolve()):
            return UNKNOWN
        other = project.analyzer_for(path, self.depth + 1)
        if other is None:
            return UNKNOWN
        value = other.module_vars().get(name, UNKNOWN)
        if isinstance(value, LocalFunction):
            return replace(value, home=other)
        return value

    # ------------------------------------------------------------------ classes
    def init_attrs(self, cls: _Class) -> dict[str, Value]:
        if not cls.init_done and "__init__" in cls.methods:
            function = self.functions.get(cls.methods["__init__"].site)
            if function is not None:
                self.analyse(function)
        return cls.attrs

    def class_attr(self, class_name: Optional[str], attr: str) -> Value:
        cls = self.classes.get(class_name) if class_name else None
        if cls is None:
            return UNKNOWN
        return self.init_attrs(cls).get(attr, UNKNOWN)

    def method_of(self, class_name: str, method: str) -> Optional[LocalFunction]:
        cls = self.classes.get(class_name)
        return cls.methods.get(method) if cls else None

    def is_torch_module_class(self, class_name: str) -> bool:
        cls = self.classes.get(class_name)
        return bool(cls and cls.torch_module)

    def instantiate(self, class_name: str) -> Value:
        cls = self.classes.get(class_name)
        if cls is None:
            return UNKNOWN
        return Instance(cls.name)

    # ------------------------------------------------------------------ helpers
    def call_local(self, callee: LocalFunction, node: cst.Call, args: "Args", walker: Walker) -> Value:
        """A call to a function of this file (or of another checked module): its record
        is its summary. Its default-stream work, blocking copies and syncs count at the
        call site; in the hazard walk so do its stream work, waits and buffer accesses,
        with parameters replaced by the caller's arguments."""
        home = callee.home if isinstance(callee.home, FileAnalyzer) else self
        function = home.functions.get(callee.site)
        if function is None:
            return UNKNOWN
        home.called.add(id(function.node))
        record = home.analyse(function)
        if record is None:
            return UNKNOWN
        params = function.params[1:] if function.class_name else function.params
        bound = self.bind_params(params, args)
        exprs = self.bind_exprs(params, args)
        hazard_walk = walker.state.hb is not None
        kinds = _PROPAGATED | _ORDERING if hazard_walk else _PROPAGATED
        for op in record.ops:
            if op.kind not in kinds or op.in_comprehension:
                continue
            stream = self.stream_at_call(op.stream, function, bound, walker, keep_own=hazard_walk, exprs=exprs)
            if stream is None and op.stream is not None:
                continue  # work on a stream the helper made itself: reported inside it
            target = self.stream_at_call(op.target, function, bound, walker, keep_own=True, exprs=exprs) if op.target else op.target
            accesses = self.map_accesses(op.accesses, exprs, bound, walker, function) if hazard_walk else ()
            # Name the function called here; point at the call deepest inside it.
            inner = op.helper
            helper = HelperRef(callee.name, inner.node if inner else op.node, inner.api if inner else op.api,
                               home=inner.home if inner else home.result)
            walker.emit(
                op.kind, op.api, node, op.framework, stream=stream, host_blocking=op.host_blocking,
                is_async_api=op.is_async_api, sync_api=op.sync_api, host_buffer=op.host_buffer,
                non_blocking=op.non_blocking, pinned_out=op.pinned_out, target=target, helper=helper,
                accesses=accesses, event=op.event,
            )
        result = function.returns
        if isinstance(result, Stream) and result.label in bound:
            return bound[result.label]
        if hazard_walk and isinstance(result, Buffer) and result.site:
            return replace(result, site=walker.site(node))  # each call makes a new buffer
        return result

    @staticmethod
    def bind_exprs(params: list[str], args: "Args") -> dict[str, cst.BaseExpression]:
        exprs = dict(zip(params, args.positional))
        exprs.update({k: v for k, v in args.keywords.items() if k in params})
        return exprs

    @staticmethod
    def map_accesses(accesses, exprs, bound, walker: Walker, function: "_Function") -> tuple:
        """A helper's buffer accesses in the caller's terms (parameters -> arguments)."""
        out = []
        for acc in accesses:
            kind, name, region = acc.key
            if kind == "b":
                out.append(acc)
            elif name in exprs:
                value = bound.get(name, UNKNOWN)
                space = acc.space
                if space == UNSURE and isinstance(value, Buffer):
                    space = DEVICE if value.mem is Mem.DEVICE else HOSTMEM
                mapped = walker.access(exprs[name], value, acc.write, space)
                if mapped is not None:
                    out.append(replace(mapped, key=mapped.key[:-1] + (mapped.key[-1] or region,),
                                       assumed=acc.assumed, fresh=acc.fresh))
            elif name.startswith("self.") and function.class_name and walker.record.class_name == function.class_name:
                out.append(acc)
        return tuple(out)

    @staticmethod
    def bind_params(params: list[str], args: "Args") -> dict[str, Value]:
        bound: dict[str, Value] = {}
        for name, expr in zip(params, args.positional):
            bound[name] = args.values.get(id(expr), UNKNOWN)
        for name, expr in args.keywords.items():
            if name in params:
                bound[name] = args.values.get(id(expr), UNKNOWN)
        return bound

    def stream_at_call(self, stream: Optional[Stream], function: _Function, bound: dict[str, Value], walker: Walker,
                       keep_own: bool = False, exprs: Optional[dict] = None) -> Optional[Stream]:
        """Translate a stream seen inside a helper into the caller's terms."""
        if stream is None:
            return None
        if stream.kind is StreamKind.AMBIENT:
            return walker.state.current.get(stream.framework, stream)
        if stream.kind is not StreamKind.EXPLICIT:
            return stream
        if stream.site in function.created_streams:
            return stream if keep_own else None
        if stream.label in bound:
            value = bound[stream.label]
            if isinstance(value, Stream):
                return value
            if exprs and stream.label in exprs:
                return walker.stream_from(value, exprs[stream.label], stream.framework)
            return replace(stream, site=hash(("arg", walker.record.name, stream.label)))
        return stream


def analyze_module(module: cst.Module, path: str = "") -> FileAnalysis:
    return FileAnalyzer(module, path=path).run()


def _subscript_bases(target: cst.BaseExpression) -> set[str]:
    names: set[str] = set()
    node = target
    if isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            names |= _subscript_bases(element.value)
        return names
    while isinstance(node, cst.Subscript):
        node = node.value
        if isinstance(node, cst.Name):
            names.add(node.value)
    return names
