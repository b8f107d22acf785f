"""What one walk of one function under one calling context carries besides the state."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional, Protocol

import libcst as cst

from streamlint.model import declared
from streamlint.model.domain.order import AccessEvent, Conflict
from streamlint.model.domain.paths import CELL  # noqa: F401  (a context's key for a closure's cell: `cell:device`)
from streamlint.model.domain.paths import cached_hash
from streamlint.model.domain.sides import configuration_sides
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.values import AbsValue
from streamlint.model.summary.apply import SELF_OPTION  # (the branch tag of a test of `self.<attr>`)
from streamlint.model.summary.effects import Effect
from streamlint.model.summary.function_summary import FunctionSummary
from streamlint.model.syntax.tests import tested_value
from streamlint.model.transfer.nodes import preorder


@cached_hash  # (the solver's keys: hashed at every call site asked for a summary, and in its call edges)
@dataclass(frozen=True)
class CallContext:
    """What every caller passes: facts of each parameter and the receiver, in the callee's own paths."""

    args: tuple[tuple[str, AbsValue], ...] = ()
    receiver: Optional[AbsValue] = None
    hot: str = ""  # the hot entry every call of which reaches this one unconditionally ("" when none)
    # what `self.<attr>` holds on entry: the join of the class's methods' stores (CodeQL's field step)
    receiver_state: tuple[tuple[str, AbsValue], ...] = ()
    chosen: bool = False  # the caller's current stream is one it chose (a tensor of unknown device is CUDA)
    # writes the class's public methods leave in flight on `self` (RacerD's class composition)
    receiver_pending: tuple[AccessEvent, ...] = ()
    work_stream: str = ""  # the parameter every caller hands a side stream for the work (memory made there)
    entered: tuple[str, ...] = ()  # legacy-by-default frameworks whose current stream every caller set
    complete: bool = False  # the call site's arguments are all in `args`: one left out takes its default (D-21)
    cold: str = ""  # the cold entry (`C.state_dict`) every call of which this walk is reached from ("" when none)
    thread: bool = False  # started on a thread of its own: its current streams begin as the default ones
    # the call site runs only now and then (every N steps, in warm-up, on an error): caller evidence the solver
    # reads where it asks whether a function is off the hot path, never a key of the walk
    now_and_then: bool = field(default=False, compare=False)

    def arg(self, name: str) -> Optional[AbsValue]:
        return dict(self.args).get(name)


ROOT_CONTEXT = CallContext()
# The only stream fact a context carries: a non-blocking stream of the program's, not the caller's current one.
SIDE_STREAM_FACT = StreamRef(StreamRefKind.CREATED, "", None, "<a side stream>", False, True)

class ProgramView(Protocol):
    """What a walk may ask of the program around it (the solver answers)."""

    def summary(self, qualname: str, context: CallContext) -> Optional[FunctionSummary]:
        """What calling `qualname` under `context` does; None when not the project's, or recursive."""

    def is_class(self, qualname: str) -> bool:
        """A project class: calling it constructs an object."""

    def is_enumeration(self, qualname: str) -> bool:
        """A project class deriving from an enumeration base: its members are constants."""

    def kernel_framework(self, qualname: str) -> str:
        """Whose current stream a launch of the project function `qualname` runs on ("torch" for Triton, "numba")."""

    def kernel_writes(self, qualname: str) -> Optional[frozenset[int]]:
        """A GPU kernel's parameters its body stores into, by position; None when unknown."""

    def class_defining(self, module: str, methods: frozenset[str]) -> Optional[str]:
        """The one project class in sight of `module` that defines every one of `methods`."""

    def classes_with_method(self, module: str, name: str, within: str = "",
                            call: Optional[cst.Call] = None) -> tuple[str, ...]:
        """The few classes of one hierarchy (under `within`) defining `name` that can take `call`."""

    def hierarchy_of(self, module: str, methods: frozenset[str]) -> Optional[str]:
        """The common base of the project classes defining `methods`; None when not one."""

    def base_class(self, cls: str) -> Optional[str]:
        """The first project base of `cls` (whose methods `super().m(...)` calls)."""

    def methods_named(self, cls: str, prefix: str) -> tuple[str, ...]:
        """The methods of `cls` whose names start with `prefix` (a name built at run time)."""

    def lambda_function(self, module: str, node: cst.Lambda) -> Optional[str]:
        """The function a module-level `name = lambda ...` of `module` defines, by its lambda."""

    def class_attribute(self, cls: str, attr: str) -> Optional[AbsValue]:
        """What `obj.<attr>` holds for an instance of `cls`, in `self`'s terms."""

    def makes_cuda_default(self) -> bool:
        """A module of the program makes CUDA PyTorch's default device: a factory with no `device=` makes CUDA memory."""

    def latches(self, qualname: str) -> frozenset[str]:
        """The latches of the class whose method `qualname` is (syntax/latches), by attribute name."""

    def ring_size(self, module: str, attr: str) -> int:
        """The ring `module` advances `attr` around by one (`x.i = 1 - x.i`: 2), else 0 (D-25)."""

    def left_on_holders(self, module: str, attr: str, reader: str) -> Optional[AbsValue]:
        """The tensor other functions store at `.<attr>` on an object their parameters reach (D-16)."""

    def is_module(self, cls: str) -> bool:
        """A project class deriving from PyTorch's `nn.Module` (its `.to()`, `.cuda()`, `parameters()` are PyTorch's)."""

    def property_of(self, cls: str, attr: str) -> str:
        """The method a read of `obj.<attr>` runs for an instance of `cls` (a `@property`, its own or a base's), else ""."""

    def cold_entry(self, qualname: str) -> str:
        """`C.state_dict` when the function runs at checkpoint, restore or print time, never per step; else ""."""

    def method_alias(self, qualname: str) -> "Optional[tuple[str, bool]]":
        """(the function, whether it is a method) a class attribute `C.attr = name` binds, for a call through an
        instance; None when `C.attr` is no such attribute."""


