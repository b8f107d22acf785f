"""One analysis per file: walk the module, every function and every method once.

The result, `FileAnalysis`, is a plain record (functions -> GpuOps) that rules query.
Calls to functions of the same file use the callee's record as its summary.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping, Optional, Sequence

import libcst as cst
from libcst.metadata import CodeRange

from streamlint.deadline import tick
from streamlint.model import (
    api, class_text, classes, declared, duck, evidence, handouts, lazy_parse, peers, positions, project, reads, reverse,
    summary_digest, switches, training_steps,
)
from streamlint.model.api import mpi, python_std, torch_api, torch_modules
from streamlint.model.flow import OTHER, Walker, leaves, rare_test, selector
from streamlint.model.walk_common import LOCAL, _is_cpu_target, nonempty_test
from streamlint.model.tree import children
from streamlint.model.hazards import (
    DEVICE, HOST_LABEL, HOST_RAW, HOSTMEM, RAW, RELEASE, UNSURE, WAR, Access, Hazard, stream_key,
)
from streamlint.model.ops import (
    DEVICE_WORK,
    HOST_SYNCS,
    FunctionRecord,
    GpuOp,
    HelperRef,
    OpKind,
)
from streamlint.model.values import (
    UNKNOWN,
    Buffer,
    Const,
    DictOf,
    Device,
    Event,
    Instance,
    Kernel,
    Loader,
    LocalFunction,
    Mem,
    QualRef,
    Seq,
    Stream,
    StreamContext,
    StreamKind,
    Value,
    ambient_stream,
    join,
)

if TYPE_CHECKING:
    from streamlint.model.flow import Args

# Helpers walked again per call for their return value: small ones, not too deep.
_SPECIALIZE_MAX_STATEMENTS = 12
_SPECIALIZE_MAX_DEPTH = 3
_CONTEXT_MAX_STATEMENTS = 40  # helpers walked again under a caller's streams
_LEGACY_FRAMEWORKS = frozenset({"cupy", "cupyx", "numba", "cuda"})
_CONTEXT_MANAGER_DECORATORS = frozenset({"contextmanager", "asynccontextmanager"})
_TORCH_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# Ops a helper contributes at its call site: work on the caller's or the default
# stream, and host synchronizations (both change what the caller's streams can overlap).
_PROPAGATED = DEVICE_WORK | HOST_SYNCS | {OpKind.RAW_ALLOC}
# ... and, for the ordering check, the helper's waits, event records and record_stream.
_ORDERING = frozenset({OpKind.EVENT_RECORD, OpKind.STREAM_WAIT_EVENT, OpKind.WAIT_STREAM, OpKind.RECORD_STREAM})
# A method's hazard-walk ops replayed at `self.method()` calls, when it has at most this many.
_HAZARD_OPS_MAX = 200


# `self.<attr> =` as a substring test finds it (`myself.x =` and `self.x ==` included).
_SELF_ASSIGNED = re.compile(r"self\.(\w+) =")

@dataclass
class FileAnalysis:
    module: cst.Module
    functions: list[FunctionRecord]
    _codes: dict[int, str] = field(default_factory=dict, repr=False)
    _positions: Optional[Mapping[cst.CSTNode, CodeRange]] = field(default=None, repr=False)
    path: str = ""  # the file, when known (messages about other modules name it)
    source: str = field(default="", repr=False)
    # node -> the statement placed to find its position: the top-level statement, or the
    # method of a top-level class (its class in `member_of`), generated without the rest
    tops: dict[int, cst.CSTNode] = field(default_factory=dict, repr=False)
    member_of: dict[int, cst.ClassDef] = field(default_factory=dict, repr=False)
    _done_tops: set[int] = field(default_factory=set, repr=False)
    torch_namespace: str = "torch.cuda"  # how advice spells torch.cuda here (`get_accelerator()`)
    cupy_namespace: str = "cupy"  # ... and the cupy module (`cp`, `cuda.cupy` under Chainer)
    # id(node) -> its parent, built by the first rule that builds a fix (fixes/edits.py)
    # and shared by the others: each full walk of a big tree takes seconds.
    parents: Optional[dict[int, cst.CSTNode]] = field(default=None, repr=False)

    # The v3 model of this file (model/file_model.py), built on first use by a rule that
    # has moved to it; the v2 records above go when every rule has.
    _v3: Optional[object] = field(default=None, repr=False)

    @property
    def v3(self):
        if self._v3 is None:
            from streamlint.model.file_model import analyze_file

            self._v3 = analyze_file(self.module, self.path)
        return self._v3

    @property
    def ops_seen(self) -> bool:
        return any(record.ops for record in self.functions)

    def all_ops(self, helpers: bool = False) -> Iterator[tuple[FunctionRecord, GpuOp]]:
        """Every operation with its body. `helpers=True` adds the operations that
        same-module helpers contribute at their call sites (rules about hidden
        default-stream work and blocking copies report those there)."""
        for record in self.functions:
            for op in record.ops:
                tick()  # rules do per-operation work: the per-file time bound covers it
                if helpers or op.helper is None:
                    yield record, op

    def code(self, node: cst.CSTNode) -> str:
        """Source text of a node, for labels and messages. Dotted names, calls and simple
        subscripts are spelled from the tree (cheap); anything else is generated by
        libcst, which costs a pass over the node, so it is cached."""
        key = id(node)
        text = self._codes.get(key)
        if text is None:
            text = _spell(node)
            if text is None:
                text = self.module.code_for_node(node).strip()
            self._codes[key] = text
        return text

    def position(self, node: cst.CSTNode) -> Optional[CodeRange]:
        """Source range of a node the analysis recorded: the statement that holds it is
        placed once (positions.py), the whole module only when that fails."""
        rng = self._positions.get(node) if self._positions else None
        if rng is not None:
            return rng
        top = self.tops.get(id(node))
        cls = self.member_of.get(id(top)) if top is not None else None
        tries = []
        if cls is not None:
            tries.append((top, lambda m=top: positions.of_member(self.module, self.source, cls, m)))
            top = cls  # (a method whose text is not unique: its class)
        if top is not None:
            tries.append((top, lambda t=top: positions.of_statement(self.module, self.source, t)))
        for unit, place in tries:
            if id(unit) in self._done_tops:
                continue
            self._done_tops.add(id(unit))
            found = place()
            if found:
                self._positions = {**(self._positions or {}), **found}
                if node in found:
                    return found[node]
        self._positions = positions.of_module(self.module)
        self._done_tops = {id(stmt) for stmt in self.module.body}
        return self._positions.get(node)

    def line_of(self, node: cst.CSTNode) -> int:
        rng = self.position(node)
        return rng.start.line if rng else 0


@dataclass
class _Function:
    value: LocalFunction
    node: cst.FunctionDef
    params: list[str]
    class_name: Optional[str]
    top: Optional[cst.CSTNode] = None  # the top-level statement that holds the definition
    self_attrs: dict = field(default_factory=dict)  # `self.x` values when the method ends
    record: Optional[FunctionRecord] = None
    returns: Value = UNKNOWN
    created_streams: frozenset = frozenset()
    in_progress: bool = False
    # Names of the enclosing body when a nested function was defined (closures).
    closure: dict = field(default_factory=dict)
    context_manager: bool = False  # decorated with @contextmanager
    is_property: bool = False  # decorated with @property: `self.name` is its return value
    memoized: bool = False  # @functools.cache and the like (api/python_std.py): runs once per arguments
    yield_current: dict = field(default_factory=dict)  # current streams at its first `yield`
    # What every call site in the file passes, and the parameters that evidence types.
    call_sites: list = field(default_factory=list)
    site_callers: list = field(default_factory=list)  # for each of call_sites: the calling function's node id
    evident_locals: frozenset = frozenset()  # names its own uses show to be CUDA tensors
    scalar_params: frozenset = frozenset()  # parameters its signature shows are no buffers
    caller_evidence: dict = field(default_factory=dict)
    # Parameters its callers hand it as the (non-blocking) stream for its work
    # (apply_given_stream_evidence): its buffer parameters are produced there.
    given_streams: tuple = ()
    hazard_args: Optional[tuple] = None  # (body, params, seed) of its hazard walk, to walk it again
    exit_pending: dict = field(default_factory=dict)  # what it leaves pending on `self` (classes.py)
    # The ops of its hazard walk (its own helpers' accesses and waits included), once each,
    # when few: what a `self.method()` call replays in the caller's hazard walk.
    hazard_ops: Optional[list] = None
    # What its hazard walk returns and leaves on `self` in lists and tuples holding device
    # memory: their buffers are keyed as `hazard_ops`'s accesses are (the hazard walk's sites).
    hazard_returns: Value = UNKNOWN
    hazard_self_attrs: dict = field(default_factory=dict)
    # The functions of this file that call it on every run of theirs (not in a loop or a
    # comprehension, not under a rare test: a flag, `x is None`, every N steps): their ids.
    steady_callers: set = field(default_factory=set)
    callers: set = field(default_factory=set)  # every function of this file that calls it: ids
    # Its calls in this file under a side stream the caller made current; the functions
    # that call it otherwise (on their caller's stream): ids
    side_stream_calls: int = 0
    caller_stream_callers: set = field(default_factory=set)
    option_worlds: tuple = ()  # option values its hazard walk is worth repeating under (switches.option_worlds)


@dataclass
class _Class:
    name: str
    node: cst.ClassDef
    torch_module: bool
    methods: dict[str, LocalFunction] = field(default_factory=dict)
    attrs: dict[str, Value] = field(default_factory=dict)
    init_done: bool = False
    stream_attrs: Optional[frozenset] = None  # attributes used as streams (evidence.stream_attributes)
    device_attrs: Optional[frozenset] = None  # attributes used as CUDA tensors (evidence.device_attributes)
    # method -> the `self.<attr>` its text assigns (class_text.py); None: not read yet or unreadable
    assigns: Optional[dict[str, frozenset[str]]] = None
    assigns_read: bool = False
    runs_backward: Optional[bool] = None  # does the class's text call `.backward(` (read once)?


class FileAnalyzer:
    def __init__(self, module: cst.Module, path: str = "", depth: int = 0, summaries_only: bool = False,
                 source: str = "") -> None:
        self.module = module
        self.path = path
        # Another module read for its functions' summaries: analyse a function only when
        # a caller needs it, and skip the hazard walks (findings there are not reported).
        self.summaries_only = summaries_only
        # Other modules' own imports are followed too, as deep as project.MAX_DEPTH allows.
        self.follow_imports = bool(path)
        self.results_matter = True  # a helper's return value can decide a finding here
        # Functions (node ids) that read `x[i].item()` in a loop on a value we cannot place.
        self.unknown_element_reads: set[int] = set()
        # Where calls are followed whatever their arguments (None: wherever results matter).
        self.results_matter_in: Optional[frozenset] = None
        self.depth = depth  # how many modules away from the file being checked
        self.result = FileAnalysis(module, [], path=path, source=source)
        self.functions: dict[int, _Function] = {}
        self.classes: dict[str, _Class] = {}
        self.torch_imported = False
        self._device_gate: Optional[bool] = None  # whether the text can show CUDA-only calls on attributes
        self._allocated_later: dict[tuple[str, str], bool] = {}
        self._duck_receivers: Optional[frozenset[str]] = None  # duck.receivers, once per file
        self.numba_imported = False
        self.gpu_imported = False
        # The module body's walker while it runs, then only the names it bound: a walker
        # refers to its analyzer, and keeping it would make a cycle that holds the whole
        # syntax tree until the cyclic collector runs (which then scans every node).
        self.module_walker: Optional[Walker] = None
        self._module_vars: dict[str, Value] = {}
        self._kernel_writes: dict[int, frozenset[int]] = {}
        self.called: set[int] = set()  # functions of this file called from this file
        self.hooks: set[int] = set()  # sites of functions registered as hooks (calls.note_hook)
        # Sites of methods a `forward` in another module calls on every call -> that `forward`.
        self.remote_hot: dict[int, str] = {}
        self._options: Optional[switches.Options] = None  # (config_attributes, once per module)
        # Calls of top-level functions of other modules: (their module's path, name) ->
        # the arguments of each call (the callers reverse.py finds for that module).
        self.calls_out: dict[tuple[str, str], list[dict[str, Value]]] = {}
        # Calls `x.m(...)` on objects the walk cannot type, for the method names asked
        # (reverse.method_call_sites): m -> each call's arguments (None: a `*args` call).
        self.wanted_methods: set[str] = set()
        self.method_calls_out: dict[str, list[Optional["Args"]]] = {}
        # ... of those, the calls `super().m(...)`: m -> (the caller's class, its arguments).
        self.super_calls_out: dict[str, list[tuple[str, Optional["Args"]]]] = {}
        self.imported_roots: set[str] = set()  # top-level packages the file imports (or implies)
        self.direct_roots: set[str] = set()  # ... as the file spells its imports
        self.specialized: dict[tuple, Value] = {}  # (helper, arguments) -> what it returns
        self._non_blocking_text: dict[int, bool] = {}  # function node id -> its text asks for non_blocking
        self.none_tested_params: dict[int, frozenset] = {}  # function node -> parameters tested against None
        self.class_handouts: dict[str, dict] = {}  # class -> containers its public methods hand out (handouts.py)
        self.specializing = 0
        # (function, the classes of the objects its parameters are given) -> its record so
        # walked (`instance_summary`); None while being made or when it cannot be.
        self.instance_summaries: dict[tuple, Optional[FunctionRecord]] = {}
        self.synced_copies: set[int] = set()  # helpers' copies a caller here read after a wait
        self.returned_copies: set[int] = set()  # sites of host tensors helpers returned with their copy pending
        self._holder_assigns: Optional[peers.HolderAssigns] = None  # built when a function asks
        self._holder_peers: dict[int, dict] = {}  # function node id -> its holder peers
        self._evidence: dict = {}  # id(function node) -> the evidence in its body (evidence.py)
        self._class_starts: Optional[dict[str, list[tuple[int, int]]]] = None  # class_text.class_starts
        self._self_assignments: Optional[Counter[str]] = None
        # (class, attribute) -> inherited_attr; (class, attribute, "host") -> _host_elsewhere
        self._inherited: dict[tuple, Value] = {}
        # The module's text when known: a method's code is part of it, so text the
        # module lacks no method has (a test that costs no code generation).
        self.text = source

    def module_vars(self) -> dict[str, Value]:
        return self.module_walker.state.vars if self.module_walker is not None else self._module_vars

    def code(self, node: cst.CSTNode) -> str:
        return self.result.code(node)

    # ------------------------------------------------------------------ driver
    def run(self) -> FileAnalysis:
        record = FunctionRecord("<module>", self.module, "module")
        walker = Walker(self, record)
        self.module_walker = walker
        walker.walk(self.module.body)
        self.result.functions.insert(0, record)
        if self.summaries_only:
            self._module_walked(walker)
            return self.result
        # Nested functions are defined while their enclosing body is walked: a hook or
        # callback handed out (`opt.register_step_post_hook(closure())`) is an entry point too.
        analysed: set[int] = set()
        while len(analysed) < len(self.functions):
            for key, function in list(self.functions.items()):
                if key not in analysed:
                    analysed.add(key)
                    self.analyse(function)
        self.apply_caller_evidence()
        self.apply_importer_evidence()
        self.apply_method_caller_evidence()
        self.apply_subclass_caller_evidence()
        self.apply_given_stream_evidence()
        self.mark_remote_hot_methods()
        self.mark_hot_helpers()
        self.compose_classes()
        self.result.torch_namespace = self.torch_namespace()
        self.result.cupy_namespace = self.cupy_namespace()
        if self.needs_hazard_walk(record):
            self.hazard_walk(record, self.module.body, [], {})
        self.place_returned_copies()
        # A helper's parameters are checked at its call sites, with the real arguments;
        # the parameter convention only speaks for functions nobody here calls.
        # So do threads' targets: their arguments come from another thread, whose ordering
        # (a wait before it signals the thread) the walk of this function cannot see.
        targets: Optional[frozenset] = None
        for rec in self.result.functions:
            if not any(h.param and not h.owned for h in rec.hazards):
                continue
            if targets is None:
                targets = _thread_targets(self.module) if "target=" in self.text else frozenset()
            if id(rec.node) in self.called or (isinstance(rec.node, cst.FunctionDef) and rec.node.name.value in targets):
                rec.hazards = [h for h in rec.hazards if not h.param or h.owned]
        self._module_walked(walker)
        return self.result

    def place_returned_copies(self) -> None:
        """A helper of this file returns the host tensor of an asynchronous copy still in
        flight, and every caller here that reads it on the host does so before a wait: the
        wait belongs in the helper (its callers take the result as ready), so the reads make
        one hazard, placed at the helper's copy. Where some caller waits before reading, the
        helper leaves the wait to its callers: each that does not is reported at its read.
        (A copy into a buffer the caller handed the helper stays at the read.)"""
        groups: dict[int, list[tuple[FunctionRecord, Hazard]]] = {}
        for rec in self.result.functions:
            for h in rec.hazards:
                helper = h.other_via
                if h.kind is HOST_RAW and not h.param and helper is not None \
                        and (helper.home is None or helper.home is self.result) \
                        and h.key[:1] == ("b",) and h.key[1] in self.returned_copies:
                    groups.setdefault(id(helper.node), []).append((rec, h))
        for copy, found in groups.items():
            if copy in self.synced_copies:
                continue
            rec, first = found[0]
            for holder, h in found:
                holder.hazards.remove(h)
            reads = tuple(h.node for _, h in found)
            rec.hazards.append(replace(first, node=first.other_via.node, other=first.node, via=first.other_via,
                                       other_via=None, returned_to=reads))

    def _module_walked(self, walker: Walker) -> None:
        """Keep what the module body bound, not its walker (see __init__)."""
        self._module_vars = walker.state.vars
        self.module_walker = None

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
            is_forward=bool(cls and cls.torch_module and name == "forward") or _optimizer_step(cls, name, self)
            or self._backward_step(cls, function),
        )
        seed: dict[str, Value] = {p: UNKNOWN for p in function.params}
        seed.update(function.closure)
        seed.update(function.caller_evidence)
        for param, value in self.evident_params(function).items():
            given = function.caller_evidence.get(param)
            if isinstance(value, Stream) and value.blocking is None and isinstance(given, Stream):
                continue  # (the callers say which kind of stream: theirs is the more exact)
            seed[param] = value
        if self.follow_imports and self.depth == 0 and self.raw_memory_code:
            own = function.params[:1] if cls else []  # (`self`: its class is known)
            if self._duck_receivers is None:
                self._duck_receivers = duck.receivers(self)
            unknown = [p for p in function.params if p not in own and seed.get(p, UNKNOWN) is UNKNOWN
                       and p in self._duck_receivers]
            if unknown:
                seed.update(duck.classes_of(self, duck.methods_called(function.node, unknown)))
        params = list(function.params)
        if cls and params:
            seed[params[0]] = Instance(cls.name)
            if params[0] == "self":
                # Attributes set in __init__ are known in every method.
                if name != "__init__":
                    # (a `None` placeholder is looked up when read: another method may set it)
                    seed.update({f"self.{k}": v for k, v in self.method_view_of_attrs(cls).items()
                                 if v != Const(None) or not self.maybe_allocated_later(cls, k)})
                    for attr in self.device_attributes(cls):
                        if seed.get(f"self.{attr}", UNKNOWN) in (UNKNOWN, Const(None)):
                            # (the class's own use shows a CUDA tensor: keyed by its name)
                            seed[f"self.{attr}"] = Buffer("torch", Mem.DEVICE, label=f"self.{attr}")
            params = params[1:]
        function.evident_locals = frozenset(
            name for name, kind in evidence.local_kinds(function.node, frozenset(self.imported_roots),
                                                        self.evidence_memo()).items()
            if kind is evidence.Kind.TORCH_CUDA and name not in function.params
        )
        function.scalar_params = self.scalar_params(function.node)
        walker = Walker(self, record, params=params, seed=seed, top=function.top)
        walker.evident_tensors = function.evident_locals
        walker.scalar_names = function.scalar_params
        self.result.tops[id(function.node)] = function.top
        body = function.node.body.body if isinstance(function.node.body, cst.IndentedBlock) else [function.node.body]
        walker.walk(body)
        function.record = record
        function.returns = walker.returns if walker.returns is not None else UNKNOWN
        function.yield_current = walker.yield_current or {}
        function.created_streams = frozenset(
            op.result.site for op in record.ops if op.kind is OpKind.STREAM_CREATE and isinstance(op.result, Stream)
        )
        function.self_attrs = {k[5:]: v for k, v in walker.state.vars.items() if k.startswith("self.")}
        if cls and name == "__init__":
            cls.attrs.update(function.self_attrs)
            cls.init_done = True
        if not self.summaries_only and self.needs_hazard_walk(record):
            function.hazard_args = (list(body), params, seed)
            hazard_walker = self.hazard_walk(record, list(body), params, seed)
            if cls is not None:
                function.exit_pending = classes.pending_at_exit(hazard_walker)
                function.option_worlds = switches.option_worlds(hazard_walker.record.ops, _OPTION_WORLDS_MAX)
                function.hazard_ops = _distinct_ops(hazard_walker.record.ops)
                if isinstance(hazard_walker.returns, Seq) and _holds_device(hazard_walker.returns):
                    function.hazard_returns = hazard_walker.returns
                function.hazard_self_attrs = {
                    k[5:]: v for k, v in hazard_walker.state.vars.items()
                    if k.startswith("self.") and k.count(".") == 1 and isinstance(v, Seq) and _holds_device(v)}
        elif not self.summaries_only and cls is not None and classes.is_public(name):
            # A getter queues nothing itself, but may hand out what another method left
            # pending on `self`: the class composition walks it with that state.
            function.hazard_args = (list(body), params, seed)
        function.in_progress = False
        self.result.functions.append(record)
        return record

    def evident_params(self, function: "_Function") -> dict[str, Value]:
        """Parameters whose kind the function's own text shows (see evidence.py)."""
        kinds = evidence.param_kinds(
            function.node, function.params, frozenset(self.imported_roots), self.qualname_of, self.default_of,
            self.evidence_memo(), syncs=not self.text or ".synchronize(" in self.text,
        )
        out: dict[str, Value] = {}
        for name, kind in kinds.items():
            if kind in (evidence.Kind.STREAM, evidence.Kind.SIDE_STREAM):
                # Given by the caller (as `param_stream` names one): its default tells the framework.
                default = self.default_of(_default_expr(function.node, name))
                owner = f"{function.class_name}.{function.value.name}" if function.class_name else function.value.name
                blocking = False if kind is evidence.Kind.SIDE_STREAM else None
                out[name] = Stream(default.framework if isinstance(default, Stream) else "cupy", StreamKind.EXPLICIT,
                                   blocking, name, site=hash(("stream", owner, name)))
            else:
                out[name] = evidence.value_for(kind, name)
        return out

    def evidence_memo(self) -> dict:
        """The memo of body evidence (evidence.py), told whether this module's text can
        show any for the imports known now."""
        imported = frozenset(self.imported_roots)
        if self._evidence.get("imports") != imported:
            self._evidence["imports"] = imported
            self._evidence[evidence.TEXT_SAYS_NONE] = bool(self.text) and not evidence.text_may_show(self.text, imported)
        return self._evidence

    def scalar_params(self, node: cst.FunctionDef) -> frozenset:
        """Parameters the signature shows are no buffers: a constant default other than
        None (`non_blocking=True`, `dim=0`) or a scalar annotation (`group: ProcessGroup`)."""
        names = set()
        for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            default = param.default
            if isinstance(default, (cst.Integer, cst.Float, cst.SimpleString)) or (
                isinstance(default, cst.Name) and default.value in ("True", "False")
            ):
                names.add(param.name.value)
            elif param.annotation is not None:
                # (spelled without code generation where it can be: most annotations are names)
                text = _spell(param.annotation.annotation) or self.code(param.annotation.annotation)
                if text in torch_api.SCALAR_ANNOTATIONS or text.rsplit(".", 1)[-1] == "ProcessGroup":
                    names.add(param.name.value)
        return frozenset(names)

    def qualname_of(self, expr: cst.BaseExpression) -> Optional[str]:
        """`cp.ndarray` as `cupy.ndarray`, through the module's imports (no evaluation)."""
        dotted = _spell(expr)
        if not dotted or "(" in dotted or "[" in dotted:
            return None
        root, _, rest = dotted.partition(".")
        bound = self.module_vars().get(root)
        if isinstance(bound, QualRef):
            return api.normalize(f"{bound.qualname}.{rest}" if rest else bound.qualname)
        return None

    def default_of(self, expr: Optional[cst.BaseExpression]) -> Value:
        """A parameter default that names a device (`"cuda"`, `torch.device("cuda:0")`)
        or a stream (`cupy.cuda.Stream.null`)."""
        if expr is None:
            return UNKNOWN
        qualname = self.qualname_of(expr) if isinstance(expr, cst.Attribute) else None
        if qualname is not None and qualname.rsplit(".", 1)[-1] in ("null", "ptds"):
            stream = Walker.named_value(qualname)
            if stream is not None:
                return stream
        if isinstance(expr, cst.SimpleString):
            try:
                return Const(expr.evaluated_value)
            except Exception:
                return UNKNOWN
        if isinstance(expr, cst.Call) and not expr.args:
            # `cupy.cuda.get_current_stream()`: the stream current where it is called
            # (`if stream is None: stream = get_current_stream()`: a stream parameter).
            called = self.qualname_of(expr.func)
            fact = api.lookup(api.normalize(called)) if called else None
            if fact is not None and fact.result == "current_stream":
                return ambient_stream(api.framework_of(called) or "cupy")
        if isinstance(expr, cst.Call) and self.qualname_of(expr.func) == "torch.device" and expr.args:
            first = expr.args[0].value
            if isinstance(first, cst.SimpleString):
                text = first.evaluated_value
                return Device(cuda=isinstance(text, str) and text.split(":")[0] == "cuda")
        return UNKNOWN

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
            # `from . import ops`: `.ops` (a sibling module), not `..ops` (the parent's).
            qualname = f"{base}{name}" if base.endswith(".") else f"{base}.{name}"
            implied = api.implied_root(qualname) if not node.relative else None
            if implied is not None:
                self.note_framework(implied)  # `from chainer.backends import cuda`
            yield local, QualRef(api.normalize(qualname))

    def torch_namespace(self) -> str:
        """How this file can spell `torch.cuda` in advice: `get_accelerator()` in code that
        reaches PyTorch only through DeepSpeed's accelerator (it may not import torch)."""
        if "torch" in self.direct_roots:
            return "torch.cuda"
        for name, value in self.module_vars().items():
            if isinstance(value, QualRef) and declared.active().namespaces.get(value.qualname) == "torch.cuda":
                return f"{name}()"
        return "torch.cuda"

    def cupy_namespace(self) -> str:
        """How this file can spell the `cupy` module in advice: the name it imports it as
        (`cp`), or a module that re-exports it (`cuda.cupy` for Chainer's backend)."""
        fallback = "cupy"
        for name, value in self.module_vars().items():
            if not isinstance(value, QualRef):
                continue
            if value.qualname == "cupy":
                return name
            if api.normalize(f"{value.qualname}.cupy") == "cupy":
                fallback = f"{name}.cupy"
        return fallback

    @property
    def raw_memory_code(self) -> bool:
        """CuPy, Numba, cuda-python or MPI code: where projects wrap raw device memory in
        classes of their own (`duck.py` runs only there, and only in the checked file: it
        visits every function body, which PyTorch-only trees pay for and never need)."""
        return bool(self.imported_roots & _LEGACY_FRAMEWORKS) or mpi.MODULE_ROOT in self.imported_roots

    @property
    def torch_only(self) -> bool:
        """PyTorch code with no CuPy, Numba or cuda-python (their current stream is the
        legacy default stream unless the code says otherwise)."""
        return self.torch_imported and not (self.imported_roots & _LEGACY_FRAMEWORKS)

    def note_framework(self, dotted: str) -> None:
        root = dotted.split(".", 1)[0]
        self.direct_roots.add(root)
        self.imported_roots.add(root)
        root = api.accelerators.IMPLIES_FRAMEWORK.get(root, root)
        self.imported_roots.add(root)
        if root == "torch":
            self.torch_imported = True
        elif root == "numba":
            self.numba_imported = True
        if api.framework_of(dotted):
            self.gpu_imported = True
        implied = api.implied_root(dotted)
        if implied is not None:
            # `import chainer.cuda`: a module that re-exports a framework's objects
            # (api/chainer.py) imports that framework.
            self.note_framework(implied)

    def define_function(self, node: cst.FunctionDef, walker: Walker) -> None:
        for decorator in node.decorators:
            kernel = self.kernel_decorator(decorator.decorator, walker)
            if kernel is True:
                walker.state.vars[node.name.value] = Kernel("numba", node.name.value, node=node, site=id(node))
                return
            if kernel is False:  # a device function: not launchable from the host
                walker.state.vars[node.name.value] = UNKNOWN
                return
        known = self.functions.get(id(node))
        if known is not None and walker.state.hb is not None:
            # The hazard walk meets the definition again: the function is the one the
            # first walk defined (and analysed), not a new one to analyse twice.
            walker.state.vars[node.name.value] = known.value
            return
        params = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        params += [p.name.value for p in node.params.kwonly_params]
        owner = walker.record.class_name if walker.record.kind == "class" else None
        value = LocalFunction(node.name.value, node, site=id(node), owner=owner)
        top = walker.top or node
        if walker.record.kind == "class" and walker.top is walker.record.node:
            # A method of a top-level class is placed alone (FileAnalysis.position).
            top = node
            self.result.member_of[id(node)] = walker.record.node
        function = _Function(value, node, params, owner, top=top)
        if walker.record.kind in ("function", "method"):
            # A nested function sees the enclosing body's names as they are where it is defined.
            function.closure = {k: v for k, v in walker.state.vars.items() if k not in params}
        function.is_property = any((_spell(d.decorator) or "") in ("property", "functools.cached_property", "cached_property")
                                   for d in node.decorators)
        function.memoized = any(self.qualname_of(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                                in python_std.MEMOIZING_DECORATORS for d in node.decorators)
        function.context_manager = any(
            (_spell(d.decorator) or "").rsplit(".", 1)[-1] in _CONTEXT_MANAGER_DECORATORS for d in node.decorators
        )
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
        known = self.classes.get(node.name.value)
        if known is not None and known.node is node and walker.state.hb is not None:
            walker.state.vars[known.name] = QualRef(LOCAL + known.name)  # (defined by the first walk)
            return
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
        body = Walker(self, body_record, top=walker.top or node)
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
    def hazard_walk(self, record: FunctionRecord, body: list, params: list[str], seed: dict,
                    entry: Optional[dict] = None, options: Optional[dict] = None) -> Walker:
        """Walk a body again with the happens-before state; store what it finds.
        `entry`: writes other methods of the class left pending on `self`; `options`: the
        one value of some options this walk follows (an option world: its findings join
        those stored)."""
        scratch = FunctionRecord(record.name, record.node, record.kind, class_name=record.class_name,
                                 is_forward=record.is_forward)
        walker = Walker(self, scratch, params=params, seed=seed, hazard_mode=True,
                        top=self.result.tops.get(id(record.node)))
        walker.options = options or {}
        function = self.functions.get(id(record.node))
        if function is not None:
            walker.evident_tensors = function.evident_locals
            walker.scalar_names = function.scalar_params
        if record.kind == "module":
            walker.state.vars = dict(self.module_vars())
        if entry and record.class_name:
            classes.inject(walker, record.class_name, entry)
        _seed_given_streams(walker, function, params, record.node)
        walker.seed_peers(self.holder_peers(record))
        walker.walk(body)
        walker.finish()
        self.synced_copies |= walker.synced_copies
        found = dict(walker.hazards)
        chosen = selector(body, params) if record.kind != "module" else None
        if chosen is not None:
            # Exclusive branches on one parameter: a wait on one value's path does not
            # order another value's reads. Each value (and none of them) is a path.
            name, constants = chosen
            for constant in (*constants, OTHER):
                path = Walker(self, FunctionRecord(record.name, record.node, record.kind, class_name=record.class_name,
                                                   is_forward=record.is_forward),
                              params=params, seed=seed, hazard_mode=True, top=self.result.tops.get(id(record.node)))
                path.facts = {name: constant}
                path.options = options or {}
                if function is not None:
                    path.evident_tensors = function.evident_locals
                    path.scalar_names = function.scalar_params
                if entry and record.class_name:
                    classes.inject(path, record.class_name, entry)
                _seed_given_streams(path, function, params, record.node)
                path.seed_peers(self.holder_peers(record))
                path.walk(body)
                path.finish()
                self.synced_copies |= path.synced_copies
                for identity, hazard in path.hazards.items():
                    found.setdefault(identity, hazard)
        if options:
            for hazard in record.hazards:
                found.setdefault(hazard.identity, hazard)
        record.hazards = sorted(_one_per_problem(found.values()), key=lambda h: (h.kind.name, id(h.node)))
        return walker

    def holder_peers(self, record: FunctionRecord) -> dict:
        """The holder attributes a function should take as made on another stream
        (peers.py): asked only where its own walk met `record_stream` calls."""
        node = record.node
        if not isinstance(node, cst.FunctionDef):
            return {}
        found = self._holder_peers.get(id(node))
        if found is None:
            records = [op.node for op in record.ops
                       if op.kind is OpKind.RECORD_STREAM and op.helper is None and isinstance(op.node, cst.Call)]
            found = {}
            if records and peers.recorded_holder_attrs(node, records):
                if self._holder_assigns is None:
                    self._holder_assigns = peers.HolderAssigns(self.module)
                found = self._holder_assigns.peers(node, records)
            self._holder_peers[id(node)] = found
        return found

    def apply_caller_evidence(self) -> None:
        """Analyse again the functions whose every call site in the file passes the same
        kind of value for a parameter the body gives no evidence about (a loader made
        with pin_memory=True, a CUDA tensor, a CUDA device): how the project calls a
        function is evidence of what its parameters are."""
        # A caller walked again with its callers' evidence passes on what it learnt
        # (`f(self.x)` -> `g(x)` -> `h(x)`): rounds until nothing changes (bounded).
        for _ in range(_CALLER_EVIDENCE_ROUNDS):
            changed = False
            for function in list(self.functions.values()):
                if not function.call_sites or function.record is None or function.in_progress:
                    continue
                changed |= self._reanalyse_agreed(function, function.call_sites)
            if not changed:
                break

    def apply_importer_evidence(self) -> None:
        """The same for the call sites in other modules of the project (reverse.py), for
        the checked file's top-level functions that loop over work on a parameter the
        body gives no evidence about (`device=val.device` for each `val` of a batch,
        one `.item()` per element): what the callers pass decides whether the loop
        uploads or syncs every iteration."""
        if self.summaries_only or self.depth or not self.path:
            return
        wanting = _wanting_evidence(self.text) if any(w in self.text for w in _WANTS_EVIDENCE) else frozenset()
        # Objects of the project's raw-memory classes: a parameter the body calls a method
        # on that classes of imported modules define (which one, the callers say).
        receivers = duck.receivers(self, min_methods=1) if self.raw_memory_code and self.follow_imports else frozenset()
        for function in list(self.functions.values()):
            name = function.value.name
            if name in wanting and self._open_to_evidence(function):
                instances = False
            elif receivers and self._open_to_instances(function, receivers):
                instances = True
            else:
                continue
            sites = reverse.call_sites(self.path, name, type(self))
            if not sites:
                continue
            self._reanalyse_agreed(function, function.call_sites + sites, instances=instances)

    def apply_method_caller_evidence(self) -> None:
        """The same for methods of this file's classes called through objects the callers'
        walks cannot type (`self.communicator.allreduce_grad(target, self.stream)`), in
        the project's package (reverse.method_call_sites: the method name tells the class).
        Asked only for a method that works on a stream parameter the body cannot tell
        blocking or not and also on a default stream: whether the two are ordered is what
        the callers' stream decides."""
        if self.summaries_only or self.depth or not self.path or not self.follow_imports:
            return
        for function in list(self.functions.values()):
            record = function.record
            if function.class_name is None or record is None or function.in_progress or _is_static(function.node):
                continue
            open_streams = {op.stream.label for op in record.ops if op.stream is not None and op.stream.explicit
                            and op.stream.blocking is None and op.stream.label in function.params
                            and op.stream.label not in function.caller_evidence}
            if not open_streams or not any(op.stream is not None and op.stream.is_default for op in record.ops):
                continue
            params = function.params[1:]
            sites = reverse.method_call_sites(self.path, function.class_name, function.value.name, params, type(self))
            evidence: dict[str, Value] = {}
            for name in open_streams:
                passing = [site for site in function.call_sites + sites if name in site]
                agreed = _agreed_kinds([{name: site[name]} for site in passing]) if passing else {}
                if isinstance(agreed.get(name), Stream):
                    evidence[name] = agreed[name]
            if evidence:
                self._reanalyse_agreed(function, [evidence])

    def apply_subclass_caller_evidence(self) -> None:
        """A hot method (a training step's `backward(loss)`) that reads a value back to the
        host from what a parameter holds (`loss.mean().item()`), with no evidence in its
        body of what the parameter is: the project's subclasses in other modules of the
        package calling it through `super().m(...)` pass it (reverse.super_call_sites,
        typed by their bases), as do this file's own calls. When every site that passes
        the parameter passes the same kind (`_agreed_kinds`; an unknown argument at one
        site is no agreement), the method is walked again with it. (Asked whether or not the
        file's text makes following its imports worth it: the question is narrow.)"""
        if self.summaries_only or self.depth or not self.path:
            return
        if ".item()" not in self.text and ".tolist()" not in self.text:
            return
        for function in list(self.functions.values()):
            record = function.record
            if function.class_name is None or record is None or not record.is_forward or function.in_progress \
                    or _is_static(function.node) or record.name.endswith(".forward"):
                continue
            params = [p for p in function.params[1:] if p not in function.caller_evidence]
            if not params or not (lazy_parse.mentions(function.node, ".item()", self.code)
                                  or lazy_parse.mentions(function.node, ".tolist()", self.code)):
                continue
            sites = reverse.super_call_sites(self.path, function.class_name, function.value.name,
                                             function.params[1:], type(self))
            if not sites:
                continue
            evidence: dict[str, Value] = {}
            for name in params:
                passing = [{name: site[name]} for site in function.call_sites + sites if name in site]
                agreed = _agreed_kinds(passing) if passing else {}
                if isinstance(agreed.get(name), Buffer):
                    evidence[name] = agreed[name]
            if evidence:
                self._reanalyse_agreed(function, [evidence])

    def apply_given_stream_evidence(self) -> None:
        """A method handed a stream for its work (it passes the parameter on to its calls)
        that on some path queues device work on a buffer parameter on the current stream
        instead. Whether that is a race its callers decide (reverse.method_call_sites;
        subclasses of other modules calling it through `self` included): when every call
        that passes the parameter passes a non-blocking stream, the caller's work on that
        stream is not ordered after (or before) the work left on the current stream. The
        method is walked again with what the callers agree on, and each such launch is a
        hazard at the launch (`Hazard.given_stream`)."""
        if self.summaries_only or self.depth or not self.path or not self.follow_imports or not self.raw_memory_code:
            return
        for function in list(self.functions.values()):
            record = function.record
            if function.class_name is None or record is None or function.in_progress or _is_static(function.node):
                continue
            if not any(op.kind in DEVICE_WORK and op.stream is not None and op.stream.is_default for op in record.ops):
                continue
            used = {op.stream.label for op in record.ops if op.stream is not None and op.stream.explicit}
            launches = {id(op.node) for op in record.ops
                        if op.kind in DEVICE_WORK and op.stream is not None and op.stream.is_default}
            handed = _ignored_on_one_path(function.node, launches, set(function.params[1:]) - used
                                          - set(function.caller_evidence))
            if not handed:
                continue
            params = function.params[1:]
            sites = function.call_sites + reverse.method_call_sites(
                self.path, function.class_name, function.value.name, params, type(self))
            evidence: dict[str, Value] = {}
            for name in handed:
                passing = [{name: site[name]} for site in sites if name in site]
                agreed = _agreed_kinds(passing) if passing else {}
                if isinstance(agreed.get(name), Stream):
                    evidence[name] = agreed[name]
            if not evidence:
                continue
            # The objects the callers hand it (one class of another module at every call).
            rest = [{k: v for k, v in site.items() if k not in evidence} for site in sites]
            if rest and all(rest):
                objects = _agreed_kinds(rest, instances=True)
                evidence.update({k: v for k, v in objects.items() if isinstance(v, Instance)})
            function.given_streams = tuple(sorted(k for k, v in evidence.items() if isinstance(v, Stream)))
            self._reanalyse_agreed(function, [evidence], instances=True)
            if function.record is not None:
                self._given_stream_hazards(function)

    @staticmethod
    def _given_stream_hazards(function: "_Function") -> None:
        """The hazard walk took the buffer parameters as produced on the stream the
        callers hand in (`_seed_given_streams`): its reports of their use on the current
        stream are this method ignoring that stream (`Hazard.given_stream`)."""
        record = function.record
        if record is None or not function.given_streams:
            return
        given = function.given_streams[0]
        record.hazards = [replace(h, given_stream=given) if h.kind is RAW and h.param and h.first == given else h
                          for h in record.hazards]

    def method_call_args(self, method: str) -> list[Optional["Args"]]:
        """The arguments of this module's calls `x.method(...)` whose receiver the walk
        cannot type (the functions that spell the call are walked again to see them)."""
        if method not in self.wanted_methods:
            self.wanted_methods.add(method)
            call = f".{method}("
            for function in list(self.functions.values()):
                if function.in_progress or not lazy_parse.mentions(function.node, call, self.code):
                    continue
                if function.record is not None:
                    self.result.functions = [r for r in self.result.functions if r is not function.record]
                    function.record = None
                    function.hazard_args = None
                self.analyse(function)
        return self.method_calls_out.get(method, [])

    def _reanalyse_agreed(self, function: "_Function", call_sites: list[dict], instances: bool = False) -> bool:
        """Walk `function` again with what all `call_sites` agree on that it did not know
        (`instances`: also objects of one class of another project module)."""
        evidence = _agreed_kinds(call_sites, instances)
        evidence = {k: v for k, v in evidence.items() if k not in function.caller_evidence}
        if not evidence:
            return False
        function.caller_evidence = {**function.caller_evidence, **evidence}
        self.result.functions = [r for r in self.result.functions if r is not function.record]
        function.record = None
        function.hazard_args = None
        self._forget_sites_of(id(function.node))  # (its new walk records them again, knowing more)
        self.analyse(function)
        return True

    def _forget_sites_of(self, caller: int) -> None:
        """Drop the call sites a function's walk recorded in the functions it calls."""
        for callee in self.functions.values():
            if caller in callee.site_callers:
                kept = [(site, who) for site, who in zip(callee.call_sites, callee.site_callers) if who != caller]
                callee.call_sites = [site for site, _ in kept]
                callee.site_callers = [who for _, who in kept]

    @staticmethod
    def _open_to_instances(function: "_Function", receivers: frozenset[str]) -> bool:
        """A top-level function with a parameter it calls a method of a project class on
        (`receivers`, duck.py's text test) that no caller here typed."""
        if function.class_name is not None or function.record is None or function.in_progress:
            return False
        if function.top is not function.node:
            return False
        return any(p in receivers and p not in function.caller_evidence for p in function.params)

    @staticmethod
    def _open_to_evidence(function: "_Function") -> bool:
        """A top-level function with a loop and a parameter no caller here typed."""
        record = function.record
        if function.class_name is not None or record is None or function.in_progress or not record.loops:
            return False
        if function.top is not function.node:
            return False  # nested: no other module calls it
        return not all(p in function.caller_evidence for p in function.params)

    def mark_remote_hot_methods(self) -> None:
        """Public methods of this file's classes that a `forward` elsewhere in the directory
        calls on every call (reverse.hot_method_callers) are hot, as `forward` is. Asked
        only for classes whose methods do work that is reported where it is hot."""
        if self.summaries_only or self.depth or not self.path or not any(w in self.text for w in _HOT_WORDS):
            return
        for cls in self.classes.values():
            methods = {name for name, ref in cls.methods.items() if not name.startswith("_") and name != "forward"
                       and self._does_hot_work(ref.site)}
            if not methods:
                continue
            callers = reverse.hot_method_callers(self.path, cls.name, methods, type(self))
            for name, via in callers.items():
                self.remote_hot[cls.methods[name].site] = via

    def _does_hot_work(self, site: int, seen: Optional[set] = None) -> bool:
        """Does this method, or a helper it calls on every call, create streams or events,
        or sync (what hot-path rules report)?"""
        seen = set() if seen is None else seen
        function = self.functions.get(site)
        if function is None or function.record is None or site in seen:
            return False
        seen.add(site)
        if any(op.kind in _HOT_WORK and not op.loops for op in function.record.ops):
            return True
        return any(self._does_hot_work(key, seen) for key, other in self.functions.items()
                   if site in other.steady_callers)

    def _backward_step(self, cls: Optional[_Class], function: "_Function") -> bool:
        """A method that runs the backward pass on a loss it is handed on every call: once
        per (micro-)step, a hot path as `forward` is (training_steps.py)."""
        if cls is None or len(function.params) < 2:
            return False
        if cls.runs_backward is None:  # (a text test per class, not code generation per method)
            # (a call `x.backward(`, `torch.autograd.backward(`; not `def backward(`)
            if not self.text:
                cls.runs_backward = True
            elif ".backward(" not in self.text:
                cls.runs_backward = False
            else:
                body = class_text.body_text(self.text, self.class_starts(), cls.name)
                cls.runs_backward = body is None or ".backward(" in body
        if not cls.runs_backward or _is_static(function.node) or _exits_early(function.node):
            return False

        def is_module(name: str) -> bool:
            bound = self.module_vars().get(name)
            return isinstance(bound, QualRef) and not bound.qualname.startswith(LOCAL)

        return training_steps.runs_backward_every_call(
            function.node, function.params, is_module, lambda expr: self.qualname_of(expr) or "")

    def is_module_class(self, cls: _Class, hops: int = 2) -> bool:
        """An `nn.Module` subclass, also through a base class imported from the project."""
        if cls.torch_module:
            return True
        return any(other.is_module_class(parent, hops - 1) for other, parent in self.project_bases(cls, hops))

    def is_optimizer_class(self, cls: _Class, hops: int = 2) -> bool:
        """A class deriving from an optimizer (api/torch_modules.py), also through a base
        class imported from the project (`class Clipping(OptimizerWrapper)`, whose module
        derives it from `optim.Optimizer`)."""
        if torch_modules.optimizer_base([self.code(b.value) for b in cls.node.bases]):
            return True
        if hops == 0:
            return False
        local = (self.classes.get(b.value.value) for b in cls.node.bases if isinstance(b.value, cst.Name))
        if any(parent is not None and parent is not cls and self.is_optimizer_class(parent, hops - 1) for parent in local):
            return True
        return any(other.is_optimizer_class(parent, hops - 1) for other, parent in self.project_bases(cls, hops))

    def project_bases(self, cls: _Class, hops: int) -> Iterator[tuple["FileAnalyzer", _Class]]:
        """The base classes of `cls` that another module of the project defines, with
        that module's analyzer (none when `hops` is spent)."""
        if hops == 0 or not self.path:
            return
        for path, base_name in self.project_base_files(cls):
            other = project.analyzer_for(path, self.depth + 1, type(self))
            parent = other.classes.get(base_name) if other is not None else None
            if parent is not None:
                yield other, parent

    def project_base_files(self, cls: _Class) -> Iterator[tuple[Path, str]]:
        """The modules of the project that define base classes of `cls`, with the base's
        name there (resolved from the imports, nothing parsed)."""
        for base in cls.node.bases:
            name = base.value.value if isinstance(base.value, cst.Name) else ""
            value = self.module_vars().get(name) if name else None
            if not isinstance(value, QualRef) or value.qualname.startswith(LOCAL) or "." not in value.qualname.lstrip("."):
                continue
            module_name, _, base_name = value.qualname.rpartition(".")
            path = project.module_file(self.path, module_name or ".")
            if path is not None:
                yield path, base_name

    def mark_hot_helpers(self) -> None:
        """A helper that `forward` (or an optimizer's `step`) calls on every call runs as
        often as it: its own per-call work is hot too. Reported at the helper's line, once:
        what the caller's replay of the helper already shows at the call is left there."""
        records = {id(f.node): f.record for f in self.functions.values() if f.record is not None}
        hot = {key: rec.name for key, rec in records.items() if rec.is_forward}
        roots = len(hot)
        for key, via in self.remote_hot.items():
            rec = records.get(key)
            if rec is not None and key not in hot and not _exits_early(rec.node):
                hot[key] = rec.hot_via = via
        for key in self.hooks:
            rec = records.get(key)
            if rec is not None and key not in hot and not _exits_early(rec.node) \
                    and not (rec.measures or rec.probe_calls):
                # A registered hook runs on every step: a hot function of its own (unless
                # it reads a timer or memory statistics: a profiler's probe, synced on purpose).
                hot[key] = rec.hot_via = rec.name
        changed = True
        while changed:  # (to a fixed point: helpers of hot helpers)
            changed = False
            for function in self.functions.values():
                key = id(function.node)
                if key in hot or function.record is None:
                    continue
                via = next((hot[c] for c in sorted(function.steady_callers) if c in hot), None)
                if via is not None and not _exits_early(function.node) and not function.memoized:
                    hot[key] = via
                    function.record.hot_via = via
                    changed = True
        if len(hot) == roots:
            return
        for rec in records.values():
            if not rec.hot_via:
                continue
            for op in rec.ops:
                if not (op.loops or op.conditional or op.rare or op.in_comprehension):
                    op.in_forward = True

    def compose_classes(self) -> None:
        """Walk again the methods that start with writes other methods left pending on
        `self` (see classes.py), so a read there meets the write it races with."""
        for cls in self.classes.values():
            methods = {name: self.functions.get(v.site) for name, v in cls.methods.items()}
            exits = {name: f.exit_pending for name, f in methods.items() if f is not None and f.exit_pending}
            if not exits:
                continue
            for name, function in methods.items():
                if function is None or function.record is None or function.hazard_args is None:
                    continue
                if name == "__init__" or not classes.is_public(name):
                    continue
                entry: dict[str, list] = {}
                for before in classes.runs_before(name, exits):
                    for attr, pending in exits[before].items():
                        entry.setdefault(attr, []).append(pending)
                if entry and self.only_under_side_stream(function, set()):
                    # A public method the class calls itself, and only under a side stream it
                    # picks (or from such methods): a side stream's work forked off the caller's
                    # stream reaches it there, ordered by that caller, not as a user's next call.
                    entry = classes.without_forked(entry)
                if entry:
                    body, params, seed = function.hazard_args
                    self.hazard_walk(function.record, body, params, seed, entry=entry)
                    self.walk_option_worlds(function)

    def walk_option_worlds(self, function: "_Function") -> None:
        """A method whose walk met host syncs only under option tests (`if self.overlap_comm:
        get_accelerator().synchronize()` in a helper, or after `if not self.reduce_scatter:
        ...; return`) is walked again in the worlds that exclude them (switches.option_worlds):
        the joined walk lets one configuration's sync order another's work. Each world
        composes with itself: its first call's pending work meets its second call."""
        if not function.option_worlds or function.hazard_args is None or function.record is None:
            return
        body, params, seed = function.hazard_args
        for world in function.option_worlds:
            options = dict(world)
            first = self.hazard_walk(function.record, body, params, seed, options=options)
            exit_pending = classes.pending_at_exit(first)
            if exit_pending:
                entry = {attr: [pending] for attr, pending in exit_pending.items()}
                self.hazard_walk(function.record, body, params, seed, entry=entry, options=options)

    def only_under_side_stream(self, function: "_Function", seen: set) -> bool:
        """Whether this file calls `function` only under side streams: each call is made
        under one, or from a function itself called only so (bounded by `seen`)."""
        if id(function.node) in seen:
            return False
        seen.add(id(function.node))
        if not function.side_stream_calls and not function.caller_stream_callers:
            return False
        for caller in function.caller_stream_callers:
            other = self.functions.get(caller)
            if other is None or not self.only_under_side_stream(other, seen):
                return False
        return True

    @staticmethod
    def needs_hazard_walk(record: FunctionRecord) -> bool:
        """Only bodies that queue work on explicit streams, copy asynchronously or
        record streams can have cross-stream hazards. A body that makes a side stream
        current may queue work there through helpers the hazard walk follows in context
        (`with torch.cuda.stream(s): t = reload(state)`) that its own record shows nothing of."""
        if record.enters_stream:
            return True
        for op in record.ops:
            if op.on_explicit_stream or op.kind in (OpKind.RECORD_STREAM, OpKind.OUTSIDE_STREAMS):
                return True
            if op.kind in (OpKind.COPY_D2H, OpKind.COPY_H2D, OpKind.COPY) and op.host_blocking is False:
                return True
        return False

    # ------------------------------------------------------------------ other modules
    def foreign(self, qualname: str, wanted: bool = False) -> Value:
        """What an imported name denotes in another module of the project, if it is one
        (a function, a kernel, a module-level stream or buffer); UNKNOWN otherwise.
        `wanted`: read even where this file's text makes following imports not worth it."""
        if not self.path or not (self.follow_imports or wanted) or "." not in qualname.lstrip("."):
            return UNKNOWN
        other, name = self.other_module(qualname)
        if other is None:
            return UNKNOWN
        value = other.module_vars().get(name, UNKNOWN)
        if isinstance(value, LocalFunction):
            return replace(value, home=other)
        if isinstance(value, QualRef) and api.framework_of(value.qualname) is None and not value.qualname.startswith(LOCAL):
            # A package re-exporting a name (`from .device import get_device` in `__init__`).
            return other.foreign(value.qualname, wanted=wanted)
        return value

    def may_copy_to_host(self, qualname: str) -> bool:
        """`helper(x, "cpu")` where imports are not followed: worth reading the helper's
        module only when its text asks for a non-blocking copy (a text test, cached)."""
        path, _ = self.module_path(qualname)
        return path is not None and project.text_has(path, b"non_blocking")

    def other_module(self, qualname: str) -> tuple[Optional["FileAnalyzer"], str]:
        """The analyzer of the project module that defines `qualname`, and the name there."""
        path, name = self.module_path(qualname)
        if path is None:
            return None, name
        other = project.analyzer_for(path, self.depth + 1, type(self))
        # What this file's result depends on there: the summary `name` gives (reads.py).
        reads.use(str(path), name, partial(summary_digest.digest_of_use, other, name))
        return other, name

    def module_path(self, qualname: str) -> tuple[Optional[Path], str]:
        """The file of the project module that defines `qualname` (not this one), and the name there."""
        module_name, _, name = qualname.rpartition(".")
        if module_name.endswith(".") or not module_name:
            module_name = module_name or "."
        path = project.module_file(self.path, module_name)
        if path is None or str(path) == str(Path(self.path).resolve()):
            return None, name
        return path, name

    def foreign_instance(self, qualname: str, given_gpu_values: bool) -> Value:
        """`mem = _memory_utility.DeviceMemory()`: an instance of a class of another module
        of the project (its methods' summaries apply to it), if `qualname` names one."""
        if not self.path or not self.follow_imports or "." not in qualname.lstrip("."):
            return UNKNOWN
        if not (given_gpu_values or self.raw_memory_code):
            # PyTorch code wraps tensors, not raw memory: a class it builds from no GPU
            # value is not worth parsing its module for (~5% of a cold run on torch/).
            return UNKNOWN
        path, name = self.module_path(qualname)
        if path is None or not duck.may_define_gpu_class(path, name, given_gpu_values):
            return UNKNOWN  # (the text test spares parsing modules whose classes hold no GPU state)
        other, name = self.other_module(qualname)
        if other is None or name not in other.classes:
            return UNKNOWN
        return Instance(name, home=other)

    # ------------------------------------------------------------------ classes
    def init_attrs(self, cls: _Class) -> dict[str, Value]:
        if not cls.init_done and "__init__" in cls.methods:
            function = self.functions.get(cls.methods["__init__"].site)
            if function is not None:
                self.analyse(function)
        return cls.attrs

    def method_view_of_attrs(self, cls: _Class) -> dict[str, Value]:
        """`__init__`'s attributes as the other methods see them: a `None` placeholder of an
        attribute they use as a stream is a stream set elsewhere, not None."""
        attrs = self.init_attrs(cls)
        if any(isinstance(v, Seq) and v.items is not None for v in attrs.values()):
            # `self.bucket = []`: other methods append to it; its length here is unknown.
            attrs = {k: Seq(element=v.element) if isinstance(v, Seq) else v for k, v in attrs.items()}
        if any(isinstance(v, DictOf) and v.empty for v in attrs.values()):
            # `self.cache = {}`: other methods fill it with what we cannot see from here.
            attrs = {k: v for k, v in attrs.items() if not (isinstance(v, DictOf) and v.empty)}
        if self.text and any(isinstance(v, Buffer) and v.framework == "torch" and v.mem is Mem.DEVICE
                             for v in attrs.values()):
            # A CUDA tensor in `__init__` that another method replaces with a host tensor:
            # a contradiction, unknown (`_host_elsewhere`).
            counts = self.self_assignments()
            attrs = {k: UNKNOWN if isinstance(v, Buffer) and v.framework == "torch" and v.mem is Mem.DEVICE
                     and counts[k] > 1 and self._host_elsewhere(cls, k) else v for k, v in attrs.items()}
        placeholders = [k for k, v in attrs.items() if isinstance(v, Const) and v.value is None]
        if not placeholders:
            return attrs
        if cls.stream_attrs is None:
            body = class_text.body_text(self.text, self.class_starts(), cls.name) if self.text else None
            cls.stream_attrs = evidence.stream_attributes(cls.node, self.text, body)  # (cheap text tests)
        return {k: v for k, v in attrs.items() if k not in cls.stream_attrs or k not in placeholders}

    def device_attributes(self, cls: _Class) -> frozenset:
        """The attributes the class's methods show are CUDA tensors (evidence.py), read once."""
        if cls.device_attrs is None:
            if self._device_gate is None:  # (one text test per module)
                self._device_gate = self.torch_imported and evidence.may_call_cuda_only(self.text)
            if not self._device_gate:
                cls.device_attrs = frozenset()
            else:
                body = class_text.body_text(self.text, self.class_starts(), cls.name) if self.text else None
                cls.device_attrs = evidence.device_attributes(frozenset(self.imported_roots), body)
        return cls.device_attrs

    def class_attr(self, class_name: Optional[str], attr: str) -> Value:
        """`self.attr` as `__init__` leaves it, or else as the other methods that set it
        leave it (the same value from all of them, or UNKNOWN)."""
        cls = self.classes.get(class_name) if class_name else None
        if cls is None:
            return UNKNOWN
        method = cls.methods.get(attr)
        if method is not None:
            prop = self.functions.get(method.site)
            if prop is not None and prop.is_property and not prop.in_progress:
                self.analyse(prop)  # `self.compute_stream` of an @property: what it returns
                return prop.returns
        attrs = self.method_view_of_attrs(cls)
        placeholder = attr in attrs and attrs[attr] == Const(None)
        if attr in attrs and not placeholder:
            return attrs[attr]
        # `self.memory = None` in `__init__`, allocated by another method (`assign`): what
        # that method stores (None joined with a buffer is the buffer).
        found: Optional[Value] = attrs[attr] if placeholder else None
        if self.text and self.self_assignments()[attr] == 0:
            # No method's code here has it (the test below, for all of them): a base class
            # of another module of the project may set it (`self.device` of an engine).
            return self.inherited_attr(cls, attr) if found is None else UNKNOWN
        if not cls.assigns_read and self.text:
            cls.assigns_read = True
            cls.assigns = class_text.method_assignments(self.text, self.class_starts(), cls.name, cls.methods)
        for name, method in cls.methods.items():
            function = self.functions.get(method.site)
            if name == "__init__" or function is None or function.in_progress:
                continue
            if cls.assigns is not None:
                if attr not in cls.assigns.get(name, ()):
                    continue  # (cheap test before analysing a method for its attributes)
            elif f"self.{attr} =" not in self.code_of_function(function):
                continue
            self.analyse(function)
            if attr in function.self_attrs:
                value = function.self_attrs[attr]
                found = value if found is None else join(found, value)
        return UNKNOWN if found is None else found

    def _host_elsewhere(self, cls: _Class, attr: str) -> bool:
        """Does a method other than `__init__` set `self.attr` to a PyTorch tensor in host
        memory? Several assignments of one attribute combine so: `__init__`'s value stands
        for the attribute when the others say nothing (unknown: a model's output, a loss
        function's result), but a host tensor elsewhere contradicts a CUDA tensor there,
        and the attribute is then unknown (cached per class and attribute)."""
        key = (cls.name, attr, "host")
        if key in self._inherited:
            return self._inherited[key] is not UNKNOWN
        self._inherited[key] = UNKNOWN
        if not cls.assigns_read and self.text:
            cls.assigns_read = True
            cls.assigns = class_text.method_assignments(self.text, self.class_starts(), cls.name, cls.methods)
        for name, method in cls.methods.items():
            function = self.functions.get(method.site)
            if name == "__init__" or function is None or function.in_progress:
                continue
            if cls.assigns is not None and attr not in cls.assigns.get(name, ()):
                continue
            self.analyse(function)
            value = function.self_attrs.get(attr)
            if isinstance(value, Buffer) and value.framework == "torch" and value.mem in (Mem.PAGEABLE, Mem.PINNED):
                self._inherited[key] = value
                return True
        return False

    def inherited_attr(self, cls: _Class, attr: str) -> Value:
        """`self.attr` that no method of this module sets, as the project base class that
        sets it leaves it (one hop: `class PipelineEngine(DeepSpeedEngine)` reading the
        `self.device` its base's `__init__` set). Bases that disagree give UNKNOWN. Asked
        only for classes with bases of another module of the project."""
        if not cls.node.bases or not self.path:
            return UNKNOWN
        key = (cls.name, attr)
        if key in self._inherited:
            return self._inherited[key]
        if not any(attr in project.self_assigned(path) for path, _ in self.project_base_files(cls)):
            self._inherited[key] = UNKNOWN  # (no base module assigns it: nothing to parse)
            return UNKNOWN
        self._inherited[key] = UNKNOWN  # (recursion through the bases: unknown)
        found: Optional[Value] = None
        for other, parent in self.project_bases(cls, 1):
            value = other.class_attr(parent.name, attr)
            if value is UNKNOWN:
                continue
            found = value if found is None or found == value else UNKNOWN
        result = UNKNOWN if found is None else found
        self._inherited[key] = result
        return result

    def class_starts(self) -> dict[str, list[tuple[int, int]]]:
        """Where this module's text has each class (class_text.py), read once."""
        if self._class_starts is None:
            self._class_starts = class_text.class_starts(self.text)
        return self._class_starts

    def maybe_allocated_later(self, cls: _Class, attr: str) -> bool:
        """`allocated_later`, asked only where it can be so: in raw-memory code (classes
        wrapping device pointers; the answer costs analysing every method that sets the
        attribute, ~5% of a cold run on PyTorch's sources) and when the module's text
        assigns the attribute more than once."""
        if not self.raw_memory_code:
            return False
        if self.text and self.self_assignments()[attr] < 2:
            return False
        return self.allocated_later(cls, attr)

    def self_assignments(self) -> "Counter[str]":
        """How often the module's text has `self.<attr> =` (or `==`), per attribute: counted
        once, not searched for at each question (the text of a big module is long)."""
        if self._self_assignments is None:
            self._self_assignments = Counter(_SELF_ASSIGNED.findall(self.text))
        return self._self_assignments

    def allocated_later(self, cls: _Class, attr: str) -> bool:
        """`self.memory = None` in `__init__` and a buffer stored by another method
        (`assign`): the placeholder is not what the other methods see (cached per class)."""
        key = (cls.name, attr)
        if key not in self._allocated_later:
            self._allocated_later[key] = False  # (a method being analysed asks again: no)
            found = isinstance(self.class_attr(cls.name, attr), Buffer)
            if not found and any(f is not None and f.in_progress for f in
                                 (self.functions.get(m.site) for m in cls.methods.values())):
                # Asked while a method is being analysed (the setter itself, first called):
                # what it stores is not known yet; ask again later.
                del self._allocated_later[key]
                return False
            self._allocated_later[key] = found
        return self._allocated_later[key]

    def code_of_function(self, function: "_Function") -> str:
        return self.result.code(function.node)

    def method_of(self, class_name: str, method: str) -> Optional[LocalFunction]:
        cls = self.classes.get(class_name)
        return cls.methods.get(method) if cls else None

    def is_torch_module_class(self, class_name: str) -> bool:
        cls = self.classes.get(class_name)
        return bool(cls and cls.torch_module)

    def config_attributes(self, class_name: Optional[str]) -> switches.Options:
        """The options of this module's classes (switches.Options), for a method's tests."""
        if not class_name or not self.text:
            return switches.NO_OPTIONS
        if self._options is None:
            self._options = switches.config_attributes(self.text)
        return self._options

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
        if walker.state.hb is None and home is not self and function.class_name is None and home.path:
            self.calls_out.setdefault((home.path, function.value.name), []).append(
                self.bind_params(function.params, args))
        if walker.state.hb is None and home is self:
            params = function.params[1:] if function.class_name and not _is_static(function.node) else function.params
            function.call_sites.append(self.bind_params(params, args))
            function.site_callers.append(id(walker.record.node))
            function.callers.add(id(walker.record.node))
            if any(s.explicit for s in walker.state.current.values()):
                function.side_stream_calls += 1
            else:
                function.caller_stream_callers.add(id(walker.record.node))
            if not (walker.loop_stack or walker.comprehension_depth):
                if walker.rare_depth == walker.switch_depth:
                    function.steady_callers.add(id(walker.record.node))
                elif walker.branch_calls:
                    walker.branch_calls[-1].add(id(function.node))  # steady if every branch calls it
        record = home.analyse(function)
        if record is None:
            return UNKNOWN
        if function.class_name is None:
            instances = {p: v for p, v in self.bind_params(function.params, args).items()
                         if isinstance(v, Instance) and v.home is not None}
            if instances:
                # `pack(params, self.buffer)` given an object of a class of the project:
                # what the function does through the object's methods is keyed by the
                # parameter, and maps to the caller's object below.
                record = home.instance_summary(function, instances) or record
        if record.measures:
            walker.record.probe_calls.add(id(node))  # a timing helper: its call is a probe (purpose.py)
        params = function.params[1:] if function.class_name and not _is_static(function.node) else function.params
        bound = self.bind_params(params, args)
        exprs = self.bind_exprs(params, args)
        hazard_walk = walker.state.hb is not None
        # A helper walked for one call (`call_in_context`) replays its calls as the hazard
        # walk does: its own ops are replayed into the caller's hazard walk with their accesses.
        replaying = hazard_walk or walker.fresh_sites
        if not function.context_manager and self.worth_walking_in_context(function, bound, walker, home):
            # (a parameter the helper tests against None, given a name of the caller's
            # that is None on some path: its None side is walked too)
            maybe = frozenset(name for name, expr in exprs.items() if bound.get(name, UNKNOWN) is UNKNOWN
                              and walker.may_be_none(expr)) if hazard_walk else frozenset()
            maybe &= self.none_tested(function) if maybe else frozenset()
            return self.call_in_context(callee, function, home, node, bound, exprs, walker, maybe)
        kinds = _PROPAGATED | _ORDERING if replaying else _PROPAGATED
        # `self.helper()`: the helper's results stay on `self`, so its allocations are the
        # caller's to track (a tensor it allocates on a side stream, released later).
        keeps_results = bool(function.class_name) and function.class_name == walker.record.class_name and self.on_self(node)
        # `buf.fill_from(x)` on an object the caller holds: what the method does to the
        # buffers the class keeps on `self` it does to that object's (keyed by its name).
        held_by = self.receiver_label(node) if function.class_name and not keeps_results else None
        kept = home.attribute_sites(function.class_name) if held_by else {}
        ops = record.ops
        if hazard_walk and keeps_results and function.hazard_ops is not None:
            # `self.helper()` in the hazard walk: the helper's own hazard walk, with what the
            # helpers it calls do to the object's buffers and their streams' waits.
            ops = function.hazard_ops
        returned = function.returns
        if hazard_walk and not keeps_results and not _fresh_device(returned, ops):
            # `return host.cuda()` under `if out is None:` and `return out` after: what the
            # helper returns where the caller passes None (or may: `bufs[i] if reuse else None`).
            returned = self.none_side_return(function, params, bound, exprs, ops, walker) or returned
        # `x = to_device(h)` under a side stream: the tensor the helper makes and hands back
        # is allocated on the caller's current stream at the call (the caller's to release).
        # Likewise `out = to_host(t)`: the pinned host tensor its asynchronous copy is still
        # writing when the helper returns (the caller's host read must wait for it).
        made = ("b", returned.site, "") if replaying and not keeps_results \
            and _freshly_written(returned, ops, (Mem.DEVICE, Mem.PINNED)) else None
        call_result = replace(returned, site=walker.site(node)) if made is not None else None
        if call_result is not None and call_result.mem is Mem.PINNED:
            self.returned_copies.add(call_result.site)  # (place_returned_copies)
        for op in ops:
            if op.kind not in kinds or op.in_comprehension:
                continue
            when_none = _none_side(op.when_none, function, bound, exprs, walker) if op.when_none else ()
            if when_none is None:
                continue  # under `if stream is None:` in the helper, and the caller passes one (or the reverse)
            if walker.options and switches.excluded(op.options, walker.options):
                continue  # under an option test of the helper's that this option world's value fails
            stream = self.stream_at_call(op.stream, function, bound, walker, keep_own=hazard_walk, exprs=exprs)
            if stream is None and op.stream is not None:
                continue  # work on a stream the helper made itself: reported inside it
            target = self.stream_at_call(op.target, function, bound, walker, keep_own=True, exprs=exprs) if op.target else op.target
            accesses = self.map_accesses(op.accesses, exprs, bound, walker, function) if replaying else ()
            if kept:
                accesses = tuple(_held(a, kept, held_by) for a in accesses)
            if held_by:
                stream, target = _held_stream(stream, held_by), _held_stream(target, held_by)
            result = op.result if keeps_results else UNKNOWN
            if call_result is not None and any(a.key == made for a in accesses):
                # (keyed as the new buffer of this call, which the caller gets back)
                accesses = tuple(replace(a, key=("b", call_result.site, "")) if a.key == made else a for a in accesses)
                result = call_result if any(a.fresh and a.write for a in op.accesses if a.key == made) else result
            _replay(op, callee, home, node, walker, stream=stream, target=target, accesses=accesses,
                    result=result, when_none=when_none, options=op.options)
        if function.context_manager:
            return self.context_of(function, bound, walker, exprs)
        held_state = None
        if hazard_walk and keeps_results and function.hazard_ops is None:
            # `out = self._advance()`: a getter (it queues nothing) of what the caller's walk
            # holds on `self`.
            held_state = self.self_state_walk(function, bound, walker)
        if keeps_results:
            # `self.helper()`: what the helper leaves on `self` is what the caller sees next.
            for attr, value in function.self_attrs.items():
                walker.state.vars[f"self.{attr}"] = value
            if hazard_walk and function.hazard_ops is not None:
                # (lists of device results, keyed as the replayed accesses are)
                for attr, value in function.hazard_self_attrs.items():
                    walker.state.vars[f"self.{attr}"] = value
            if held_state is not None:
                walker.state.vars.update(held_state[1])
        result = function.returns
        if hazard_walk and keeps_results and function.hazard_ops is not None and function.hazard_returns is not UNKNOWN:
            # `(out, done)`: the event recorded on the helper's stream parameter is recorded
            # on the caller's argument.
            result = Seq(items=tuple(
                replace(item, recorded_on=self.stream_at_call(item.recorded_on, function, bound, walker,
                                                              keep_own=True, exprs=exprs))
                if isinstance(item, Event) and item.recorded_on is not None else item
                for item in function.hazard_returns.items or ()), element=function.hazard_returns.element) \
                if function.hazard_returns.items is not None else function.hazard_returns
        if held_state is not None:
            return held_state[0]  # what `self` holds, not a new buffer of this call
        narrowed = _narrowed_param(result)
        if narrowed and bound.get(narrowed, UNKNOWN) is not UNKNOWN:
            # A device array the helper narrowed its parameter to by a type test, and the
            # caller knows what it passes: its kind decides the side.
            result = self.specialized_return(function, bound, walker, exprs)
        elif result is UNKNOWN and any(v is not UNKNOWN for v in bound.values()):
            result = self.specialized_return(function, bound, walker, exprs)
        result = _narrowed_at_call(result, exprs, walker)
        if isinstance(result, Stream) and result.label in bound:
            return bound[result.label]
        if isinstance(result, StreamContext) and isinstance(result.stream, Stream) and result.stream.label in exprs:
            # `return torch.cuda.stream(stream)`: the context of the caller's argument.
            mapped = self.stream_at_call(result.stream, function, bound, walker, keep_own=True, exprs=exprs)
            return StreamContext(mapped, result.framework) if mapped is not None else UNKNOWN
        if isinstance(result, Buffer) and result.site in kept:
            # A view of what the object keeps (`mem.buffer(n)` of `self.memory`).
            attr = kept[result.site]
            return replace(result, site=0, label=f"{held_by}.{attr}", param=held_by, region=f".{attr}")
        if call_result is not None and isinstance(result, Buffer) and result.site == returned.site:
            return replace(result, site=call_result.site)  # the buffer made at this call, allocated above
        if replaying and isinstance(result, Buffer) and result.site:
            return replace(result, site=walker.site(node))  # each call makes a new buffer
        return result

    def instance_summary(self, function: "_Function", instances: dict[str, Instance]) -> Optional[FunctionRecord]:
        """A top-level function's record when parameters are given objects of classes of
        the project (`buffer` a `DeviceMemory`): walked once per combination of classes,
        in the hazard mode so that what the objects' methods do is recorded with the
        accesses, keyed by the parameter (`buffer.memory`)."""
        key = (id(function.node), tuple(sorted((p, v.cls, id(v.home)) for p, v in instances.items())))
        if key in self.instance_summaries:
            return self.instance_summaries[key]
        self.instance_summaries[key] = None  # (recursion guard)
        if self.specializing >= _SPECIALIZE_MAX_DEPTH or function.in_progress or function.record is None:
            return None
        if not isinstance(function.node.body, cst.IndentedBlock):
            return None
        seed: dict[str, Value] = {p: UNKNOWN for p in function.params}
        seed.update(function.closure)
        seed.update(function.caller_evidence)
        for param, value in self.evident_params(function).items():
            given = function.caller_evidence.get(param)
            if isinstance(value, Stream) and value.blocking is None and isinstance(given, Stream):
                continue  # (the callers say which kind of stream: theirs is the more exact)
            seed[param] = value
        seed.update(instances)
        scratch = FunctionRecord(function.record.name, function.node, "function")
        self.specializing += 1
        try:
            walker = Walker(self, scratch, params=function.params, seed=seed, hazard_mode=True, top=function.top)
            walker.evident_tensors = function.evident_locals
            walker.scalar_names = function.scalar_params
            walker.walk(function.node.body.body)
        finally:
            self.specializing -= 1
        self.instance_summaries[key] = scratch
        return scratch

    def receiver_label(self, node: cst.Call) -> Optional[str]:
        """`gpu_buf` in `gpu_buf.from_device(x)`, `self.buf` in `self.buf.fill()`: the name
        that holds the object a method is called on (None: not a plain name)."""
        if not isinstance(node.func, cst.Attribute):
            return None
        held = node.func.value
        if isinstance(held, cst.Name):
            return held.value if held.value != "self" else None
        if isinstance(held, cst.Attribute) and isinstance(held.value, cst.Name) and held.value.value == "self":
            return f"self.{held.attr.value}"
        return None

    def attribute_sites(self, class_name: Optional[str]) -> dict[int, str]:
        """The buffers a class keeps on `self`, by the call that made them (its `__init__`
        and the methods analysed so far): attribute names for `call_local`."""
        cls = self.classes.get(class_name) if class_name else None
        if cls is None:
            return {}
        found: dict[int, str] = {}
        values = list(self.init_attrs(cls).items())
        for method in cls.methods.values():
            function = self.functions.get(method.site)
            if function is not None and function.record is not None:
                values.extend(function.self_attrs.items())
        for attr, value in values:
            if isinstance(value, Buffer) and value.site:
                found.setdefault(value.site, attr)
        return found

    def worth_walking_in_context(self, function: "_Function", bound: dict[str, Value], walker: Walker,
                                 home: Optional["FileAnalyzer"] = None) -> bool:
        """Walk a helper again under the caller's streams and with the caller's values
        when its generic summary cannot say what it does here: it is given CUDA tensors,
        or it is called under a side stream (where the code plainly means GPU work on
        what it is given). Small helpers, bounded depth (documented in architecture.md)."""
        body = function.node.body
        if not isinstance(body, cst.IndentedBlock) or len(body.body) > _CONTEXT_MAX_STATEMENTS:
            return False
        if self.specializing >= _SPECIALIZE_MAX_DEPTH or function.in_progress:
            return False
        if any(isinstance(v, Buffer) and v.mem is Mem.DEVICE for v in bound.values()):
            return True
        if any(_is_cpu_target(v) for v in bound.values()) and (home or self).copies_non_blocking(function):
            # `g(t, "cpu")` of `return t.to(device, non_blocking=True)`: here the copy is to
            # the host, and what it returns is still being written when it returns (also
            # in the first walk, whose record then shows the asynchronous copy).
            return True
        if walker.state.hb is None:
            return False
        side = any(s.explicit for s in walker.state.current.values())
        return side and any(v is UNKNOWN for v in bound.values())

    def copies_non_blocking(self, function: "_Function") -> bool:
        """A text test (cached per function of this module): its body asks for a non-blocking copy."""
        key = id(function.node)
        if key not in self._non_blocking_text:
            self._non_blocking_text[key] = self.torch_imported and "non_blocking" in self.code_of_function(function)
        return self._non_blocking_text[key]

    def call_in_context(self, callee: LocalFunction, function: "_Function", home: "FileAnalyzer", node: cst.Call,
                        bound: dict[str, Value], exprs: dict, walker: Walker,
                        maybe_none: frozenset = frozenset()) -> Value:
        """The helper's body walked with the caller's argument values and current streams;
        its operations are the caller's, at the call (named after the helper). Parameters
        the caller passes a name that is None on some path (`maybe_none`) are walked on
        both sides: the operations of either (once each) and what the None side returns
        (`if out is None: return host.cuda()`, a tensor made at this call)."""
        seed: dict[str, Value] = {p: UNKNOWN for p in function.params}
        seed.update(function.closure)
        for name, value in bound.items():
            expr = exprs.get(name)
            if value is UNKNOWN and expr is not None and name not in function.scalar_params \
                    and any(s.explicit for s in walker.state.current.values()):
                # A value we cannot see, under a side stream: GPU data, keyed as the caller names it
                # (assumed, not shown: `opaque`, so a test on it orders nothing; a parameter whose
                # default is a number is a number).
                label = self.code(expr)
                if isinstance(expr, cst.Name) or (label.startswith("self.") and label.count(".") == 1):
                    value = Buffer("torch", Mem.DEVICE, label=label, param=label, opaque=True, assumed=True)
            seed[name] = value
        if function.class_name and function.params and not _is_static(function.node):
            seed[function.params[0]] = walker.lookup("self") if self.on_self(node) else UNKNOWN
        if home is not self and home.path:
            # This file's result now depends on the helper's body, not only its summary.
            name = callee.name + summary_digest.BODY_SUFFIX
            reads.use(str(Path(home.path).resolve()), name, partial(summary_digest.digest_of_use, home, name))
        seeds = [seed] if not maybe_none else [{**seed, **{name: Const(None) for name in maybe_none}}, seed]
        # (in the caller's hazard walk, the helpers it calls in turn map their buffer
        # accesses to its arguments too: a walk with an ordering state of its own, dropped
        # after; only where it calls helpers that queue work, the rest needs none)
        nested = walker.state.hb is not None and function.record is not None \
            and any(op.helper is not None for op in function.record.ops)
        walks = []
        for each in seeds:
            scratch = FunctionRecord(function.value.name, function.node, "function", class_name=function.class_name)
            home.specializing += 1
            try:
                inner = Walker(home, scratch, params=(), seed=each, top=function.top, hazard_mode=nested)
                inner.scalar_names = function.scalar_params
                inner.options = walker.options
                inner.state.current = dict(walker.state.current)
                inner.fresh_sites = True
                inner.outer = (walker, {k: v for k, v in exprs.items() if bound.get(k) is UNKNOWN})
                inner.walk(function.node.body.body)
            finally:
                home.specializing -= 1
            walks.append((inner, scratch))
        inner = walks[0][0]
        seen: set[int] = set()
        for _, scratch in walks:
            for op in scratch.ops:
                if not op.in_comprehension and id(op.node) not in seen:
                    _replay(op, callee, home, node, walker, stream=op.stream, target=op.target, accesses=op.accesses,
                            result=op.result, options=op.options)
            seen |= {id(op.node) for op in scratch.ops}
        if function.class_name and function.class_name == walker.record.class_name and self.on_self(node):
            # `self.helper()`: what it leaves on `self`, made by this very walk, is what the caller sees next.
            for key, value in inner.state.vars.items():
                if key.startswith("self.") and key.count(".") == 1:
                    walker.state.vars[key] = value
            for key, sites in inner.attr_sites.items():
                walker.attr_sites.setdefault(key, set()).update(sites)
        returned = inner.returns
        if isinstance(returned, Buffer) and returned.mem is Mem.PINNED and returned.site \
                and any(a.fresh and a.write and a.key == ("b", returned.site, "") for op in scratch.ops for a in op.accesses):
            self.returned_copies.add(returned.site)  # its own copy, still pending (place_returned_copies)
        return _narrowed_at_call(returned, exprs, walker) if returned is not None else UNKNOWN

    @staticmethod
    def on_self(node: cst.Call) -> bool:
        func = node.func
        return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"

    def context_of(self, function: "_Function", bound: dict[str, Value], walker: Walker, exprs: dict) -> Value:
        """A `@contextmanager` generator that yields inside a stream context makes that
        stream current for the caller's `with` body."""
        for fw, stream in (function.yield_current or {}).items():
            if isinstance(stream, Stream) and stream.explicit:
                mapped = self.stream_at_call(stream, function, bound, walker, keep_own=True, exprs=exprs)
                if mapped is not None:
                    return StreamContext(mapped, fw)
        return UNKNOWN

    def handed_out_entries(self, class_name: str) -> dict:
        """`self.<attr>` containers whose entries a public method of the class returns
        (handouts.py), read once per class."""
        if class_name not in self.class_handouts:
            methods = [(f.node.name.value, f.node) for f in self.functions.values()
                       if f.class_name == class_name and isinstance(f.node, cst.FunctionDef)]
            self.class_handouts[class_name] = handouts.handed_out_entries(methods)
        return self.class_handouts[class_name]

    def none_tested(self, function: "_Function") -> frozenset:
        """The parameters the function's body tests against None (`if out is None:`)."""
        key = id(function.node)
        if key not in self.none_tested_params:
            params = set(function.params)
            found: set[str] = set()

            class Tests(cst.CSTVisitor):
                def visit_If(self, node: cst.If) -> None:
                    test = node.test
                    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
                            and isinstance(test.left, cst.Name) and test.left.value in params \
                            and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot)) \
                            and isinstance(test.comparisons[0].comparator, cst.Name) \
                            and test.comparisons[0].comparator.value == "None":
                        found.add(test.left.value)

                def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
                    return node is function.node  # (not nested functions' tests)

            function.node.visit(Tests())
            self.none_tested_params[key] = frozenset(found)
        return self.none_tested_params[key]

    def none_side_return(self, function: "_Function", params: Sequence[str], bound: dict[str, Value],
                         exprs: dict, ops: Sequence[GpuOp], walker: Walker) -> Optional[Buffer]:
        """The fresh tensor a helper returns when the parameters it tests against None are
        None at this call (left out with a None default, passed None, or a name of the
        caller's that is None on some path): its body walked again with them bound to None.
        Asked only of helpers with operations under such a test."""
        tested = {name for op in ops for name, _ in op.when_none}
        nones = {}
        for name in tested:
            if name not in params:
                continue
            expr = exprs.get(name)
            value = bound.get(name, UNKNOWN)
            if expr is None:
                if not _defaults_to_none(function.node, name):
                    continue
            elif not ((isinstance(value, Const) and value.value is None)
                      or (value is UNKNOWN and walker.may_be_none(expr))):
                continue
            nones[name] = Const(None)
        if not nones:
            return None
        result = self.specialized_return(function, {**bound, **nones}, walker, exprs)
        return result if _fresh_device(result, ops) else None

    def specialized_return(self, function: "_Function", bound: dict[str, Value], walker: Walker,
                           exprs: Optional[dict] = None) -> Value:
        """What a small helper returns for these arguments (a wrapper such as
        `check(cudart.cudaStreamCreate())` passes its argument's kind through).
        Walked again with the arguments bound; small bodies only, cached."""
        body = function.node.body
        if not isinstance(body, cst.IndentedBlock) or len(body.body) > _SPECIALIZE_MAX_STATEMENTS:
            return UNKNOWN
        if self.specializing >= _SPECIALIZE_MAX_DEPTH:
            return UNKNOWN
        key = (id(function.node), tuple(sorted((k, _hashable(v)) for k, v in bound.items())))
        if key in self.specialized:
            return self.specialized[key]
        self.specialized[key] = UNKNOWN  # recursion guard
        scratch = FunctionRecord(function.value.name, function.node, "function", class_name=function.class_name)
        seed = {p: UNKNOWN for p in function.params}
        seed.update(function.closure)
        seed.update(bound)
        self.specializing += 1
        try:
            inner = Walker(self, scratch, params=(), seed=seed, top=function.top)
            inner.outer = (walker, {k: v for k, v in (exprs or {}).items() if bound.get(k) is UNKNOWN})
            inner.walk(body.body)
        finally:
            self.specializing -= 1
        result = inner.returns if inner.returns is not None else UNKNOWN
        self.specialized[key] = result
        return result

    def self_state_walk(self, function: "_Function", bound: dict[str, Value],
                        walker: Walker) -> Optional[tuple[Value, dict]]:
        """What a small method returns, called on `self`, given what the caller's walk holds
        on `self` now (`out = self._slots[0]; ...; return out[0]` after another method
        filled the slots with device results), and what it leaves on those attributes.
        Asked only where the caller holds lists of device memory in an attribute the
        method's text indexes; walked once per such state."""
        body = function.node.body
        if not isinstance(body, cst.IndentedBlock) or len(body.body) > _SPECIALIZE_MAX_STATEMENTS:
            return None
        if self.specializing >= _SPECIALIZE_MAX_DEPTH or not function.params:
            return None
        held = {k: v for k, v in walker.state.vars.items()
                if k.startswith("self.") and k.count(".") == 1 and isinstance(v, Seq) and _holds_device(v)}
        if not held:
            return None
        text = self.code_of_function(function)
        held = {k: v for k, v in held.items() if f"{k}[" in text}
        if not held:
            return None
        key = (id(function.node), "self", tuple(sorted((k, _hashable(v)) for k, v in held.items())),
               tuple(sorted((k, _hashable(v)) for k, v in bound.items())))
        if key in self.specialized:
            return self.specialized[key]
        self.specialized[key] = None  # recursion guard
        scratch = FunctionRecord(function.value.name, function.node, "function", class_name=function.class_name)
        seed: dict[str, Value] = {p: UNKNOWN for p in function.params}
        seed.update(function.closure)
        seed.update(bound)
        seed[function.params[0]] = walker.lookup("self")
        seed.update(held)
        self.specializing += 1
        try:
            inner = Walker(self, scratch, params=(), seed=seed, top=function.top)
            inner.walk(body.body)
        finally:
            self.specializing -= 1
        result = (inner.returns if inner.returns is not None else UNKNOWN,
                  {k: inner.state.vars.get(k, UNKNOWN) for k in held})
        self.specialized[key] = result
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
                if isinstance(value, Instance):
                    # What the helper did to a part of the object the caller handed it
                    # (`buffer.memory`): that part of the caller's object.
                    holder = _holder_label(exprs[name])
                    if holder is not None and region.startswith("."):
                        out.append(replace(acc, key=("n", holder, region), label=f"{holder}{region}"))
                    continue
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
        if _defaults_to_none(function.node, stream.label) and stream.framework in walker.state.current:
            # `def from_device(self, src, stream=None)` called without one: the helper passes
            # None on, and None is the current stream.
            return walker.state.current[stream.framework]
        return stream


