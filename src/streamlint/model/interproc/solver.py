"""The one interprocedural solver: summaries per (function, calling context), computed on
demand when a call site asks, memoised, with recursion cut on the stack (a callee already
being walked gives no summary: missing knowledge removes reports) and one budget.

The budget (documented in docs/architecture.md): at most MAX_CONTEXTS distinct contexts per
function; a call past it is solved under the join of nothing, the root context. At most
MAX_WALKS walks per run; past it, calls are opaque.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

import libcst as cst
from pathlib import Path as FilePath

from streamlint import reads
from streamlint.deadline import tick
from streamlint.model.domain.order import Conflict
from streamlint.model.domain.paths import CELL, Path, Root
from streamlint.model.syntax.names import bound_to_calls, rebound_globals
from streamlint.model.syntax.prefilter import may_rebind_globals
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.values import FALSE, LEFT_OUT, NONE, PASSED_UNTOLD, TRUE, UNKNOWN, AbsValue, Memory, ValueKind
from streamlint.model import declared, resolve
from streamlint.model.syntax.constructions import fields_read, kept_whole
from streamlint.model.interproc.class_state import (as_global, as_receiver_state, host_written_attributes, join_stores,
                                                    kept_on_the_host, placeholders_given_way, shown_by_use)
from streamlint.model.interproc import replay
from streamlint.model.interproc.digests import note_use
from streamlint.model.interproc.modules import ProjectModules, main_names, read_source
from streamlint.model.api import triton
from streamlint.model.interproc.top_level import TopLevelView
from streamlint.model.interproc.program import TOP_LEVEL, FunctionRef, Program, qualified, unit_of
from streamlint.model.summary.codec import sealed
from streamlint.model.transfer.kernels import stored_parameters, triton_stored_parameters
from streamlint.model.transfer.nodes import preorder
from streamlint.model.summary.function_summary import FunctionSummary
from streamlint.model.transfer.frame import ROOT_CONTEXT, SIDE_STREAM_FACT, CallContext, Frame
from streamlint.model.transfer.interpret import Walked, call_ordinals, walk_function

MAX_CONTEXTS = 4
# What a module-level call of a project function may bind a global to (`Solver._called_globals`).
_CALLED_GLOBAL_KINDS = frozenset({ValueKind.NAMESPACE, ValueKind.DEVICE})
# Functions that may store one attribute on a holder for a reader to take what they leave (D-16)
MAX_PRODUCERS = 4
# The context of the one walk of a module's top level that finds what its names hold.
GLOBALS_CONTEXT = CallContext(receiver_state=(("<globals>", UNKNOWN),))
MAX_WALKS = 5000
# The modules read for the callers of the checked module's functions: its package's (none when
# the package has more) and the project root's scripts (at most this many).
MAX_PACKAGE_FILES = 256
MAX_ROOT_FILES = 64
# The walks done to learn what the project's callers pass (its callers and what they call):
# past this many, no further caller is walked (the contexts found so far stand). Set-up callers (constructors,
# checkpoint code) are walked last; their cold contexts walk again what the steady path walks.
MAX_CALLER_WALKS = 1500
# How many calls away from the checked module's functions their callers are sought (a caller's callers, ...), within
# MAX_CALLER_WALKS: the loop that runs a helper's helper on every step (a script's frame loop over a tracker's update).
MAX_CALLER_DEPTH = 3
# The methods a call of the object itself runs (`self.frontend()`, a module called on its input).
_CALLED_AS_OBJECT = frozenset({"__call__", "forward"})
NOW_AND_THEN = " (now and then)"  # (the mark of a function cold because its callers call it every N steps)


@dataclass
class Solved:
    """Every walk's result, by (qualname, context)."""

    walks: dict[tuple[str, CallContext], Walked] = field(default_factory=dict)
    # Walks done only to learn what the project's callers pass (a caller in another module, and
    # what it calls under its own context): their conflicts are that module's to report
    unreported: set[tuple[str, CallContext]] = field(default_factory=set)
    # Walks of a function as no caller in sight calls it where callers in sight call it (row 6.43):
    # not its findings, but still its class's interface for the memory it hands out (`at_boundary`)
    entered_only: set[tuple[str, CallContext]] = field(default_factory=set)

    def reported(self) -> list[tuple[tuple[str, CallContext], Walked]]:
        return [(key, walked) for key, walked in self.walks.items()
                if key not in self.unreported and key not in self.entered_only]

    def at_boundary(self) -> list[tuple[tuple[str, CallContext], Walked]]:
        """The walks read for what a function hands its callers out of sight."""
        return [(key, walked) for key, walked in self.walks.items() if key not in self.unreported]

    def conflicts_in(self, module: str) -> list[tuple[str, Conflict]]:
        seen, found = set(), []
        for (qualname, _), walked in self.reported():
            if not qualname.startswith(module + "."):
                continue
            for conflict in walked.conflicts:
                if conflict not in seen:
                    seen.add(conflict)
                    found.append((qualname, conflict))
        return found

    def summaries_of(self, qualname: str) -> list[tuple[CallContext, FunctionSummary]]:
        return [(ctx, w.summary) for (q, ctx), w in self.walks.items() if q == qualname]

    def walks_of(self, qualname: str) -> list[Walked]:
        return [w for (q, _), w in self.walks.items() if q == qualname]