@dataclass
class Gathered:
    """What one walk has found so far."""

    # each once, in the order met (a loop walks its body until nothing changes): dicts as ordered sets
    effects: dict[Effect, None] = field(default_factory=dict)
    conflicts: dict[Conflict, None] = field(default_factory=dict)
    returned: Optional[AbsValue] = None  # the join of the values it returns
    exit_state: Optional[State] = None  # the join of the states it returns or falls off the end with
    evidence: dict[str, set[str]] = field(default_factory=dict)  # parameter -> what its use shows it is
    yielded: Optional[tuple] = None  # the current streams at the first `yield`
    items: Optional[AbsValue] = None  # the join of the values it yields (a generator's items)
    handed_out: list[Conflict] = field(default_factory=list)  # memory returned while still being written
    taken: dict = field(default_factory=dict)  # memory not allocated here -> where a name first took it
    holder_stores: dict = field(default_factory=dict)  # attribute -> the tensor stored on a holder (None: two)
    param_items: dict = field(default_factory=dict)  # parameter -> what a container method put in it (`q.put(t)`)
    produced: dict = field(default_factory=dict)  # a holder's attribute read here -> its producers' value (D-16)
    unlike: dict = field(default_factory=dict)  # a producer's stream -> the streams `record_stream` says it is not
    # per enclosing loop, innermost last: the states its `break`s and its `continue`s leave
    loop_exits: list[tuple[list[State], list[State]]] = field(default_factory=list)
    # what stayed unknown where it would have mattered, (site, aspect, path, callee) as ordered set: read only by
    # `readings/untold.py` (what a silent function could not see), never by a finding
    untold: dict = field(default_factory=dict)


def _bare(test: cst.BaseExpression) -> bool:
    """`self.attr` or `not self.attr`: a flag of the object, not a comparison."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    return isinstance(test, cst.Attribute)


@dataclass
class Numbering:
    """Tables keyed by node identity, and what the function's text alone tells."""

    call_ordinals: dict[int, int] = field(default_factory=dict)  # id(node) -> its site's ordinal, in source order
    loop_sites: dict[int, frozenset[str]] = field(default_factory=dict)
    tests: dict[int, int] = field(default_factory=dict)  # each test's ordinal among the tests met
    every_side: dict[int, int] = field(default_factory=dict)  # a call every side of a rare test makes
    # the enclosing tests, as the walk is in them, that run their body now and then over time, not by
    # configuration: every N steps, the first passes (a warm-up), an exception handler
    periodic: int = 0
    fixed: frozenset[str] = frozenset()  # the parameters the function never rebinds (tests of them correlate)
    params: frozenset[str] = frozenset()  # its parameters' names
    cursors: frozenset[str] = frozenset()  # the local names it counts a fill level with (D-30)
    loop_bound: frozenset[str] = frozenset()  # the names a loop or comprehension of it binds per pass
    settled: frozenset[str] = frozenset()  # its never-rebound parameters and the locals it assigns once (cells, D-21)
    latched: frozenset[str] = frozenset()  # its receiver's latches (`self.is_initialized`: set once, never reset)
    item_tests: set[int] = field(default_factory=set)  # tests of a loop's item against None (data-dependent)
    item_guards: set[int] = field(default_factory=set)  # tests of a loop's item (its guard clauses: data-dependent)
    # (body, else) of each `if` that refills a cache kept by key when the key changes: once per new key
    refills: dict[int, tuple[bool, bool]] = field(default_factory=dict)
    # what the function's text alone tells (read once per function, kept by the solver across its walks)
    text_facts: dict = field(default_factory=dict)

    def once(self, key: str, read):
        """`read()`, once per function: a fact of its text (the same under every context)."""
        if key not in self.text_facts:
            self.text_facts[key] = read()
        return self.text_facts[key]