_OPTION_WORLDS_MAX = 2  # option worlds a method is walked again in (switches.option_worlds)


def analyze_module(module: cst.Module, path: str = "", source: str = "") -> FileAnalysis:
    analyzer = FileAnalyzer(module, path=path, source=source)
    if source:
        analyzer.follow_imports = analyzer.follow_imports and any(k in source for k in api.FOLLOW_IMPORTS_KEYS)
        analyzer.results_matter = any(k in source for k in api.RESULTS_MATTER_KEYS)
    result = analyzer.run()
    if path and analyzer.unknown_element_reads and not analyzer.results_matter:
        # `lengths[b].item()` in a loop on a value the file alone cannot place: where the
        # helpers its function, and that function's callers, call put their results
        # decides it, so read them there (a second walk, paid only by such files).
        readers = analyzer.unknown_element_reads
        callers = {c for f in analyzer.functions.values() if id(f.node) in readers for c in f.callers}
        analyzer = FileAnalyzer(module, path=path, source=source)
        analyzer.results_matter = True
        analyzer.results_matter_in = frozenset(readers | callers)
        result = analyzer.run()
    return result


def _none_side(tests: tuple, function: "_Function", bound: dict[str, Value], exprs: dict,
               walker: Walker) -> Optional[tuple]:
    """Whether a helper's operation under `if param is None:` (or its `else`) runs for
    this call: None when the caller's argument excludes it, else the tests still open,
    in the caller's terms. An argument left out that defaults to None is None; a value
    the walk knows (a stream, a buffer, an object) is not; the caller's own parameter
    passed on keeps the test, on that parameter, when it defaults to None itself, and
    any other argument given is taken to be given (not None), unless the caller binds it
    to None on some path (`buf = bufs[i] if reuse else None`): then the op may run."""
    kept = []
    for name, when_none in tests:
        expr = exprs.get(name)
        if expr is None:
            if not _defaults_to_none(function.node, name):
                continue  # (not an argument we can see: the test stays open, on nothing of the caller's)
            is_none = True
        else:
            value = bound.get(name, UNKNOWN)
            if isinstance(value, Const):
                is_none = value.value is None
            elif value is not UNKNOWN:
                is_none = False
            elif walker.may_be_none(expr):
                continue  # None on some path of the caller, given on another: both sides may run
            elif isinstance(expr, cst.Name) and expr.value in walker.params and walker.record.node is not None \
                    and isinstance(walker.record.node, cst.FunctionDef) and _defaults_to_none(walker.record.node, expr.value):
                kept.append((expr.value, when_none))
                continue
            else:
                is_none = isinstance(expr, cst.Name) and expr.value == "None"
        if is_none is not when_none:
            return None
    return tuple(kept)