class Solver:
    def __init__(self, program: Program, reporting: bool = True) -> None:
        """`reporting`: the solve of a checked file; a digest's solve (digest_of_use) reports nothing."""
        self.program = program
        self._reporting = reporting
        self.solved = Solved()
        self._stack: set[str] = set()
        self._cut: set[str] = set()  # the functions a walk was cut at as recursive (on the stack when called)
        # walks of a method from no receiver state, made while its class's constructor runs: by class
        self._under_constructor: dict[str, set] = {}
        self._contexts: dict[str, set[CallContext]] = {}
        self._class_states: dict[str, tuple] = {}
        self._class_pendings: dict[str, tuple] = {}
        self._composing: set[str] = set()  # classes whose receiver state is being computed
        self.called: set[str] = set()  # functions some walked call site called
        self.called_here: set[str] = set()  # ... a call site of the checked module's reported walks
        self._globals: dict[str, dict] = {}
        self._nodes: dict[str, dict[int, int]] = {}
        self._ids: dict[int, dict] = {}
        # the module and context of each function being walked, innermost last
        # (whether it is entered as no caller in sight calls it: its calls are reverse edges)
        self._walking: list[tuple[str, bool]] = []
        # what each call site of a checked-module function passed (reverse edges), and which of
        # those functions a caller in another module calls
        self._asked: dict[str, list[CallContext]] = {}
        # the same call sites by the function that makes them, and whether each runs only now and then
        self._asked_from: dict[str, set[tuple[str, bool]]] = {}
        self._called_from_outside: set[str] = set()
        self._composing_depth = 0  # class states being composed (walks that are no callers' evidence)
        self._by_methods: dict[tuple[str, frozenset[str]], str] = {}
        self._with_method: dict[tuple[str, str, str], tuple[str, ...]] = {}
        self._left_on_holders: dict[tuple[str, str, str], Optional[AbsValue]] = {}
        # walking a function in what its callers pass, joined: the walks it reaches (else None)
        self._joining: Optional[set] = None
        # walking the project's callers (and what they call, in what their call sites pass)
        self._from_callers = False
        self._extra_spent: dict[str, set] = {}  # the kinds of extra context each function has used
        self._kept = replay.kept_walks()
        self._units_read: Optional[list] = None
        # the walks each walk's call sites reached (call edges between walks), the walks in progress,
        # and the walks of what every caller passes: where the checked module's findings are read (row 6.43)
        self._calls: dict[tuple, set] = {}
        self._keys: list[tuple] = []
        self._joined_walks: set[tuple] = set()

    def solve_module(self) -> Solved:
        held = self._globals[self.program.main.name] = self._module_names(self.program.main.name)
        self._called_globals(self.program.main.name, held)
        for qualname in list(self.program.main.functions):
            self._solve(qualname, ROOT_CONTEXT)
        self._solve_under_callers()
        for cls, keys in self._under_constructor.items():
            # the class's methods walked while its constructor ran, from nothing it stores: not the methods' walks
            # where the class stores something (their walks from its joined state report for them); set aside
            # before the reported walks are read, so a method only they reach is reported from the joined state
            if self._class_states.get(cls) and self._reporting:
                self.solved.unreported |= keys
        if self._reporting:
            self._read_where_reached()
        return self.solved

    def _solve_under_callers(self) -> None:
        """Contexts top-down from the project's call sites: the functions of the package's other
        modules (and the root scripts) that call a name the checked module defines are walked,
        as any caller, and what every call site passes a checked function, joined, is a context
        it is walked in too (when it tells more than the root context)."""
        before = set(self.solved.walks)
        main = self.program.main
        called = frozenset({q.rsplit(".", 1)[-1] for q in main.functions} - {"__init__", TOP_LEVEL})
        # (a module that defines no name a caller can call has no callers: the package is not read)
        units = self.program.package_units(MAX_PACKAGE_FILES, MAX_ROOT_FILES, called, main.classes) \
            if called or main.classes else ()
        wanted = set(called) | set(main.classes)
        callers = [q for unit in units for q in self._callers_in(unit, wanted, main.name)]
        self._from_callers = True  # (a callee they reach in what a call site passes: the context the joined walk gets)
        walked: set[str] = set()
        try:
            # (their callers in turn, up to MAX_CALLER_DEPTH calls away: the loop that runs a helper's helper)
            for _ in range(MAX_CALLER_DEPTH):
                # (the budget goes to the callers on the steady path first: a set-up entry's walks, a constructor's,
                # only tell that what it calls is cold there)
                for qualname in sorted(dict.fromkeys(callers), key=lambda q: bool(self.cold_entry(q))):
                    if len(self.solved.walks) - len(before) >= MAX_CALLER_WALKS:
                        break
                    walked.add(qualname)
                    self._solve(qualname, ROOT_CONTEXT)
                callers = [q for q in self._callers_of(callers) if q not in walked]
                if not callers or len(self.solved.walks) - len(before) >= MAX_CALLER_WALKS:
                    break
        finally:
            self._from_callers = False
        self.solved.unreported |= set(self.solved.walks) - before
        for qualname in sorted(self._called_from_outside):
            joined = _joined(self._asked.get(qualname, []))
            if joined is None or joined == ROOT_CONTEXT:
                continue
            self._joining = set()  # (the walks reported: one context each past what the callers' walks took)
            self._solve(qualname, joined)
            key = self._key_of(qualname, joined)
            self._joined_walks |= {key} | self._joining
            # what it reaches is reported, also a walk a caller's walk made before in the same context
            self.solved.unreported -= {key} | self._joining
            self._joining = None

    def _read_where_reached(self) -> None:
        """Which of the checked module's walks are its findings (row 6.43): a function some other function's
        walk calls is reported in what its callers pass (the walks their call sites reach, and the walks
        the callers' joined walk reaches), not as no caller in sight calls it. The entries: the functions
        no other function's walk calls, a walk whose function's own text told what its callers hand it (D-14:
        callers out of sight), the walks of other modules (a caller that passes nothing told
        reaches the walk as entered); a function none of whose walks is reached (a cycle entered from
        nowhere) keeps its walks as they were."""
        main = self.program.main.name + "."
        unreported = self.solved.unreported
        walks = {key for key in self.solved.walks if key[0].startswith(main)}
        called = {callee[0] for caller, callees in self._calls.items() for callee in callees if callee[0] != caller[0]}
        joined = self._reached(self._joined_walks) & walks
        seeds = {key for key, walked in self.solved.walks.items() if not key[0].startswith(main)
                 or ((key[0] not in called or walked.told_by_itself) and key not in unreported)}
        reached = self._reached(seeds | joined)
        functions = {key[0] for key in reached if key in joined or key not in unreported}
        kept = (reached - unreported) | joined | {key for key in walks - unreported if key[0] not in functions}
        self.solved.entered_only = (walks - unreported) - kept
        self.solved.unreported = unreported - kept

    def _reached(self, seeds: set) -> set:
        reached, todo = set(seeds), list(seeds)
        while todo:
            for callee in self._calls.get(todo.pop(), ()):
                if callee not in reached:
                    reached.add(callee)
                    todo.append(callee)
        return reached

    def _spelling_classes(self) -> list:
        """The modules of the package and the root scripts that spell a class of the checked module
        (read once; the walks' call resolution is left as it was until the callers' search)."""
        if self._units_read is None:
            main = self.program.main
            self._units_read = self.program.package_units(MAX_PACKAGE_FILES, MAX_ROOT_FILES, frozenset(),
                                                          main.classes, remember=False) if main.classes else []
        return self._units_read

    def _subclasses_of(self, cls: str) -> list[str]:
        """The project classes that derive from `cls` directly, a class of the checked module, among
        the modules read for its callers (a subclass spells its base)."""
        if cls.rpartition(".")[0] != self.program.main.name:
            return []
        return [f"{unit.name}.{name}" for unit in [self.program.main, *self._spelling_classes()]
                for name, bases in sorted(unit.bases.items())
                if any(self.program.class_defined_at(b) == cls for b in bases)]

    def _callers_in(self, unit, wanted: set[str], module: str) -> list[str]:
        """The functions of `unit` that may call a function named in `wanted` (of `module`): by the
        name they call (a class, a function, a method through any receiver: class-hierarchy style),
        and a constructor only from a subclass of one of `module`'s classes (`super().__init__(...)`:
        every other class's constructor calls its own bases')."""
        subclasses = {cls for cls, bases in unit.bases.items() if any(self._is_class_of(b, module) for b in bases)}
        return [q for q, names in unit.called_names().items()
                if names & wanted or ("__init__" in names and unit.functions[q].class_name in subclasses)]

    def _callers_of(self, functions: list[str]) -> list[str]:
        """The functions of the package and the root scripts that may call one of `functions` (the callers found one
        call further away): by name, and an object called (`self.frontend()`) by the attribute its class's
        instances are kept under (`self.frontend = Frontend(...)`), for a `__call__` or a module's `forward`."""
        names = {q.rsplit(".", 1)[-1] for q in functions} - {"__init__", TOP_LEVEL}
        classes = {f.class_name for f in map(self.program.function, functions)
                   if f is not None and f.class_name and f.qualname.rsplit(".", 1)[-1] in _CALLED_AS_OBJECT}
        units = self.program.package_units(MAX_PACKAGE_FILES, MAX_ROOT_FILES, frozenset(names), frozenset(classes),
                                           remember=False) if names or classes else []
        held = {attr for unit in units for cls in classes for attr in unit.kept_under(cls)}
        wanted = names | held
        return [q for unit in units for q in unit.called_names() if unit.called_names()[q] & wanted]

    def _is_class_of(self, qualname: str, module: str) -> bool:
        """A base named as a class of `module` (directly, or through a re-export)."""
        unit = self.program.main if module == self.program.main.name else self.program.unit(module)
        return unit is not None and qualname.rsplit(".", 1)[-1] in unit.classes and self.program.is_class(qualname)

    def summary(self, qualname: str, context: CallContext) -> Optional[FunctionSummary]:
        """A call site asks (ProgramView): the callee has a caller in sight."""
        self.called.add(qualname)
        function = self.program.function(qualname)
        if self._walking and self._walking[-1][0] == self.program.main.name and not self._from_callers:
            self.called_here.update({qualname, function.qualname} if function is not None else {qualname})
        if function is not None and function.module != self.program.main.name:
            unit = self.program.unit(function.module)
            note_use(unit.path if unit is not None else "", function.qualname[len(function.module) + 1:])
        elif function is not None:
            self.called.add(function.qualname)
            self._note_caller(function, context)
        caller = self._keys[-1] if self._keys else None
        return self._solve(qualname, context, caller)

    def _note_caller(self, function: FunctionRef, context: CallContext) -> None:
        """A call site of a checked-module function, in a caller walked as it is entered (no
        assumption about its own callers; a method from its class's state): a reverse edge."""
        if not self._walking or self._composing_depth or not self._walking[-1][1]:
            return
        self._asked.setdefault(function.qualname, []).append(_by_name(function, context))
        if self._keys:
            self._asked_from.setdefault(function.qualname, set()).add((self._keys[-1][0], context.now_and_then))
        if self._walking[-1][0] != function.module:
            self._called_from_outside.add(function.qualname)

    def _key_of(self, qualname: str, context: CallContext) -> tuple[str, CallContext]:
        """The key the walk of `qualname` under `context` (as a call site gives it) is kept by."""
        function = self.program.function(qualname)
        assert function is not None
        context = self._with_receiver_state(function, _by_name(function, context))
        known = self._contexts.get(function.qualname, set())
        return function.qualname, context if context in known else ROOT_CONTEXT

    def summary_at_root(self, qualname: str) -> Optional[FunctionSummary]:
        """What `qualname` does under no assumption about its callers."""
        return self._solve(qualname, ROOT_CONTEXT)

    def _solve(self, qualname: str, context: CallContext, caller: Optional[tuple] = None) -> Optional[FunctionSummary]:
        function = self.program.function(qualname)
        if function is None or len(self.solved.walks) >= MAX_WALKS:
            return None
        qualname = function.qualname  # (a name re-exported or inherited: where it is defined)
        context = self._within_budget(function, self._with_receiver_state(function, self._hot(function, _by_name(function, context))))
        key = (qualname, context)
        if self._joining is not None:
            self._joining.add(key)
        if caller is not None and caller[0] != qualname and (key in self.solved.walks or qualname not in self._stack):
            self._calls.setdefault(caller, set()).add(key)
        if key in self.solved.walks:
            return self.solved.walks[key].summary
        if qualname in self._stack:
            self._cut.add(qualname)
            return None  # recursion: cut here
        tick()  # (the file's time budget, read once per walk: past it the analysis stops)
        self._stack.add(qualname)
        self._keys.append(key)
        own_hot = context.hot and context.hot == self.program.hot_entry(function)  # (a hot entry is hot on its own)
        self._walking.append((function.module, entered_bare(replace(context, receiver_pending=(), hot="" if own_hot else context.hot))))
        # another module's function: its walk kept for the run, replayed when its queries get the same answers (D-39)
        # (the checked module's walks are its findings: always walked; a digest's solve reports none)
        own = function.module == self.program.main.name and self._reporting
        asking = replay.Asking(self) if not own else None
        try:
            walked = replay.replayed(self._kept, key, self, function.node) if asking is not None else None
            if walked is None:
                walked = walk_function(function.node, self._frame(function, asking), context)
                if asking is not None:
                    replay.keep(self._kept, key, walked, asking, function.node)
        finally:
            self._stack.discard(qualname)
            self._walking.pop()
            self._keys.pop()
        self.solved.walks[key] = walked
        cls = f"{function.module}.{function.class_name}" if function.class_name and not function.free_receiver else ""
        if cls and not context.receiver_state and f"{cls}.__init__" in self._stack and qualname != f"{cls}.__init__":
            self._under_constructor.setdefault(cls, set()).add(key)
        return walked.summary

    def _hot(self, function: FunctionRef, context: CallContext) -> CallContext:
        """The hot dimension: a hot entry is hot on its own; a memoized function runs once per argument
        tuple, not on every call. The thread dimension: a function its module starts on a thread of its own."""
        entry = self.program.hot_entry(function)
        hot = "" if self.program.memoized(function) else (entry or context.hot)
        thread = self.program.thread_entry(function)
        return context if (hot, thread) == (context.hot, context.thread) else replace(context, hot=hot, thread=thread)

    def is_module(self, cls: str) -> bool:
        return self.program.is_module(cls)

    def property_of(self, cls: str, attr: str) -> str:
        function = self.program.function(f"{cls}.{attr}")
        return function.qualname if function is not None and self.program.is_property(function) else ""

    def cold_entry(self, qualname: str) -> str:
        function = self.program.function(qualname)
        return self.program.cold_entry(function) if function is not None else ""

    def cold(self, qualname: str) -> str:
        """The cold entry the function is, or that every call site in sight reaches it from ("" when none)."""
        joined = _joined(self._asked.get(qualname, []))
        return self.cold_entry(qualname) or (joined.cold if joined is not None else "") \
            or self._called_now_and_then(qualname) or self._cold_callers(qualname)

    def _cold_callers(self, qualname: str, seen: frozenset = frozenset()) -> str:
        """A private function every caller of which is a cold entry, or private and cold so (a helper a module's
        constructor calls alone): cold from the first such entry; "" otherwise."""
        function = self.program.function(qualname)
        callers = self.program.private_callers(function) if function is not None and qualname not in seen else ()
        entries = [self.cold_entry(c) or self._cold_callers(c, seen | {qualname}) for c in callers]
        return entries[0] if entries and all(entries) else ""

    def _called_now_and_then(self, qualname: str, seen: frozenset = frozenset()) -> str:
        """Every call site in sight runs only now and then, or sits in a function that is cold so (a report
        reached only every N steps, through helpers): "" when one runs on every pass of its caller."""
        sites = self._asked_from.get(qualname)
        if not sites or qualname in seen:
            return ""
        seen = seen | {qualname}
        for caller, now_and_then in sorted(sites):
            if not now_and_then and not (self.cold_entry(caller) or self._called_now_and_then(caller, seen)):
                return ""
        return f"{sorted(sites)[0][0]}{NOW_AND_THEN}"

    def only_now_and_then(self, qualname: str) -> bool:
        """Cold only because its callers call it now and then (every N steps): what it does per call is rare, though
        a loop of its own still repeats on every call."""
        reason = self.cold(qualname)
        return reason.endswith(NOW_AND_THEN)

    def memoized(self, qualname: str) -> bool:
        """Does the function run once per argument tuple (`functools.lru_cache`)?"""
        function = self.program.function(qualname)
        return function is not None and self.program.memoized(function)

    def is_class(self, qualname: str) -> bool:
        return self.program.is_class(qualname)

    def method_alias(self, qualname: str) -> Optional[tuple[str, bool]]:
        if self.program.function(qualname) is not None:
            return None  # (a method the class defines or inherits)
        function = self.program.method_alias(qualname)
        return (function.qualname, bool(function.class_name)) if function is not None else None

    def is_enumeration(self, qualname: str) -> bool:
        return self.program.is_enumeration(qualname)

    def kernel_framework(self, qualname: str) -> str:
        """Whose current stream a launch of the project function `qualname` without a stream runs on: PyTorch's for a
        Triton kernel, Numba's for a Numba kernel; "" when not told or not a function (a class subscripted,
        `Dataset[T](...)`, makes an instance of a generic class)."""
        if self.program.is_class(qualname):
            return ""
        function = self.program.function(qualname)
        unit = self.program.unit(function.module) if function is not None else None
        if unit is None or not isinstance(function.node, cst.FunctionDef):
            return ""
        decorators = {qualified(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator, unit.imports)
                      for d in function.node.decorators}
        if decorators & triton.KERNEL_DECORATORS:
            return triton.LAUNCHED_ON
        # (a decorator of Numba's: its legacy default stream; one nothing tells of, a project's own wrapper: not told)
        return "numba" if any(d.split(".", 1)[0] == "numba" for d in decorators) else ""

    def kernel_writes(self, qualname: str) -> Optional[frozenset[int]]:
        function = self.program.function(qualname)
        if function is None or not isinstance(function.node, cst.FunctionDef):
            return None
        if self.kernel_framework(qualname) == triton.LAUNCHED_ON:
            unit = self.program.unit(function.module)
            imports = unit.imports if unit is not None else {}
            return triton_stored_parameters(function.node, lambda expr: qualified(expr, imports))
        return stored_parameters(function.node)

    def class_defining(self, module: str, methods: frozenset[str]) -> Optional[str]:
        found = self._by_methods.get((module, methods))
        if found is None:
            found = self._by_methods[(module, methods)] = self.program.class_defining(module, methods) or ""
        return found or None

    def methods_named(self, cls: str, prefix: str) -> tuple[str, ...]:
        return self.program.methods_named(cls, prefix)

    def lambda_function(self, module: str, node: cst.Lambda) -> Optional[str]:
        unit = self.program.unit(module)
        return unit.lambda_function(node) if unit is not None else None

    def makes_cuda_default(self) -> bool:
        return self.program.makes_cuda_default(MAX_PACKAGE_FILES, MAX_ROOT_FILES)

    def latches(self, qualname: str) -> frozenset[str]:
        function = self.program.function(qualname)
        unit = self.program.unit(function.module) if function is not None and function.class_name else None
        if unit is None or function.free_receiver:  # type: ignore[union-attr]
            return frozenset()
        return unit.latches().get(function.class_name, frozenset())  # type: ignore[union-attr]

    def ring_size(self, module: str, attr: str) -> int:
        unit = self.program.unit(module)
        return unit.ring_counters().get(attr, 0) if unit is not None else 0

    def classes_with_method(self, module: str, name: str, within: str = "",
                            call: Optional[cst.Call] = None) -> tuple[str, ...]:
        key = (module, name, within, id(call) if call is not None else 0)
        found = self._with_method.get(key)
        if found is None:
            found = self._with_method[key] = self.program.classes_with_method(module, name, MAX_CONTEXTS, within, call)
        return found

    def hierarchy_of(self, module: str, methods: frozenset[str]) -> Optional[str]:
        """The class an object with these methods is one of (class-hierarchy analysis): the most
        derived common project base of the classes that define them, each of one hierarchy."""
        classes = [c for m in sorted(methods) for c in self.classes_with_method(module, m)]
        if not classes or any(not self.classes_with_method(module, m) for m in methods):
            return None
        return classes[0] if len(set(classes)) == 1 else self.program.common_base(sorted(set(classes)))

    def base_class(self, cls: str) -> Optional[str]:
        """The first of the project class `cls`'s bases that is a project class (`super()`'s)."""
        module, _, name = cls.rpartition(".")
        unit = self.program.unit(module)
        bases = unit.bases.get(name, ()) if unit is not None else ()
        return next((found for found in map(self.program.class_defined_at, bases) if found is not None), None)

    def left_on_holders(self, module: str, attr: str, reader: str) -> Optional[AbsValue]:
        key = (module, attr, reader)
        if key not in self._left_on_holders:
            self._left_on_holders[key] = None  # (asked again while its producers are walked: nothing yet)
            self._left_on_holders[key] = self._producers_leave(module, attr, reader)
        return self._left_on_holders[key]

    def _producers_leave(self, module: str, attr: str, reader: str) -> Optional[AbsValue]:
        producers = [q for q in self.program.holder_producers(module, attr) if q != reader]
        if not producers or len(producers) > MAX_PRODUCERS:
            return None
        left = []
        for qualname in producers:
            summary = self._asked_aside(qualname)
            value = dict(summary.holder_stores).get(attr) if summary is not None else None
            if value is not None:
                left.append(replace(value, stream=produced_by(qualname, value.stream)))
        if not left or any(value.stream is None for value in left):
            return None
        joined = left[0]
        for value in left[1:]:
            joined = joined.join(replace(value, stream=joined.stream))
        stream = StreamRef.either_of(value.stream for value in left)
        return replace(joined, stream=stream) if stream is not None else None

    def _asked_aside(self, qualname: str) -> Optional[FunctionSummary]:
        """A function's root summary asked by a query in the middle of other walks (not by a call): a walk it makes that
        calls one of the interrupted functions is cut there as if recursive; those walks are not kept, and are walked
        again when a call asks for them."""
        interrupted, cut, walks = set(self._stack), self._cut, set(self.solved.walks)
        self._cut = set()
        try:
            summary = self.summary_at_root(qualname)
            if self._cut & interrupted:
                for key in set(self.solved.walks) - walks:
                    del self.solved.walks[key]
        finally:
            self._cut = cut | self._cut
        return summary

    def class_attribute(self, cls: str, attr: str) -> Optional[AbsValue]:
        cls = self.program.class_defined_at(cls) or ""  # (named through a re-export: where it is defined)
        module, _, name = cls.rpartition(".")
        if not cls:
            return None
        return dict(self._class_state_of(module, name)).get(attr)

    def _module_names(self, module: str) -> dict:
        """What the module's names hold after its top level ran, calls left opaque (a function
        reads a global after the module was imported). Memory they hold is named as globals."""
        unit = self.program.unit(module)
        if unit is None:
            return {}
        if unit.top_names_held is None:  # (no caller's view: the same for every solver of the unit)
            frame = Frame(f"{module}.<globals>", module, unit.imports, unit.top_names, program=TopLevelView(self))
            walk_function(unit.tree, frame, GLOBALS_CONTEXT)
            exit_state = frame.found.exit_state
            # a name a function rebinds (`global _comm`) holds what the module set or what that function stores
            rebound = rebound_globals(unit.tree) if not unit.text or may_rebind_globals(unit.text) else frozenset()
            unit.top_names_held = {} if exit_state is None else {
                name: as_global(name, UNKNOWN if name in rebound else value) for name, value in exit_state.names}
        return dict(unit.top_names_held)

    def _with_receiver_state(self, function: FunctionRef, context: CallContext) -> CallContext:
        if not function.class_name or function.node.name.value == "__init__" or context.receiver_state:
            return context
        entered = context == ROOT_CONTEXT  # (no caller in sight says what it passes)
        receiver = context.receiver
        if receiver is not None and receiver.keys and receiver.kind is ValueKind.OBJECT:
            # (the caller's fields refine the composed state, and are no key of the walk beyond what they refine)
            context = replace(context, receiver=replace(receiver, keys=(), positions=()))
        context = replace(context, receiver_state=_told_by_the_receiver(self._class_state(function), receiver))
        # (what the other public methods leave pending meets only the walk's conflicts, which are reported
        # for the checked module alone: another module's method is entered without it)
        if entered and function.module == self.program.main.name and self._reporting:
            context = replace(context, receiver_pending=self._class_pending(function, context))
        return context

    def _class_pending(self, function: FunctionRef, entered: CallContext) -> tuple:
        """What the class's public methods, entered with the receiver state, leave in flight on
        `self` when they return: any of them may have run before a method no caller in sight calls."""
        cls = f"{function.module}.{function.class_name}"
        cached = self._class_pendings.get(cls)
        if cached is not None:
            return cached
        if cls in self._composing:
            return ()  # the receiver state the methods start from is not known yet
        self._class_pendings[cls] = ()  # (asked for while computed: nothing yet)
        unit = self.program.unit(function.module)
        assert unit is not None
        found: list = []
        for method in unit.functions:
            name = method[len(cls) + 1:]
            if method.startswith(cls + ".") and "." not in name and not name.startswith("_"):
                self._solve(method, entered)
                walked = self.solved.walks.get((method, entered))
                found.extend(a for a in (walked.left_on_self if walked else ()) if a not in found)
        self._class_pendings[cls] = tuple(found)
        return self._class_pendings[cls]

    def _class_state(self, function: FunctionRef) -> tuple:
        """What `self.<attr>` holds on entry to a method: the join of what the constructor and
        every other method store (RacerD's class composition as a context dimension; order-
        insensitive, as CodeQL's field steps). Two rounds: the constructor's stores, then every
        method's stores walked from those."""
        return self._class_state_of(function.module, function.class_name)

    def _class_state_of(self, module: str, class_name: str) -> tuple:
        cls = f"{module}.{class_name}"
        cached = self._class_states.get(cls)
        if cached is not None:
            return cached
        if f"{cls}.__init__" in self._stack:
            return ()  # asked for by a method the constructor calls: computed once it is done
        self._class_states[cls] = ()  # (a method asked for while this is computed starts bare)
        self._composing.add(cls)
        unit = self.program.unit(module)
        assert unit is not None
        methods = [q for q in unit.functions if q.startswith(cls + ".") and q.count(".") == cls.count(".") + 1]
        self._composing_depth += 1  # (these walks start from part of the state: their calls are no callers' evidence)
        before = set(self.solved.walks)
        try:
            first, shown, _ = self._stores_of([f"{cls}.__init__"], (), self._handed_by_owners(module, class_name))
            # (a method whose text neither assigns on `self` nor spells the GPU adds no store, nor a use that shows one)
            rest, more, written = self._stores_of([m for m in methods if not m.endswith(".__init__")
                                                   and unit.composes_state(m)], first)
            # the walks of the class's methods from part of its state (the constructor's stores, or none yet)
            first_round = {key for key in set(self.solved.walks) - before if key[0] in methods
                           and not key[0].endswith(".__init__") and key[1].receiver_state in ((), _BARE_STATE, first)}
            # what the methods' use of an attribute shows it is (`self.x.record_stream(s)`), where no store tells
            joined = shown_by_use(join_stores(kept_on_the_host(first, rest, written | unit.written_in_place(class_name)), rest), shown + more)
            joined = self._completed_by_subclasses(cls, joined)
        finally:
            self._composing_depth -= 1
        joined = placeholders_given_way(joined)
        if joined != first:  # a walk from the constructor's stores alone: the first round, not the method's walk
            self.solved.unreported |= first_round
        self._class_states[cls] = joined
        self._composing.discard(cls)
        return joined

    def _completed_by_subclasses(self, cls: str, state: tuple) -> tuple:
        """A class's methods run on an instance of the class or of a subclass: an attribute the class
        never sets (or sets only to None) is what every one of its project subclasses sets there,
        joined; when one of them leaves it unset, it stays unknown."""
        subclasses = self._subclasses_of(cls)
        if not subclasses or len(subclasses) > MAX_CONTEXTS:
            return state
        theirs = [dict(self._class_state_of(*sub.rsplit(".", 1))) for sub in subclasses]
        own = dict(state)
        for attr in sorted(set.intersection(*(set(t) for t in theirs))):
            if attr in own and own[attr].kind is not ValueKind.NONE:
                continue
            value = theirs[0][attr]
            for other in theirs[1:]:
                value = value.join(other[attr])
            own[attr] = value
        return tuple(sorted(own.items()))

    def _handed_by_owners(self, module: str, class_name: str) -> tuple[tuple[str, AbsValue], ...]:
        """What the class's constructor is handed where every construction in sight (the checked module, the modules
        of the package and the root scripts that spell the class) agrees: an owner's receiver (`Tracker(cfg, self)`
        in a method of `System`: an instance of `System`, whose attributes its class state tells) or the object or
        memory the owner keeps at an attribute (`Frontend(self.video)`). A parameter some construction hands
        anything else, or leaves out, is not told (the project's own call sites are evidence, D-16)."""
        cls = f"{module}.{class_name}"
        init = self.program.function(f"{cls}.__init__")
        params = _params(init)[1:] if init is not None and not _star_name(init) else []
        # (only a constructor that reads fields off a parameter takes anything from an owner: the others are not
        # worth reading the package's constructions for, bound B-18)
        if not params or not isinstance(init.node, cst.FunctionDef) or not fields_read(init.node):
            return ()
        units = [self.program.main, *self.program.package_units(MAX_PACKAGE_FILES, MAX_ROOT_FILES, frozenset(),
                                                                frozenset({class_name}), remember=False)]
        # (a parameter kept whole is a back-reference to the owner, whose methods the component calls later: handing
        # the owner there would walk the owner's methods in each component's contexts, bound B-18)
        whole = kept_whole(init.node) if isinstance(init.node, cst.FunctionDef) else frozenset()
        told: dict[str, list] = {}
        count = 0
        for unit in {unit.name: unit for unit in units}.values():
            for site in unit.constructions(class_name):
                if self.program.class_defined_at(site.called) != cls:
                    continue
                if site.starred:
                    return ()
                count += 1
                for slot, own in site.handed:
                    name = params[int(slot)] if slot.isdigit() and int(slot) < len(params) else slot
                    kept = self._kept_by_owner(f"{unit.name}.{site.owner}", own) if own != "" or name not in whole else None
                    told.setdefault(name, []).append(kept)
        handed = []
        for name in params:
            values = told.get(name, [])
            if count and len(values) == count and all(v is not None for v in values):
                joined = values[0]
                for value in values[1:]:
                    joined = joined.join(value)
                if joined.kind in (ValueKind.OBJECT, ValueKind.BUFFER):
                    handed.append((name, joined))
        return tuple(handed)

    def _kept_by_owner(self, owner: str, own: Optional[str]) -> Optional[AbsValue]:
        """An owner's receiver (an instance of its class), or what its class keeps at `self.<own>` (an object, or
        memory whose kind is told); None when not told."""
        if own is None or not owner.rpartition(".")[2] or not self.program.is_class(owner):
            return None
        if own == "":
            return AbsValue(ValueKind.OBJECT, target=owner)
        # (only a state already composed: composing the owner's here, inside another class's composition, would make
        # its methods' walks no callers' evidence, and they are kept so)
        composed = self._class_states.get(self.program.class_defined_at(owner) or owner)
        kept = dict(composed).get(own) if composed else None
        return replace(kept, identity=None) if kept is not None and kept.kind in (ValueKind.OBJECT, ValueKind.BUFFER) \
            else None

    def _stores_of(self, methods: list[str], receiver_state: tuple,
                   handed: tuple[tuple[str, AbsValue], ...] = ()) -> tuple[tuple, list, set]:
        """What the methods leave on `self`, joined; the uses that show what an attribute is; the attributes whose
        memory they write on the host."""
        found: tuple = ()
        shown: list = []
        written: set[str] = set()
        for method in methods:
            summary = self._solve(method, CallContext(args=handed, receiver_state=receiver_state or _BARE_STATE))
            if summary is not None:
                written |= host_written_attributes(summary.effects)
                found = join_stores(found, as_receiver_state(summary.self_stores, receiver_state))
                shown.extend(summary.evidence)
        return found, shown, written

    def node_of(self, site: str):
        """The syntax node a site key names, in the program's modules."""
        qualname, _, ordinal = site.partition("#")
        function = self.program.function(qualname)
        if function is None or not ordinal.lstrip("-").isdigit():
            return None
        nodes = self._nodes.get(qualname)
        if nodes is None:
            nodes = self._nodes[qualname] = {n: node_id for node_id, n in call_ordinals(function.node).items()}
        return self._by_id(function.node).get(nodes.get(int(ordinal), -1))

    def _by_id(self, root) -> dict:
        found = self._ids.get(id(root))
        if found is None:
            found = self._ids[id(root)] = {id(node): node for node in preorder(root, lambda n: True)}
        return found

    def _within_budget(self, function: FunctionRef, context: CallContext) -> CallContext:
        qualname = function.qualname
        known = self._contexts.setdefault(qualname, set())
        # (a default a call leaves out spends no context of its own: it splits one the callers' facts make)
        if context in known or len({_without_left_out(c) for c in known | {context}}) <= MAX_CONTEXTS:
            known.add(context)
            return context
        # one more each for what the callers pass: the joined walk (and the walks it reaches), and
        # a callee the callers' walks reach in what a call site tells of its arguments. Apart: the
        # callers' walks come first and must not spend the joined walk's context
        extra = "joined" if self._joining is not None else "callers" if self._from_callers and context.args else ""
        spent = self._extra_spent.setdefault(qualname, set())
        if extra and extra not in spent:
            spent.add(extra)
            known.add(context)
            return context
        # past the budget, what callers tell is dropped; the hot entry, the class's state, the
        # stream the callers hand for the work and whether the caller's current stream is one it
        # entered stay (dimensions of a few values each: without the last, a CuPy helper called
        # inside `with s:` would be walked as if on the legacy default stream)
        # a closure's cells stay too: they are its enclosing walk's own names (what the closure runs on), not what
        # callers tell, and as many as that walk's contexts, which the budget already bounds
        work = context.work_stream
        # (an argument passed, whatever it was, still hides the parameter's default)
        defaulted = _defaulted_by_value(function)
        handed = tuple((name, value if name == work or name.startswith(CELL) else PASSED_UNTOLD)
                       for name, value in context.args if name == work or name.startswith(CELL)
                       or (name in defaulted and value.target != LEFT_OUT))
        return CallContext(handed, hot=context.hot, receiver_state=context.receiver_state, work_stream=work,
                           entered=context.entered, cold=context.cold)

    def _frame(self, function: FunctionRef, asking: Optional[replay.Asking] = None) -> Frame:
        unit = self.program.unit(function.module)
        assert unit is not None
        frame = Frame(function.qualname, function.module, unit.imports, unit.top_names, function.class_name, asking or self)
        frame.free_receiver = function.free_receiver
        # the numbering of a function's sites depends on its text only: once per function
        frame.numbering.text_facts = function.text_facts
        frame.numbering.call_ordinals = frame.numbering.once(
            "ordinals", lambda: call_ordinals(function.node, frame.numbering.once("nodes", lambda: function.own_nodes)))
        if function.module not in self._globals:  # another module's names, read when first used
            held = self._globals[function.module] = self._module_names(function.module)
            self._called_globals(function.module, held)  # (a walk it starts sees the names held so far)
        frame.globals = self._globals[function.module]
        return frame

    def _called_globals(self, module: str, held: dict) -> None:
        """A module-level name bound to what a project function returns (`DEVICE_MODULE = get_device_module()`,
        `DEVICE = get_device()`): a framework module or a device, as that function returns it under any caller
        (the top level's own walk leaves calls opaque)."""
        unit = self.program.unit(module)
        for name, func in bound_to_calls(unit.tree) if unit is not None else ():
            if held.get(name, UNKNOWN).kind is not ValueKind.UNKNOWN:
                continue
            callee = next((q for q in (f"{module}.{func.value}" if isinstance(func, cst.Name) else "",
                                       qualified(func, unit.imports)) if q and self.program.function(q) is not None), "")
            summary = self.summary_at_root(callee) if callee else None
            if summary is not None and summary.returns.kind in _CALLED_GLOBAL_KINDS:
                held[name] = summary.returns


