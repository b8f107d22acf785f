"""What one walk of one function under one calling context carries besides the state:
where it is, how names resolve, who answers for callees, and what it has emitted."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Protocol

import libcst as cst

from streamlint.model.domain.order import Conflict
from streamlint.model.domain.state import State
from streamlint.model.domain.values import AbsValue
from streamlint.model.summary.effects import Effect
from streamlint.model.summary.function_summary import FunctionSummary


@dataclass(frozen=True)
class CallContext:
    """A dimension of the calling context: what every caller passes, as facts about each
    parameter and the receiver (identities stay the callee's own parameter paths)."""

    args: tuple[tuple[str, AbsValue], ...] = ()
    receiver: Optional[AbsValue] = None
    hot: bool = False  # reached on every step of a hot path
    # What `self.<attr>` holds on entry: the class's methods' stores (CodeQL's field step:
    # a value any method stores reaches every method's read), identities as `self` paths
    receiver_state: tuple[tuple[str, AbsValue], ...] = ()

    def arg(self, name: str) -> Optional[AbsValue]:
        return dict(self.args).get(name)


ROOT_CONTEXT = CallContext()

class ProgramView(Protocol):
    """What a walk may ask of the program around it (the solver answers)."""

    def summary(self, qualname: str, context: CallContext) -> Optional[FunctionSummary]:
        """What calling the project function `qualname` ("pkg.mod.f", "pkg.mod.C.m") under
        `context` does; None when it is not the project's, or is being walked (recursion)."""

    def is_class(self, qualname: str) -> bool:
        """A project class: calling it constructs an object."""

    def kernel_writes(self, qualname: str) -> Optional[frozenset[int]]:
        """A GPU kernel's parameters its body stores into, by position; None when unknown."""


@dataclass
class Frame:
    qualname: str  # the function walked ("" for a module body)
    module: str  # its module's dotted name (callees are looked up under it)
    imports: dict[str, str]  # name bound in the module -> the qualified name it stands for
    local_functions: frozenset[str]  # module-level functions and classes, by name
    class_name: str = ""  # the class of a method
    program: Optional[ProgramView] = None
    call_ordinals: dict[int, int] = field(default_factory=dict)  # id(Call) -> ordinal in source order
    loop_depth: int = 0
    loop_names: list[str] = field(default_factory=list)  # the targets of the enclosing `for` loops
    effects: list[Effect] = field(default_factory=list)  # emitted, in the callee's own terms
    conflicts: list[Conflict] = field(default_factory=list)
    seen_effects: set = field(default_factory=set)  # (a loop walks its body until nothing changes)
    returned: Optional[AbsValue] = None  # the join of the values it returns
    globals: dict[str, AbsValue] = field(default_factory=dict)  # what module-level names hold (the module's top level)
    exit_state: Optional[State] = None  # the join of the states it returns or falls off the end with

    def site(self, node: cst.CSTNode) -> str:
        return f"{self.qualname}#{self.call_ordinals.get(id(node), -1)}"

    def emit(self, effect: Effect) -> None:
        if effect not in self.seen_effects:
            self.seen_effects.add(effect)
            self.effects.append(effect)

    def report(self, found: list[Conflict]) -> None:
        for conflict in found:
            if conflict not in self.conflicts:
                self.conflicts.append(conflict)