def _replay(op: GpuOp, callee: LocalFunction, home: "FileAnalyzer", node: cst.Call, walker: Walker, *,
            stream, target, accesses, result, when_none: tuple = (), options: tuple = ()) -> None:
    """A helper's operation emitted at the caller's call, named after the helper and
    pointing at the call deepest inside it (for messages)."""
    inner = op.helper
    helper = HelperRef(callee.name, inner.node if inner else op.node, inner.api if inner else op.api,
                       home=inner.home if inner else home.result)
    walker.emit(
        op.kind, op.api, node, op.framework, stream=stream, host_blocking=op.host_blocking,
        is_async_api=op.is_async_api, sync_api=op.sync_api, host_buffer=op.host_buffer,
        non_blocking=op.non_blocking, pinned_out=op.pinned_out, target=target, helper=helper,
        accesses=accesses, event=op.event, result=result, when_none=when_none, options=options,
    )


# What a loop does with a parameter's values when their kind decides a finding: an
# allocation on the device of one of them, a host read of one (cheap text tests).
_WANTS_EVIDENCE = ("device=", ".item()", ".tolist()")
# Work that hot-path rules report, and words in a module's text that may spell it.
_HOT_WORK = frozenset({OpKind.STREAM_CREATE, OpKind.EVENT_CREATE, OpKind.DEVICE_SYNC, OpKind.IMPLICIT_SYNC})
_HOT_WORDS = ("Stream(", "Event(", "synchronize(", ".item()", ".tolist()", "stream(")
_DEVICE_OF_VALUE = re.compile(r"device=[\w.\[\]'\"]+\.device\b")
# A top-level `def` and the next line that starts at column 0 (its end, roughly; not the
# `):` that closes a signature formatted one parameter per line).
_TOP_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
_TOP_LINE = re.compile(r"^[^\s#)\]]", re.MULTILINE)