def entered_bare(context: CallContext) -> bool:
    """The context a function is walked in as no caller in sight calls it: nothing known of its
    arguments; for a method, the receiver's state its class's methods leave on `self`."""
    return replace(context, receiver_state=()) == ROOT_CONTEXT and all(attr for attr, _ in context.receiver_state)


def _told_by_the_receiver(state: tuple, receiver: Optional[AbsValue]) -> tuple:
    """The class's composed state, each field it leaves untold (of unknown kind, an option, or memory not told) taken
    from what the caller's object holds there (`_receiver_fact`): the object the call is made on, as its caller made
    it, is evidence of what its fields are."""
    if receiver is None or receiver.kind is not ValueKind.OBJECT or not receiver.keys \
            or len(receiver.keys) != len(receiver.positions):
        return state
    told = dict(zip(receiver.keys, receiver.positions))
    refined = tuple((attr, replace(told[attr], identity=Path(Root.self_()).attr(attr))
                     if attr in told and _untold(value, told[attr]) else value) for attr, value in state)
    return refined if refined != state else state


def _untold(composed: AbsValue, caller: AbsValue) -> bool:
    """Does the class's own composition leave what the caller's object holds untold?"""
    if composed.kind is ValueKind.UNKNOWN:
        return True
    if composed.kind is not caller.kind:
        return False
    if composed.kind is ValueKind.CONTAINER:
        return composed.element is None or (caller.element is not None and _untold(composed.element, caller.element))
    return composed.memory is Memory.UNKNOWN and caller.memory is not Memory.UNKNOWN


