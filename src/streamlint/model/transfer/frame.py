"""What one walk of one function under one calling context carries besides the state:
where it is, how names resolve, who answers for callees, and what it has emitted."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional, Protocol

import libcst as cst

from streamlint.model.domain.order import AccessEvent, Conflict
from streamlint.model.domain.sides import configuration_sides
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.values import AbsValue
from streamlint.model.summary.effects import Effect
from streamlint.model.summary.function_summary import FunctionSummary
from streamlint.model.syntax.tests import tested_value
from streamlint.model.transfer.nodes import preorder


@dataclass(frozen=True)
class CallContext:
    """A dimension of the calling context: what every caller passes, as facts about each
    parameter and the receiver (identities stay the callee's own parameter paths)."""

    args: tuple[tuple[str, AbsValue], ...] = ()
    receiver: Optional[AbsValue] = None
    # The hot entry (`C.forward`, an optimizer's `C.step`) whose every call reaches it unconditionally;
    # "" when none: a dimension of the context, so the hot walk of a helper is its own
    hot: str = ""
    # What `self.<attr>` holds on entry: the class's methods' stores (CodeQL's field step:
    # a value any method stores reaches every method's read), identities as `self` paths
    receiver_state: tuple[tuple[str, AbsValue], ...] = ()
    # The caller's current stream is one it chose (`with torch.cuda.stream(side):` around the
    # call): as in its own body, a tensor of unknown device there is a CUDA tensor
    chosen: bool = False
    # What the class's public methods leave in flight on `self` when they return (writes on the
    # class's side streams the caller's current stream does not follow): a method entered by no
    # caller in sight may run after any of them (RacerD's class composition, for pending work)
    receiver_pending: tuple[AccessEvent, ...] = ()
    # The parameter every caller hands a non-blocking stream other than its current one: the
    # stream the callers hand in for this function's work. The memory they pass is taken as made
    # there (not on their current stream), and that stream as another than the current one here
    work_stream: str = ""
    # The frameworks whose current stream is the legacy default one unless code sets it (CuPy's
    # `with s:`, Numba's), set by every caller: the current stream at entry is the caller's
    # (AMBIENT), as for PyTorch, so the callee's work follows the caller's `with s:`
    entered: tuple[str, ...] = ()
    # The call site's arguments are all in `args` (no `*`/`**` spread): a parameter it leaves out
    # takes its default (D-21); read once when the facts are named by the callee's parameters
    complete: bool = False

    def arg(self, name: str) -> Optional[AbsValue]:
        return dict(self.args).get(name)


ROOT_CONTEXT = CallContext()
CELL = "cell:"  # a context's key for a closure's cell (`cell:device`: what a free name holds), beside its parameters'
# What a call tells its callee of a stream argument, without the caller's identities: a stream
# made for the program's own work that does not wait for the legacy default stream, other than
# the caller's current stream at the call (the only stream fact a context carries).
SIDE_STREAM_FACT = StreamRef(StreamRefKind.CREATED, "", None, "<a side stream>", False, True)

class ProgramView(Protocol):
    """What a walk may ask of the program around it (the solver answers)."""

    def summary(self, qualname: str, context: CallContext) -> Optional[FunctionSummary]:
        """What calling the project function `qualname` ("pkg.mod.f", "pkg.mod.C.m") under
        `context` does; None when it is not the project's, or is being walked (recursion)."""

    def is_class(self, qualname: str) -> bool:
        """A project class: calling it constructs an object."""

    def kernel_writes(self, qualname: str) -> Optional[frozenset[int]]:
        """A GPU kernel's parameters its body stores into, by position; None when unknown."""

    def class_defining(self, module: str, methods: frozenset[str]) -> Optional[str]:
        """The one project class, among `module`'s own and those of the project modules it
        imports, that defines every one of `methods`; None when none or several do."""

    def classes_with_method(self, module: str, name: str, within: str = "",
                            call: Optional[cst.Call] = None) -> tuple[str, ...]:
        """The project classes, of one hierarchy and few enough, that define a method `name`
        (class-hierarchy analysis for a receiver of unknown class); () when none or too many.
        `within`: the subclasses of that class that do, when it has no such method itself.
        `call`: only those whose method can take its arguments (arity), counted after."""

    def hierarchy_of(self, module: str, methods: frozenset[str]) -> Optional[str]:
        """The project class an object on which `methods` are called is an instance of (one of its
        subclasses, maybe): the common base of the classes defining them; None when not one."""

    def base_class(self, cls: str) -> Optional[str]:
        """The first base of the project class `cls` that is a project class, whose methods
        `super().m(...)` calls; None when it has none."""

    def methods_named(self, cls: str, prefix: str) -> tuple[str, ...]:
        """The qualified names of the methods the project class `cls` defines whose names
        start with `prefix` (a method chosen by a name built at run time)."""

    def class_attribute(self, cls: str, attr: str) -> Optional[AbsValue]:
        """What `obj.<attr>` holds for an instance of the project class `cls`: the join of what
        its methods store there, in `self`'s terms (identities are `self.<attr>` paths)."""

    def ring_size(self, module: str, attr: str) -> int:
        """The size of the ring `module` advances the attribute `attr` around by one (`x.i = 1 -
        x.i`: 2), 0 when it does not (model-cases D-25)."""

    def left_on_holders(self, module: str, attr: str, reader: str) -> Optional[AbsValue]:
        """The tensor the project functions other than `reader` that store `.<attr>` on an object
        their parameters reach leave there (their `holder_stores`), few enough: its stream the
        producer's own (`PRODUCED`, D-16) or one it made; None when none or too many store it."""


@dataclass
class Gathered:
    """What one walk has found so far: its effects in its own terms, the conflicts it saw,
    what it returns, the state it ends in, and what its parameters were seen to be."""

    effects: list[Effect] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    reported: set = field(default_factory=set)  # the conflicts above, for the membership test
    seen_effects: set = field(default_factory=set)  # (a loop walks its body until nothing changes)
    returned: Optional[AbsValue] = None  # the join of the values it returns
    exit_state: Optional[State] = None  # the join of the states it returns or falls off the end with
    evidence: dict[str, set[str]] = field(default_factory=dict)  # parameter -> what its use shows it is
    yielded: Optional[tuple] = None  # the current streams at the first `yield`
    handed_out: list[Conflict] = field(default_factory=list)  # memory returned while still being written
    # memory the function did not allocate -> where it first bound it to a name (`x = self.buf`):
    # where a caller's use of it shows in this function
    taken: dict = field(default_factory=dict)
    # attribute -> the tensor it stores on an object a parameter reaches (None: two stores disagree)
    holder_stores: dict = field(default_factory=dict)
    # a holder's attribute read here -> the value its producers left there (D-16), and of each
    # producer's stream, the streams the code's `record_stream`s say it is not
    produced: dict = field(default_factory=dict)
    unlike: dict = field(default_factory=dict)
    # per enclosing loop, innermost last: the states a `break` leaves it with, and those a
    # `continue` takes to its next iteration
    loop_exits: list[tuple[list[State], list[State]]] = field(default_factory=list)


# The branch tag of a test of `self.<attr>` (an option the object was made with).
SELF_OPTION = "<self>."


def _bare(test: cst.BaseExpression) -> bool:
    """`self.attr` or `not self.attr`: a flag of the object, not a comparison."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    return isinstance(test, cst.Attribute)


@dataclass
class Numbering:
    """Tables keyed by node identity: each site's ordinal (fixed by the function's text), the
    sites inside each loop (asked every round), each test's ordinal among the tests met, and the
    calls every side of a rare test being walked makes (id -> how many such tests enclose it)."""

    call_ordinals: dict[int, int] = field(default_factory=dict)  # id(node) -> its site's ordinal, in source order
    loop_sites: dict[int, frozenset[str]] = field(default_factory=dict)
    tests: dict[int, int] = field(default_factory=dict)
    every_side: dict[int, int] = field(default_factory=dict)
    fixed: frozenset[str] = frozenset()  # the parameters the function never rebinds (tests of them correlate)
    item_tests: set[int] = field(default_factory=set)  # tests of a loop's item against None (data-dependent)
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
    loop_depth: int = 0
    loop_names: list[str] = field(default_factory=list)  # the targets of the enclosing `for` loops
    numbering: "Numbering" = field(default_factory=lambda: Numbering())  # tables keyed by node identity
    globals: dict[str, AbsValue] = field(default_factory=dict)  # what module-level names hold (the module's top level)
    context: Optional[CallContext] = None  # what the function was entered under (set by the walk)
    free_receiver: str = ""  # a closure of a method: the free name of the method's receiver (`self`)
    branch: tuple[str, ...] = ()  # the sides of the tests the walk is under (Effect.branch)
    found: Gathered = field(default_factory=Gathered)
    guards: int = 0  # enclosing tests (and tests passed that can return first): >0 runs only sometimes

    @property
    def call_ordinals(self) -> dict[int, int]:
        return self.numbering.call_ordinals

    @call_ordinals.setter
    def call_ordinals(self, ordinals: dict[int, int]) -> None:
        self.numbering.call_ordinals = ordinals

    @property
    def chosen(self) -> bool:
        """Entered under a current stream its caller chose (CallContext.chosen)."""
        return self.context is not None and self.context.chosen

    @property
    def hot(self) -> str:
        """The context's hot entry ("" when none)."""
        return self.context.hot if self.context is not None else ""

    def chosen_stream(self, state: State) -> bool:
        """PyTorch's current stream here is one the code chose: a tensor of unknown device used
        on it is a CUDA tensor (its work is queued there; a CPU tensor's would ignore it)."""
        current = state.current_stream("torch")
        if current.kind is StreamRefKind.AMBIENT:
            return self.chosen
        return current.known

    def guards_at(self, call: cst.CSTNode) -> int:
        """The enclosing tests that make `call` run only sometimes: not a rare test whose every
        side makes the same call (an `if`/`else` that calls `average_tensor` either way)."""
        return self.guards - self.numbering.every_side.get(id(call), 0)

    def site(self, node: cst.CSTNode) -> str:
        return f"{self.qualname}#{self.call_ordinals.get(id(node), -1)}"

    def sites_within(self, node: cst.CSTNode) -> frozenset[str]:
        """The site keys of the nodes inside `node` (a loop, a comprehension)."""
        found = self.numbering.loop_sites.get(id(node))
        if found is None:
            found = self.numbering.loop_sites[id(node)] = frozenset(
                self.site(n) for n in preorder(node, lambda n: True) if id(n) in self.call_ordinals
            )
        return found

    def side(self, test: cst.BaseExpression, taken: bool, option: bool = False) -> tuple[str, ...]:
        """The branch of one side of a test (a test in a loop is taken both ways over its
        iterations: no side). A test of an option of `self` (`if self.fused:`) is named by the
        option: every call on one receiver takes the same side (`apply` names it by the receiver)."""
        value = tested_value(test, self.numbering.fixed)  # (a parameter never rebound: one side per call)
        if value is not None and value[0].startswith("self.") and not (option or _bare(test)):
            value = None  # (a comparison of an attribute that is no option: state another call may change)
        if value is not None and value[0].startswith("self."):
            return self.branch + (f"{SELF_OPTION}{value[0][len('self.'):]}:{int(taken != value[1])}",)
        if value is not None:
            return self.branch + (f"{self.qualname}?{value[0]}:{int(taken != value[1])}",)
        if self.loop_depth:
            return self.branch
        ordinal = self.numbering.tests.setdefault(id(test), len(self.numbering.tests))
        return self.branch + (f"{self.qualname}?{ordinal}:{int(taken)}",)

    def configuration_side(self, test: cst.BaseExpression, taken: bool, option: bool = False) -> str:
        """The side of a test of a configuration value (an option of `self`, a parameter never
        rebound, compared with a constant or not); "" for another test (D-18)."""
        side = self.side(test, taken, option)[len(self.branch):]
        return next(iter(configuration_sides(side)), "")

    def emit(self, effect: Effect) -> Effect:
        """Keep the effect, under the sides of the tests the walk is in; returns it so tagged."""
        if self.branch:
            effect = replace(effect, branch=self.branch + effect.branch)
        if effect not in self.found.seen_effects:
            self.found.seen_effects.add(effect)
            self.found.effects.append(effect)
        return effect

    def note(self, param: str, evidence: str) -> None:
        """The walk saw a parameter used as only one kind of value can be."""
        self.found.evidence.setdefault(param, set()).add(evidence)

    def report(self, found: list[Conflict]) -> None:
        for conflict in found:
            if conflict not in self.found.reported:
                self.found.reported.add(conflict)
                self.found.conflicts.append(conflict)