def _default_expr(node: cst.FunctionDef, name: str) -> Optional[cst.BaseExpression]:
    for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
        if param.name.value == name:
            return param.default
    return None


_CALLER_EVIDENCE_ROUNDS = 4


def _wanting_evidence(text: str) -> frozenset[str]:
    """The top-level functions whose text holds what `_WANTS_EVIDENCE` looks for: found
    in the module's text by position (no code generation, no parse)."""
    names = set()
    for match in _TOP_DEF.finditer(text):
        end = _TOP_LINE.search(text, match.end())
        segment = text[match.end(): end.start() if end else len(text)]
        if ".item()" in segment or ".tolist()" in segment or _DEVICE_OF_VALUE.search(segment):
            names.add(match.group(1))
    return frozenset(names)


def _agreed_kinds(call_sites: list[dict], instances: bool = False) -> dict[str, Value]:
    """Parameters for which every call site passes the same kind of value (`instances`:
    also an object of one class of another module of the project)."""
    agreed: dict[str, Value] = {}
    names = set(call_sites[0])
    for site in call_sites[1:]:
        names &= set(site)
    for name in names:
        if instances and all(isinstance(site[name], Instance) for site in call_sites):
            homes = {getattr(site[name].home, "path", None) for site in call_sites}
            first = call_sites[0][name]
            if len({site[name].cls for site in call_sites}) == 1 and len(homes) == 1 and first.home is not None \
                    and None not in homes:
                agreed[name] = first
            continue
        if all(isinstance(site[name], Stream) and site[name].explicit and site[name].blocking is False
               for site in call_sites):
            # Non-blocking streams at every call: the parameter is one (which one, the caller's).
            first = call_sites[0][name]
            agreed[name] = Stream(first.framework, StreamKind.EXPLICIT, False, name, site=hash(("stream", name)))
            continue
        kinds = {_kind_of(site[name], name) for site in call_sites}
        if len(kinds) == 1:
            kind = kinds.pop()
            if kind is not None:
                agreed[name] = kind
    return agreed