def _joined(contexts: list[CallContext]) -> Optional[CallContext]:
    """What every call site passes: the facts all of them agree on (a join; an argument one of
    them does not pass, or passes as nothing known, is unknown). None: no call site."""
    if not contexts:
        return None
    args = dict(contexts[0].args)
    receiver = contexts[0].receiver
    for context in contexts[1:]:
        theirs = dict(context.args)
        # (a default one call leaves out and another call's value: nothing all of them agree on)
        args = {name: value.join(theirs[name]) for name, value in args.items() if name in theirs
                and (value == theirs[name] or LEFT_OUT not in (value.target, theirs[name].target))}
        receiver = receiver.join(context.receiver) if receiver is not None and context.receiver is not None else None
    told = tuple(sorted(((n, v) for n, v in args.items() if v.kind is not UNKNOWN.kind), key=lambda item: item[0]))
    if receiver is not None and receiver.kind is UNKNOWN.kind:
        receiver = None
    handed = _handed_for_the_work(contexts)
    if len(handed) == 1 and handed[0][0] not in args:
        told = tuple(sorted((*told, (handed[0][0], AbsValue(ValueKind.STREAM, handed[0][1]))), key=lambda item: item[0]))
    # hot when every caller is (named by the first hot entry in order: `hot` names an entry, never a flag)
    hot = min(c.hot for c in contexts) if all(c.hot for c in contexts) else ""
    cold = min(c.cold for c in contexts) if all(c.cold for c in contexts) else ""  # (reached from cold entries only)
    return CallContext(told, receiver, hot, chosen=all(c.chosen for c in contexts), cold=cold,
                       work_stream=handed[0][0] if len(handed) == 1 else "",
                       entered=tuple(f for f in contexts[0].entered if all(f in c.entered for c in contexts)))