@dataclass
class Frame:
    qualname: str  # the function walked ("" for a module body)
    module: str  # its module's dotted name (callees are looked up under it)
    imports: dict[str, str]  # name bound in the module -> the qualified name it stands for
    local_functions: frozenset[str]  # module-level functions and classes, by name
    class_name: str = ""  # the class of a method
    program: Optional[ProgramView] = None
    loop_names: list[str] = field(default_factory=list)  # the counters of the enclosing loops ("" when none)
    numbering: "Numbering" = field(default_factory=lambda: Numbering())  # tables keyed by node identity
    globals: dict[str, AbsValue] = field(default_factory=dict)  # what module-level names hold (the module's top level)
    context: CallContext = ROOT_CONTEXT  # what the function was entered under (set by the walk)
    free_receiver: str = ""  # a closure of a method: the free name of the method's receiver (`self`)
    branch: tuple[str, ...] = ()  # the sides of the tests the walk is under (Effect.branch)
    found: Gathered = field(default_factory=Gathered)
    guards: int = 0  # enclosing tests (and tests passed that can return first): >0 runs only sometimes
    outside_withs: Optional[object] = None  # the current streams outside the enclosing `with` blocks (a return leaves them)

    @property
    def loop_depth(self) -> int:
        return len(self.loop_names)

    def chosen_stream(self, state: State) -> bool:
        """PyTorch's current stream here is one the code chose: a tensor of unknown device used there is CUDA's."""
        current = state.current_stream("torch")
        if current.kind is StreamRefKind.AMBIENT or (current.kind is StreamRefKind.LEGACY and self.context.thread):
            return self.context.chosen  # (a thread starts on the default stream: no stream the code chose)
        return current.known

    @property
    def assumes_cuda(self) -> bool:
        """The project declares the tensors whose device its code never shows CUDA's (`assume-device = "cuda"`:
        a default fact, off unless set)."""
        return declared.assumed_device() == "cuda"

    def untold_is_cuda(self, state: State) -> bool:
        """A tensor of a device not told, used here, is CUDA memory: under a stream the code chose, or by the
        project's assumption."""
        return self.assumes_cuda or self.chosen_stream(state)

    def guards_at(self, call: cst.CSTNode) -> int:
        """The enclosing tests that make `call` run only sometimes (not a rare test every side of which calls it)."""
        return self.guards - self.numbering.every_side.get(id(call), 0)

    def ring_size(self, node: cst.BaseExpression) -> int:
        """The ring an attribute stored or read here counts around (D-25), 0 if none."""
        if not isinstance(node, cst.Attribute) or self.program is None:
            return 0
        return self.program.ring_size(self.module, node.attr.value)

    def site(self, node: cst.CSTNode) -> str:
        return f"{self.qualname}#{self.numbering.call_ordinals.get(id(node), -1)}"

    def sites_within(self, node: cst.CSTNode) -> frozenset[str]:
        """The site keys of the nodes inside `node` (a loop, a comprehension)."""
        found = self.numbering.loop_sites.get(id(node))
        if found is None:
            found = self.numbering.loop_sites[id(node)] = frozenset(
                self.site(n) for n in preorder(node, lambda n: True) if id(n) in self.numbering.call_ordinals
            )
        return found

    def side(self, test: cst.BaseExpression, taken: bool, option: bool = False) -> tuple[str, ...]:
        """The branch of one side of a test (none in a loop); an option of `self` names it (one side per receiver)."""
        value = tested_value(test, self.numbering.fixed)  # (a parameter never rebound: one side per call)
        own = value is not None and value[0].startswith("self.")
        if own and (option or _bare(test)):  # (else an attribute compared, no option: state)
            return self.branch + (f"{SELF_OPTION}{value[0][len('self.'):]}:{int(taken != value[1])}",)
        if value is not None and not own:
            return self.branch + (f"{self.qualname}?{value[0]}:{int(taken != value[1])}",)
        if self.loop_depth:
            return self.branch
        ordinal = self.numbering.tests.setdefault(id(test), len(self.numbering.tests))
        return self.branch + (f"{self.qualname}?{ordinal}:{int(taken)}",)

    def configuration_side(self, test: cst.BaseExpression, taken: bool, option: bool = False) -> str:
        """The side of a test of a configuration value (an option, a parameter never rebound); else "" (D-18)."""
        side = self.side(test, taken, option)[len(self.branch):]
        return next(iter(configuration_sides(side)), "")

    def emit(self, effect: Effect) -> Effect:
        """Keep the effect, under the sides of the tests the walk is in; returns it so tagged."""
        if self.branch:
            effect = replace(effect, branch=self.branch + effect.branch)
        self.found.effects.setdefault(effect)
        return effect

    def note(self, param: str, evidence: str) -> None:
        """The walk saw a parameter used as only one kind of value can be."""
        self.found.evidence.setdefault(param, set()).add(evidence)

    def unseen(self, site: str, aspect: str, path: Optional[object] = None, callee: str = "") -> None:
        """Note what stayed unknown at `site`: a tensor's `device`, a copy's host `memory`, a `stream`, an `opaque` call."""
        self.found.untold.setdefault((site, aspect, path, callee))

    def report(self, found: list[Conflict]) -> None:
        self.found.conflicts.update(dict.fromkeys(found))