def _narrowed_param(value: Value) -> str:
    """The parameter a returned device array was narrowed from (`narrow_to_device`), if any."""
    if isinstance(value, Seq) and value.items:
        value = value.items[0]
    return value.param if isinstance(value, Buffer) and value.narrowed else ""


def _rekey_narrowed(value: Value, key: str) -> Value:
    """The same result with its narrowed array keyed by the caller's name for the argument."""
    if isinstance(value, Seq) and value.items:
        return replace(value, items=(_rekey_narrowed(value.items[0], key),) + value.items[1:])
    return replace(value, param=key, label=key or value.label) if isinstance(value, Buffer) else value


def _narrowed_at_call(result: Value, exprs: dict, walker: Walker) -> Value:
    """A device array a helper narrowed its parameter to by a type test (keyed by the
    parameter), in the caller's terms: the caller's argument, by the caller's name for it."""
    param = _narrowed_param(result)
    if not param:
        return result
    expr = exprs.get(param)
    if expr is None:
        return UNKNOWN  # (a default: not the caller's array)
    return _rekey_narrowed(result, _named_label(walker.code(expr), expr))


def _named_label(label: str, expr: cst.BaseExpression) -> str:
    """A caller's argument that names one object (`x`, `self.x`); "" otherwise."""
    if isinstance(expr, cst.Name) or (label.startswith("self.") and label.count(".") == 1):
        return label
    return ""