def _handed_for_the_work(contexts: list[CallContext]) -> list[tuple[str, str]]:
    """The parameter one caller hands a side stream of its own, and every other caller a stream
    (its current or the null stream) or nothing (the parameter's default): on that caller's path
    it is the stream for the work (D-14: a sameness that holds on another path removes nothing)."""
    found = []
    names = {name for c in contexts for name, value in c.args if value.stream == SIDE_STREAM_FACT}
    for name in sorted(names):
        passed = [v for v in (c.arg(name) for c in contexts) if v is not None and v.target != LEFT_OUT]
        if all(v.kind is ValueKind.STREAM for v in passed):
            found.append((name, passed[0].framework if len({v.framework for v in passed}) == 1 else ""))
    return found


def _by_name(function: FunctionRef, context: CallContext) -> CallContext:
    """Positional facts ("0", "1", ...) named by the callee's parameters."""
    params = _params(function)
    if function.class_name and params and not function.free_receiver:
        params = params[1:]
    named: dict[str, AbsValue] = {}
    passed = set()
    rest = _star_name(function)
    if rest:  # `*args`: a tuple of what the call passes past the positional parameters, in order
        items = sorted((int(key), value) for key, value in context.args if key.isdigit() and int(key) >= len(params))
        if items and [i for i, _ in items] == list(range(len(params), len(params) + len(items))):
            named[rest] = AbsValue(ValueKind.CONTAINER, positions=tuple(value for _, value in items))
    for key, value in context.args:
        if rest and key.isdigit() and int(key) >= len(params):
            continue
        name = params[int(key)] if key.isdigit() and int(key) < len(params) else key
        passed.add(name)
        if (name in params or not key.isdigit()) and value != UNKNOWN:
            named[name] = value
        elif value == UNKNOWN and name in _defaulted_by_value(function):  # (else nothing known: as not passed)
            named[name] = PASSED_UNTOLD
    if context.complete:  # what a call leaves out is the parameter's default (D-21)
        named.update((name, value) for name, value in _written_defaults(function) if name not in passed)
    receiver = context.receiver if context.receiver != UNKNOWN else None
    work = context.work_stream
    if work.isdigit():  # (a call site hands it by position)
        work = params[int(work)] if int(work) < len(params) else ""
    return CallContext(tuple(sorted(named.items())), receiver, context.hot, chosen=context.chosen,
                       work_stream=work, entered=context.entered, cold=context.cold)