def _kind_of(value: Value, name: str) -> Optional[Value]:
    """The part of an argument's value a parameter can take on (None: nothing to say)."""
    if isinstance(value, Loader) and value.pin_memory is not None:
        return Loader(value.pin_memory, site=value.site, label=name)
    if isinstance(value, Buffer) and value.framework in ("torch", "cupy", "numba", "numpy"):
        return Buffer(value.framework, value.mem, label=name, param=name)
    if isinstance(value, Device) and value.cuda:
        return value
    if isinstance(value, DictOf) and isinstance(value.value, Buffer):
        inner = value.value  # a dict of tensors (a batch): what its values are
        return DictOf(Buffer(inner.framework, inner.mem, label=f"{name}[...]"))
    return None


def _fresh_device(returned: Value, ops: Sequence[GpuOp]) -> bool:
    """A PyTorch CUDA tensor one of the helper's own copies or factories freshly wrote."""
    return _freshly_written(returned, ops, (Mem.DEVICE,))


def _freshly_written(returned: Value, ops: Sequence[GpuOp], mems: tuple) -> bool:
    """A PyTorch tensor in one of `mems` one of the helper's own copies or factories freshly wrote."""
    return isinstance(returned, Buffer) and bool(returned.site) and returned.framework == "torch" \
        and returned.mem in mems \
        and any(a.fresh and a.write and a.key == ("b", returned.site, "") for op in ops for a in op.accesses)


def _defaults_to_none(node: cst.FunctionDef, name: str) -> bool:
    params = node.params
    for param in (*params.params, *params.kwonly_params):
        if param.name.value == name:
            return isinstance(param.default, cst.Name) and param.default.value == "None"
    return False


def _holder_label(expr: cst.BaseExpression) -> Optional[str]:
    """How the caller names an object it hands on (`buf`, `self.buf`), as method calls
    on it key what the object keeps (`receiver_label`)."""
    if isinstance(expr, cst.Name) and expr.value != "self":
        return expr.value
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return f"self.{expr.attr.value}"
    return None


def _held(acc: Access, kept: dict[int, str], holder: str) -> Access:
    """An access to a buffer an object keeps, as the caller names the object."""
    if acc.key[0] == "b" and acc.key[1] in kept:
        attr = kept[acc.key[1]]
        return replace(acc, key=("n", holder, f".{attr}"), label=f"{holder}.{attr}")
    return acc


def _distinct_ops(ops: list) -> Optional[list]:
    """A hazard walk's ops worth replaying, once each (loops are walked several times), or
    None when there are more than `_HAZARD_OPS_MAX` of them."""
    out, seen = [], set()
    for op in ops:
        if op.kind not in _PROPAGATED | _ORDERING:
            continue
        identity = (id(op.node), op.kind, id(op.helper.node) if op.helper else 0, op.stream, op.target,
                    tuple((a.key, a.write) for a in op.accesses))
        if identity not in seen:
            seen.add(identity)
            out.append(op)
    return out if len(out) <= _HAZARD_OPS_MAX else None