def _defaulted_by_value(function: FunctionRef) -> frozenset[str]:
    """The parameters whose default is a value that may tell something (a device string, `torch.device(...)`)."""
    if isinstance(function.node, cst.Module):
        return frozenset()
    p = function.node.params
    return frozenset(x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)
                     if isinstance(x.default, (cst.SimpleString, cst.Call)))


def _without_left_out(context: CallContext) -> CallContext:
    """The context less the defaults its call left out (`LEFT_OUT`)."""
    if not any(value.target == LEFT_OUT for _, value in context.args):
        return context
    return replace(context, args=tuple((n, v) for n, v in context.args if v.target != LEFT_OUT))


def _written_defaults(function: FunctionRef) -> list[tuple[str, AbsValue]]:
    """The parameters whose default is written `True`, `False` or `None`, with that value (row 6.12: a test
    `if t0 is None:` of a parameter a call leaves out is decided there)."""
    if isinstance(function.node, cst.Module):
        return []
    p = function.node.params
    written = [x for x in (*p.posonly_params, *p.params, *p.kwonly_params)
               if isinstance(x.default, cst.Name) and x.default.value in _WRITTEN]
    # (a None default tells only a function that tests it: the others keep one context for every caller)
    tested = function.none_tested if any(x.default.value == "None" for x in written) else frozenset()
    return [(x.name.value, _WRITTEN[x.default.value]) for x in written
            if x.default.value != "None" or x.name.value in tested]


_WRITTEN = {"True": TRUE, "False": FALSE, "None": replace(NONE, target=LEFT_OUT)}


# The receiver state of a method walked before anything the class stores is known (the first round of composition).
_BARE_STATE = (("", UNKNOWN),)


def _star_name(function: FunctionRef) -> str:
    """The name of the function's `*args` parameter ("" when none)."""
    if isinstance(function.node, cst.Module) or not isinstance(function.node.params.star_arg, cst.Param):
        return ""
    return function.node.params.star_arg.name.value


def _params(function: FunctionRef) -> list[str]:
    """The parameters a call binds by position (keyword-only ones only by name)."""
    if isinstance(function.node, cst.Module):
        return []
    p = function.node.params
    return [x.name.value for x in (*p.posonly_params, *p.params)]


def digest_of_use(path: str, local: str, data: Optional[bytes] = None) -> str:
    """The digest of what `local` of the module at `path` gives any importer (digests.py): its
    summary at the root context in a program of its own module, where every function of the
    module was solved at the root context in the module's order (one solve per module and text,
    per run, for every use of it; the same digests whichever names are used, in whatever order).
    `data`: the module's text when a result was kept (the cache's copy), else the file's now. A name
    the module does not define itself (inherited, re-exported) or past the walk budget: solved alone."""
    name, package = main_names(path)
    if data is None:
        source = read_source(FilePath(path), name)
        if source is None:
            return "absent"
        tree, text = source.tree, source.content
    else:
        tree, text = cst.parse_module(data), reads.content_hash(data)
    made = resolve.per_run(("digests_of_module", path, text, declared.assumed_device()), dict)
    if "roots" not in made:
        solver = Solver(Program(unit_of(name, tree, package), ProjectModules(path)), reporting=False)
        made["roots"] = {q: solver.summary_at_root(q) for q in list(solver.program.main.functions)}
    summary = made["roots"].get(f"{name}.{local}")
    return sealed(summary).digest if summary is not None else _digest_alone(name, package, path, tree, local)


def _digest_alone(name: str, package: str, path: str, tree: cst.Module, local: str) -> str:
    solver = Solver(Program(unit_of(name, tree, package), ProjectModules(path)), reporting=False)
    summary = solver.summary_at_root(f"{name}.{local}")
    return sealed(summary).digest if summary is not None else "unknown"


def produced_by(producer: str, stream: Optional[StreamRef]) -> Optional[StreamRef]:
    """A producer's stream in a reader's terms: its current stream when it ran (`PRODUCED`), or
    one it made (made anew by each of its calls: another stream than any the reader knows); None
    for one the reader cannot name (a parameter's, its object's)."""
    if stream is None:
        return None
    if stream.kind is StreamRefKind.AMBIENT:
        return StreamRef.produced(producer, stream.framework)
    return stream if stream.kind is StreamRefKind.CREATED else None