def _one_per_problem(hazards) -> list:
    """Reads on one stream of several buffers another stream produced, with no wait:
    one missing wait, so one finding, at the first read (where the wait goes)."""
    seen: set[tuple] = set()
    out = []
    for hazard in hazards:  # in program order
        if hazard.node is hazard.other and (hazard.via is not None or hazard.other_via is not None
                                            or hazard.kind is RELEASE):
            continue  # both sides inside one call of a helper: reported inside the helper
        problem = None
        if hazard.kind is RAW and not (hazard.joins_default or hazard.wrong_wait):
            problem = (hazard.kind, hazard.first, hazard.second, hazard.param)
        elif hazard.carried:
            problem = (hazard.kind, id(hazard.node))  # one copy left pending: one finding, there
        elif hazard.kind is WAR and hazard.second == HOST_LABEL:
            # The host refilling several parts (views) of the memory one copy still reads:
            # one missing wait before the refill, so one finding, at its first write.
            problem = (hazard.kind, id(hazard.other), hazard.key[:-1])
        elif hazard.kind is RELEASE:
            # One tensor name used at one place: one missing record_stream (loop passes
            # see several incarnations of it).
            problem = (hazard.kind, id(hazard.node), hazard.buffer)
        if problem is not None:
            if problem in seen:
                continue
            seen.add(problem)
        out.append(hazard)
    return out


def _holds_device(value: Value, depth: int = 0) -> bool:
    """Device memory, or a list holding some (`[(out, event), ...]`)."""
    if isinstance(value, Buffer):
        return value.mem is Mem.DEVICE and bool(value.site)
    if isinstance(value, Seq) and depth < 3:
        return any(_holds_device(v, depth + 1) for v in (*(value.items or ()), value.element))
    return False


def _hashable(value: Value) -> object:
    try:
        hash(value)
        return value
    except TypeError:
        return id(value)


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


def _spell(node: cst.CSTNode, depth: int = 0) -> Optional[str]:
    """`a.b.c`, `f(...)`, `x[i]` without code generation; None for anything else."""
    if depth > 12:
        return None
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _spell(node.value, depth + 1)
        return None if base is None else f"{base}.{node.attr.value}"
    if isinstance(node, cst.Call):
        base = _spell(node.func, depth + 1)
        if base is None:
            return None
        return f"{base}()" if not node.args else f"{base}(...)"
    if isinstance(node, cst.Subscript):
        base = _spell(node.value, depth + 1)
        if base is None:
            return None
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            inner = node.slice[0].slice.value
            if isinstance(inner, (cst.Name, cst.Integer)):
                return f"{base}[{inner.value}]"
        return f"{base}[...]"
    if isinstance(node, cst.Integer):
        return node.value
    return None


def _optimizer_step(cls, name: str, analyzer: "FileAnalyzer") -> bool:
    """`step` of a class deriving from an optimizer runs once per training step: a hot
    path, as `forward` is (api/torch_modules.py)."""
    if cls is None or name not in torch_modules.OPTIMIZER_HOT_METHODS:
        return False
    return analyzer.is_optimizer_class(cls)


def _exits_early(node: cst.FunctionDef) -> bool:
    """`if self._streams: return` at the top of a body: a lazy initialiser or a one-off,
    whose work does not run on every call."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return any(isinstance(stmt, cst.If) and _exit_test(stmt.test) and leaves(stmt.body.body) for stmt in body)


def _exit_test(test: cst.BaseExpression) -> bool:
    """A test of an early exit that makes the rest run now and then: a rare test, or whether
    a container is filled yet (`if len(self._streams) > 0 or not self._is_root: return`)."""
    if isinstance(test, cst.BooleanOperation):
        return _exit_test(test.left) or _exit_test(test.right)
    return rare_test(test) or nonempty_test(test)


def _is_static(node: cst.FunctionDef) -> bool:
    """A `@staticmethod`: no `self` to drop from its parameters at a call."""
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in node.decorators)


def _held_stream(stream, held_by: str):
    """`self.stream` of a method called on `buf`: spelled `buf.stream` where the caller
    writes code, still the class's own stream."""
    if not isinstance(stream, Stream) or not stream.label.startswith("self.") or stream.keyed_as:
        return stream
    return replace(stream, label=held_by + stream.label[len("self"):], keyed_as=stream.label)


def _thread_targets(module: cst.Module) -> frozenset:
    """Names of the functions handed to `threading.Thread(target=...)` and the like."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [module]
    while stack:  # an order-free walk: libcst's visitor rebuilds every node it passes
        node = stack.pop()
        if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "target":
            value = node.value
            if isinstance(value, cst.Attribute):
                found.add(value.attr.value)
            elif isinstance(value, cst.Name):
                found.add(value.value)
        stack.extend(children(node))
    return frozenset(found)


def _seed_given_streams(walker: Walker, function: Optional["_Function"], params: list[str],
                        node: cst.CSTNode) -> None:
    """A method its callers hand a non-blocking stream for its work: its buffer
    parameters are taken as produced on that stream (the callers' work there), not on
    their current stream."""
    if function is None or not function.given_streams or walker.state.hb is None:
        return
    name = function.given_streams[0]
    stream = function.caller_evidence.get(name)
    if not isinstance(stream, Stream):
        return
    key = stream_key(stream)
    clock = walker.state.hb.tick(key, stream.blocking)
    for param in params:
        if param != name and param != "self":
            walker.state.hb.produced_before_entry(("n", param, ""), node, clock, key, label=name)


def _ignored_on_one_path(node: cst.FunctionDef, launches: set[int], params: set[str]) -> set[str]:
    """Parameters defaulting to None that one branch of an `if` hands on to its calls
    while the other branch holds one of `launches` (calls by id) and does not hand them
    on: a stream the method passes on for its work on one path and ignores on the other."""
    params = {name for name in params if _defaults_to_none(node, name)}
    if not params or not launches:
        return set()

    def scan(body: cst.CSTNode) -> tuple[set[str], bool]:
        passed: set[str] = set()
        holds = [False]

        class Finder(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                if id(call) in launches:
                    holds[0] = True
                passed.update(a.value.value for a in call.args if isinstance(a.value, cst.Name) and a.value.value in params)

        body.visit(Finder())
        return passed, holds[0]

    found: set[str] = set()

    class Branches(cst.CSTVisitor):
        def visit_If(self, stmt: cst.If) -> None:
            if stmt.orelse is None:
                return
            one, launches_one = scan(stmt.body)
            other, launches_other = scan(stmt.orelse)
            if launches_one:
                found.update(other - one)
            if launches_other:
                found.update(one - other)

    node.body.visit(Branches())
    return found
