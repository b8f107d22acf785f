"""Is an operation on a hot path (a loop that queues GPU work every pass, or a hot entry reaching its function every
call): read off the summaries' effects and contexts."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Optional

import libcst as cst

from streamlint.model.domain.order import HOST
from streamlint.model.domain.values import UNKNOWN
from streamlint.model.file_model import FileModel
from streamlint.model.findings import shown_at
from streamlint.model.api.op_kinds import OpKind
from streamlint.model.readings.operations import DEVICE_WORK, OperationAt, measuring_calls, operations_in
from streamlint.model.summary.effects import Effect, EffectKind
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.model.syntax.children import walk
from streamlint.model.syntax.purpose import imported_modules, timed, trains
from streamlint.model.api import python_std
from streamlint.model.api.device_selectors import DEVICE_SELECTORS
from streamlint.model.interproc.program import qualified
from streamlint.model.syntax.sync_purpose import (
    draws, module_constants, parameter_defaults, per_device, unrolled, waits_on_files, waits_on_user,
)
from streamlint.model.syntax.tests import fills_on_miss, rare_test


def own_operations(model: FileModel) -> list[OperationAt]:
    """Every function's own operations, once each, in the order of the walks, with its hot entry."""
    found: dict[tuple, OperationAt] = {}
    entries = _entries(model)
    # (the reported walks: one made under one caller's facts while callers are searched is no context)
    for qualname, at in operations_in(model, sorted(model.solved.reported(), key=_informed_first), False):
        key = (at.site, at.operation.api, at.operation.op)
        if at.context.cold:  # (a walk under a set-up caller's facts: the function runs there at set-up, not per step)
            at = replace(at, hot=False)
        if key not in found or (found[key].context.cold and not at.context.cold):
            found[key] = replace(at, entry=entries.get(qualname, "") if not at.context.cold else "")
        elif at.first_pass and not found[key].first_pass:
            # the upload of a loop's first pass (later rounds see its source built before the loop)
            found[key] = replace(found[key], first_pass=True)
    return list(found.values())


def callers_operations(model: FileModel) -> list[OperationAt]:
    """The operations of the file's functions that only the walks made under one project caller's facts show (what a
    call site in another module hands a helper: `update(**losses)` of CUDA tensors), once each. They are placed at
    those callers only (`calling_loops`), never as the function's own: no other caller is known to hand the same."""
    seen = {(at.site, at.operation.api, at.operation.op) for at in own_operations(model)}
    found: dict[tuple, OperationAt] = {}
    walks = [(key, walked) for key, walked in model.solved.walks.items() if key in model.solved.unreported]
    for _, at in operations_in(model, walks, False):
        key = (at.site, at.operation.api, at.operation.op)
        if key not in seen and key not in found:
            found[key] = at
    return list(found.values())


# The receiver state of a method's bare walks (the solver's first round, before the class's stores are known).
_BARE = (("", UNKNOWN),)


def _informed_first(item) -> bool:
    """A method's walks from its class's stores first: what `self.<attr>` holds decides its stream."""
    (_, context), _ = item
    return context.receiver_state in ((), _BARE)


def _entries(model: FileModel) -> dict[str, str]:
    """The hot entry that reaches each function on every call; none for an entry that reads or writes a file or draws
    on every call (a dataset's `__getitem__` that loads images: bound by the host, row 7.80)."""
    entries: dict[str, str] = {}
    for (qualname, context), _ in model.solved.walks.items():
        if context.hot and (qualname not in entries or context.hot < entries[qualname]):
            entries[qualname] = context.hot
    program = model.solver.program
    return {qualname: entry for qualname, entry in entries.items()
            if not _host_bound(program, model.module, f"{model.module}.{entry}")}


class Work(Enum):
    """What a loop's (or a comprehension's) passes do, read off its function's effects."""

    ANY = "GPU work or a wait for it"  # kernels, copies, event records, stream waits, syncs
    QUEUED = "work queued on a stream"  # kernels, fills, uploads, device copies (not reads back or waits)
    ORDERING = "an ordering queued on a stream"  # a stream's wait, an event record
    UPLOAD = "a host-to-device copy"


# The operations (OpKind values) of each work; the other effects' works; an access on a known stream is
# work, queued unless it is the host memory of a copy or the device side of a read back.
_OPS = {
    Work.ANY: DEVICE_WORK | frozenset(k.value for k in (
        OpKind.STREAM_SYNC, OpKind.EVENT_SYNC, OpKind.DEVICE_SYNC, OpKind.IMPLICIT_SYNC, OpKind.EVENT_RECORD,
        OpKind.WAIT_STREAM, OpKind.STREAM_WAIT_EVENT)),
    Work.QUEUED: frozenset(k.value for k in (OpKind.KERNEL, OpKind.MEMSET, OpKind.COPY_H2D, OpKind.COPY_D2D)),
    Work.UPLOAD: frozenset({OpKind.COPY_H2D.value}),
}
_EFFECTS = {
    **dict.fromkeys((EffectKind.WAIT_STREAM, EffectKind.WAIT_EVENT, EffectKind.RECORD_EVENT),
                    frozenset({Work.ANY, Work.ORDERING})),
    **dict.fromkeys((EffectKind.SYNC, EffectKind.LAUNCH_GRAPH),
                    frozenset({Work.ANY})),
}
_READ_BACK_OPS = frozenset(k.value for k in (OpKind.COPY_D2H, OpKind.IMPLICIT_SYNC, OpKind.COPY))


def work_in(model: FileModel, function: str, within: cst.CSTNode, ancestry: Ancestry, *wanted: Work) -> bool:
    """Does `within` (a loop, a comprehension of `function`) do one of `wanted`, its callees' work included?"""
    return id(within) in _working_scopes(model, function, wanted, ancestry)  # (itself, or its call)


def work_between(model: FileModel, function: str, within: cst.CSTNode, ancestry: Ancestry, position, earlier: cst.CSTNode,
                 later: cst.CSTNode, *wanted: Work) -> bool:
    """Does `within` do one of `wanted` between `earlier` and `later` in its text (`position(node)`: where a node
    starts, or None), its callees' work included? (Not past its end: the next pass's work before `earlier`.)"""
    start, end = position(earlier), position(later)
    if start is None or end is None:
        return True  # (not told where: as if there were)
    for node in _working_nodes(model, function, wanted):
        at = position(node) if ancestry.inside(node, within) else None
        if at is not None and start < at < end:
            return True
    return False


def drained_before(model: FileModel, function: str, loop: cst.CSTNode, ancestry: Ancestry, position,
                   node: cst.CSTNode) -> bool:
    """Has the host waited for the whole device earlier in the same pass (a device sync of its own or a callee's, on
    every pass, after the work that call queued), with no work queued since? Then a read at `node` finds the stream
    drained: it costs the copy of its own operand, not a stall (the earlier wait is the stall, reported or meant)."""
    here = position(node)
    for wait in _draining_nodes(model, function):
        at = position(wait)
        if at is None or here is None or at >= here or not ancestry.inside(wait, loop) \
                or not ancestry.every_pass(wait, loop):
            continue
        if not work_between(model, function, loop, ancestry, position, wait, node, Work.QUEUED):
            return True
    return False


def _draining_nodes(model: FileModel, function: str):
    """Where a device-wide sync of the host shows (a call of the function's own, or of a callee) that no work the
    same call queues follows: after it, the device has nothing left of that call's."""
    last: dict[str, bool] = {}  # shown site -> whether its last work so far is an unconditional device sync
    for effect in _effects_of(model, function):
        op = effect.operation.op if effect.kind is EffectKind.OPERATION and effect.operation is not None else None
        site = shown_at(effect)
        if op == OpKind.DEVICE_SYNC.value and not effect.operation.conditional:
            last[site] = True
        elif Work.QUEUED in _works(effect, set()):
            last[site] = False
    for site, drained in last.items():
        node = model.node_of(site) if drained else None
        if node is not None:
            yield node


def _working_nodes(model: FileModel, function: str, wanted: tuple) -> tuple:
    """Where the function's effects that do one of `wanted` show (an operation, or the call it came through), each
    node once (read once per function and wish: every loop and read of the function asks)."""
    key = (function, wanted)
    cache = _per_model(model)
    if key not in cache:
        effects = _effects_of(model, function)
        read_backs = {e.site for e in effects if e.kind is EffectKind.OPERATION and e.operation is not None
                      and e.operation.op in _READ_BACK_OPS}
        sites = dict.fromkeys(shown_at(e) for e in effects if _works(e, read_backs).intersection(wanted))
        cache[key] = tuple(node for node in map(model.node_of, sites) if node is not None)
    return cache[key]


def _working_scopes(model: FileModel, function: str, wanted: tuple, ancestry: Ancestry) -> frozenset:
    """The ids of the nodes that hold one of the function's working nodes (those nodes and their ancestors)."""
    key = ("scopes", function, wanted)
    cache = _per_model(model)
    if key not in cache:
        nodes = _working_nodes(model, function, wanted)
        cache[key] = frozenset(id(a) for node in nodes for a in (node, *ancestry.ancestors(node)))
    return cache[key]


# What the readings derive from a file's model, kept while that model and a few others are read (by id, with the
# model, and the count of its walks: a walk solved later makes it stale).
_DERIVED: dict[int, tuple] = {}


def _per_model(model: FileModel) -> dict:
    known = _DERIVED.get(id(model))
    walks = len(model.solved.walks)
    if known is None or known[0] is not model or known[1] != walks:
        if len(_DERIVED) >= 8:  # (the checked file's model and the models of the callers' modules it reads)
            _DERIVED.clear()
        known = _DERIVED[id(model)] = (model, walks, {})
    return known[2]


def _works(effect: Effect, read_backs: set) -> frozenset:
    if effect.kind is EffectKind.OPERATION:
        op = effect.operation.op if effect.operation is not None else None
        return frozenset(work for work, ops in _OPS.items() if op in ops)
    if effect.kind is not EffectKind.ACCESS:
        return _EFFECTS.get(effect.kind, frozenset())
    if effect.stream is None or effect.stream == HOST or not effect.stream.known:
        return frozenset()
    queued = effect.site not in read_backs and not effect.host_memory
    return frozenset({Work.ANY, Work.QUEUED}) if queued else frozenset({Work.ANY})


def repeating_loops(model: FileModel, function: str, node: cst.CSTNode, ancestry: Ancestry) -> list:
    """The loops around `node` in its function whose passes repeat it on a hot path, outermost first (the one
    placement policy of loops): none when one waits for a person every pass (`input()`) or draws a figure every pass
    (a plotting library's call: bound by the drawing), nor in a function that
    runs at checkpoint, restore or print time (a cold entry, or reached from cold entries only); never a loop of a few
    passes written out (a literal sequence, `range(3)`), nor one over the devices (each pass makes current the device its
    item names: as many passes as devices), nor one whose pass leaves it after `node` (a `return` or a `break`: it
    runs once per entry); never an outer loop, whose every pass runs a nested loop
    (its own or a callee's) that already waits for the GPU on every pass, or a nested loop of training steps, its own
    or a callee's (an epoch around its steps: one wait more per pass of it is spread over the nested loop's)."""
    loops = ancestry.loops_around(node)
    # (a function its callers call now and then, every N steps, still repeats a loop of its own that trains on every
    # pass, a backward pass and an update: an optimisation of a few hundred iterations per keyframe; a report's loop
    # over its items stays off the hot path)
    now_and_then = model.solver.only_now_and_then(f"{model.module}.{function}")
    if bound_by_the_host(model, loops, ancestry) or (off_the_hot_path(model, function) and not now_and_then):
        return []
    if now_and_then:
        loops = [loop for loop in loops if trains(loop, imported_modules(ancestry.module))
                 or _calls_of_training(model, loop, ancestry, looped=False)]
    unit = model.solver.program.unit(model.module)
    imports = unit.imports if unit is not None else {}
    constants = module_constants(ancestry.module)
    loops = [loop for loop in loops if not unrolled(loop, constants) and not ancestry.leaves_after(node, loop)
             and not per_device(loop, lambda expr: qualified(expr, imports), DEVICE_SELECTORS)]
    if not loops:
        return loops
    waits = _steady_waits(model, function, ancestry)
    return [loop for loop in loops if not any(_in_nested_loop(at, inner, loop, node, ancestry) for at, inner in waits)
            and not _around_steps(model, loop, node, ancestry, imports) and not _around_callee_steps(model, loop, node, ancestry)]


def _around_steps(model: FileModel, loop: cst.CSTNode, node: cst.CSTNode, ancestry: Ancestry, imports: dict) -> bool:
    """Does every pass of `loop` run a nested loop of training steps (a backward pass and an update each pass) that
    `node` is not in? Then `loop` is an epoch, and `node` runs once per epoch."""
    facts = _loop_facts(loop, ancestry, imports, model.solver.program, model.module)
    return any(not ancestry.inside(node, steps) for steps in facts[0])


def _around_callee_steps(model: FileModel, loop: cst.CSTNode, node: cst.CSTNode, ancestry: Ancestry) -> bool:
    """Does every pass of `loop` call, in a statement `node` is not in, a function of the project whose own loop trains
    (`for epoch in ...: train(...); evaluate(...)`)? Then `loop` is an epoch around the callee's steps, as around its
    own nested loop of steps (`_around_steps`)."""
    return any(not ancestry.inside(node, call) for call in _calls_of_training(model, loop, ancestry))


# The calls on every pass of a loop whose callee's own loop trains, by loop (read once per loop: every operation in it
# asks).
_TRAINING_CALLS: dict[tuple[int, bool], tuple[cst.CSTNode, tuple]] = {}


def _calls_of_training(model: FileModel, loop: cst.CSTNode, ancestry: Ancestry, looped: bool = True) -> tuple:
    """The calls on every pass of `loop` whose callee trains: in a loop of its own (`looped`), or anywhere in its body
    (a training step's helper)."""
    known = _TRAINING_CALLS.get((id(loop), looped))
    if known is not None and known[0] is loop:
        return known[1]
    program = model.solver.program
    unit = program.unit(model.module)
    found = []
    for call in (n for n in walk(loop) if type(n) is cst.Call and isinstance(n.func, (cst.Name, cst.Attribute))):
        if unit is None or not ancestry.every_pass(call, loop):
            continue
        local = isinstance(call.func, cst.Name) and call.func.value not in unit.imports
        name = f"{model.module}.{call.func.value}" if local else qualified(call.func, unit.imports)
        function = program.function(name) if name else None
        if function is not None and _trains_in_a_loop(program, function, looped):
            found.append(call)
    if len(_TRAINING_CALLS) > 10_000:
        _TRAINING_CALLS.clear()
    _TRAINING_CALLS[(id(loop), looped)] = (loop, tuple(found))
    return tuple(found)


# Whether a function's own loops train, by function (read once per function: every loop around a call of it asks).
_TRAINS: dict[tuple[int, bool], tuple[cst.CSTNode, bool]] = {}


def _trains_in_a_loop(program, function, looped: bool = True) -> bool:
    known = _TRAINS.get((id(function.node), looped))
    if known is not None and known[0] is function.node:
        return known[1]
    unit = program.unit(function.module)
    modules = imported_modules(unit.tree) if unit is not None else frozenset()
    if looped:
        found = any(type(n) in (cst.For, cst.While) and not unrolled(n) and trains(n, modules) for n in walk(function.node))
    else:
        found = trains(function.node, modules)
    if len(_TRAINS) > 10_000:
        _TRAINS.clear()
    _TRAINS[(id(function.node), looped)] = (function.node, found)
    return found


# What each loop's text says of its passes (read once per loop: every operation in it asks), by id: its nested loops
# of training steps, and whether it waits for a person or draws a figure.
_LOOP_FACTS: dict[int, tuple[cst.CSTNode, tuple, bool]] = {}


def _loop_facts(loop: cst.CSTNode, ancestry: Ancestry, imports: dict, program, module: str) -> tuple[tuple, bool]:
    known = _LOOP_FACTS.get(id(loop))
    if known is not None and known[0] is loop:
        return known[1], known[2]
    modules = imported_modules(ancestry.module)
    steps = tuple(n for n in walk(loop) if type(n) in (cst.For, cst.While) and n is not loop and not unrolled(n)
                  and ancestry.every_pass(n, loop) and trains(n, modules))
    qualify = lambda expr: qualified(expr, imports)  # noqa: E731
    function = next((a for a in ancestry.ancestors(loop) if type(a) is cst.FunctionDef), None)
    host = waits_on_user(loop) or draws(loop, qualify, python_std.DRAWING_MODULES) or waits_on_files(
        getattr(loop, "body", loop), qualify, python_std.FILE_IO_CALLS, python_std.FILE_IO_MODULES,
        lambda name: _host_bound(program, module, name), parameter_defaults(function))
    if len(_LOOP_FACTS) > 10_000:
        _LOOP_FACTS.clear()
    _LOOP_FACTS[id(loop)] = (loop, steps, host)
    return steps, host


def _host_bound(program, module: str, name: str) -> bool:
    """A function of the project (`name` as its caller qualifies it) that reads or writes a file, or draws a figure,
    every time it runs: a loop that calls it on every pass is bound by the host (row 7.80)."""
    function = program.function(name) or program.function(f"{module}.{name}")
    if function is None or not isinstance(function.node, cst.FunctionDef):
        return False
    known = _HOST_BOUND.get(function.qualname)
    if known is not None and known[0] is function.node:
        return known[1]
    unit = program.unit(function.module)
    imports = unit.imports if unit is not None else {}
    qualify = lambda expr: qualified(expr, imports)  # noqa: E731
    _HOST_BOUND[function.qualname] = (function.node, False)  # (a recursive helper: not bound through itself)
    # (every call, under the function's defaults: a figure drawn only `if visualize:` with `visualize=False` is not)
    bound = waits_on_files(function.node.body, qualify, python_std.FILE_IO_CALLS,
                           python_std.FILE_IO_MODULES + python_std.DRAWING_MODULES, lambda _: False,
                           parameter_defaults(function.node))
    if len(_HOST_BOUND) > 10_000:
        _HOST_BOUND.clear()
    _HOST_BOUND[function.qualname] = (function.node, bound)
    return bound


_HOST_BOUND: dict[str, tuple] = {}


def off_the_hot_path(model: FileModel, function: str) -> bool:
    """Does the function run at checkpoint, restore or print time, or only where its callers run now and then
    (a cold entry, or reached from cold entries, or only from call sites under a test that runs its body now and
    then over time: every N steps, the first passes, an `except` handler)?"""
    return bool(model.solver.cold(f"{model.module}.{function}"))


def bound_by_the_host(model: FileModel, loops: list, ancestry: Ancestry) -> bool:
    """Does one of the loops wait for the host on every pass: for a person (`input()`), or for a figure it draws (a
    plotting library's call, milliseconds each)? Then a read of GPU data in it costs nothing anyone waits for."""
    unit = model.solver.program.unit(model.module)
    imports = unit.imports if unit is not None else {}
    return any(_loop_facts(loop, ancestry, imports, model.solver.program, model.module)[1] for loop in loops)


@dataclass(frozen=True)
class CallingLoop:
    """A loop of another function of the file, or of a module of the project that calls it, that calls the function
    an operation is in on every pass."""

    function: str  # the caller, as written in its file ("train", "C.run")
    call: cst.CSTNode  # the call in the loop that reaches the operation
    loop: cst.CSTNode
    module: str = ""  # the caller's module when another than the checked one
    top_level: bool = False  # the caller is its module's top level (a script's loop), not a function


def calling_loops(model: FileModel, own: OperationAt, ancestry: Ancestry, *wanted: Work) -> list[CallingLoop]:
    """The placement policy of a helper's operation: hot when a call of its function in another function runs it
    unconditionally (as that caller's walk finds it: the callee's own tests decided by what the call passes) on every
    pass of a repeating loop there that does one of `wanted` (its callees' work included), each once. Never a memoized helper's (it runs once per argument tuple), nor one a measurement harness
    calls (a loop that reads a host timer, itself or through a call, and trains nothing: the helper's work is what it
    measures)."""
    # (a test the callers decide, `if t0 is None:` of a parameter a call leaves out, is read from their walks' effects)
    if model.solver.memoized(f"{model.module}.{own.function}"):
        return []
    found = []
    views: dict[str, tuple[FileModel, Ancestry]] = {model.module: (model, ancestry)}
    for (qualname, _), walked in model.solved.walks.items():
        for effect in walked.effects:
            operation = effect.operation
            if effect.kind is not EffectKind.OPERATION or not effect.chain or effect.site != own.own_site \
                    or operation is None or not operation.in_loop or operation.conditional \
                    or (operation.api, operation.op) != (own.operation.api, own.operation.op):
                continue
            view = _view_of(model, qualname, views)  # (read only for a walk that makes the operation in a loop)
            caller = qualname[len(view[0].module) + 1:] if view is not None else ""
            if view is None or (view[0] is model and caller == own.function):
                break
            looping = _calling_loop(view, caller, qualname, effect.chain[0], wanted, model.module)
            if looping is not None:
                found.append(looping)
    return list(dict.fromkeys(found))


def _view_of(model: FileModel, qualname: str, views: dict) -> "tuple[FileModel, Ancestry] | None":
    """The file model and ancestry a caller's loops are read with: the checked file's, or (for a caller in another
    module of the project, walked as one of its callers) that module's, over the same solution."""
    function = model.solver.program.function(qualname)
    if function is None:
        return None
    if function.module not in views:
        unit = model.solver.program.unit(function.module)
        views[function.module] = (replace(model, module=function.module, hazards=[]), Ancestry(unit.tree)) \
            if unit is not None else None
    return views[function.module]


def _calling_loop(view: tuple, caller: str, qualname: str, site: str, wanted: tuple, checked: str
                  ) -> "CallingLoop | None":
    """The repeating loop of `caller` whose every pass makes the call at `site`, doing one of `wanted`; None if none."""
    model, ancestry = view
    call = model.node_of(site)
    loops = repeating_loops(model, caller, call, ancestry) if call is not None else []
    if loops and not guarded_in(call, loops[-1], ancestry) and not measures(model, qualname, loops[-1], ancestry) \
            and work_in(model, caller, loops[-1], ancestry, *wanted):
        return CallingLoop(caller, call, loops[-1], "" if model.module == checked else model.module,
                           isinstance(model.solver.program.function(qualname).node, cst.Module))
    return None


def measures(model: FileModel, qualname: str, loop: cst.CSTNode, ancestry: Ancestry) -> bool:
    """A measurement harness: the loop of `qualname` reads a host timer (itself or through a call) and trains nothing
    (neither itself nor through a training step's helper it calls)."""
    if trains(loop, imported_modules(ancestry.module)) or _calls_of_training(model, loop, ancestry, looped=False):
        return False
    probes = (model.node_of(site) for site in measuring_calls(model, qualname))
    return timed(loop) or any(node is not None and ancestry.inside(node, loop) for node in probes)


# The host waits for the GPU: a sync, an implicit one, a blocking read back (EffectKind.SYNC effects carry no loop).
_WAIT_OPS = frozenset(k.value for k in (OpKind.STREAM_SYNC, OpKind.EVENT_SYNC, OpKind.DEVICE_SYNC, OpKind.IMPLICIT_SYNC))


def _steady_waits(model: FileModel, function: str, ancestry: Ancestry) -> list[tuple[cst.CSTNode, bool]]:
    """(where it shows, in a callee's loop) of every wait of the host that runs on every pass of its loop."""
    found = []
    for effect in _effects_of(model, function):
        operation = effect.operation
        if effect.kind is not EffectKind.OPERATION or operation is None or operation.conditional or not operation.in_loop:
            continue
        if operation.op in _WAIT_OPS or (operation.op == OpKind.COPY_D2H.value and operation.host_blocking):
            at = model.node_of(shown_at(effect))
            inner = effect.inner_loop and bool(effect.chain)
            queues = _queues_in_its_loop(model, effect.site, ancestry) if inner else _queues_around(model, function, at, ancestry)
            if at is not None and queues:
                found.append((at, inner))
    return found


# The views of the modules a checked file's callees live in, kept for that file's model (built once: a tree's
# ancestry costs a walk of it).
_VIEWS: dict[int, tuple] = {}


def _views_for(model: FileModel, ancestry: Ancestry) -> dict:
    known = _VIEWS.get(id(model))
    if known is None or known[0] is not model:
        _VIEWS.clear()
        known = _VIEWS[id(model)] = (model, {model.module: (model, ancestry)})
    return known[1]


def _queues_in_its_loop(model: FileModel, site: str, ancestry: Ancestry) -> bool:
    """Does the callee's loop around the wait at `site` queue GPU work on its passes? A loop that only reads values
    back (`for k, v in meters.items(): v.item()`) waits at its first pass only: one wait per call, not per pass."""
    function = site.rpartition("#")[0]
    view = _view_of(model, function, _views_for(model, ancestry))
    if view is None:
        return True
    callee, ancestry = view
    node = callee.node_of(site)
    loops = ancestry.loops_around(node) if node is not None else []
    name = function[len(callee.module) + 1:]
    return not loops or work_in(callee, name, loops[-1], ancestry, Work.QUEUED)


def _queues_around(model: FileModel, function: str, at: Optional[cst.CSTNode], ancestry: Ancestry) -> bool:
    """Does the innermost loop of `function` around the wait at `at` queue GPU work on its passes? A nested loop that
    only reads values back (`for tok in ids: tok.item()`) waits at its first pass only: once per pass of the loop
    around it, which it does not make an epoch (the same policy as a callee's loop, `_queues_in_its_loop`)."""
    loops = ancestry.loops_around(at) if at is not None else []
    return not loops or work_in(model, function, loops[-1], ancestry, Work.QUEUED)


def _effects_of(model: FileModel, function: str) -> list[Effect]:
    """The effects of every walk of `function` (as written in the file: "f", "C.m"), under any context."""
    cache = _per_model(model)
    by_function = cache.get("effects")
    if by_function is None:
        by_function = cache["effects"] = {}
        for (name, _), walked in model.solved.walks.items():
            by_function.setdefault(name, []).extend(walked.effects)
    return by_function.get(f"{model.module}.{function}", [])


def _in_nested_loop(at: cst.CSTNode, inner: bool, loop: cst.CSTNode, node: cst.CSTNode, ancestry: Ancestry) -> bool:
    """Is the wait shown at `at` in a loop nested in `loop` that `node` is not in (a callee's, when `inner`), on the
    passes that run `node` (not on the other side of a test)?"""
    if not ancestry.inside(at, loop) or ancestry.inside(node, at) or ancestry.exclusive(node, at):
        return False
    if inner:
        return True
    nested = ancestry.loops_around(at)
    return any(n is not loop and ancestry.inside(n, loop) and not ancestry.inside(node, n) and not unrolled(n)
               for n in nested)


def guarded_in(node: cst.CSTNode, loop: cst.CSTNode, ancestry: Ancestry) -> bool:
    """Is `node` under a test inside `loop` that runs its side only now and then (a rare test, a cache's miss:
    `if key not in streams: streams[key] = Stream()`)? A test before the loop makes the whole loop run only
    sometimes, not each pass."""
    child = node
    for current in ancestry.ancestors(node):
        if current is loop:
            return False
        if isinstance(current, cst.If) and child is not current.test:
            body, other = fills_on_miss(current)
            in_body = child is current.body
            if rare_test(current.test) or (body and in_body) or (other and not in_body):
                return True
        child = current
    return False


# The host reads device data (Operation.op, the fact tables' kinds): what a later read of a pass may be.
_HOST_READS = frozenset({OpKind.IMPLICIT_SYNC.value, OpKind.COPY_D2H.value})


def waited_later_in_pass(model: FileModel, ancestry: Ancestry, purposes, operations: list, own: OperationAt,
                         node: cst.CSTNode, loop: cst.CSTNode, position, before_too: bool = False) -> bool:
    """The same pass of `loop` goes on, on every pass, to a host read it needs (a stop test on the new token, an
    agreement between ranks on when to stop), with no GPU work queued between the two: that read waits for everything
    queued before it, so an earlier wait of the pass adds none of its own (with work between, the earlier read drains
    the stream once more: a wait of its own), and moving it out of the loop would not remove the per-pass wait (a placement
    policy). `before_too`: a needed read earlier in the pass counts too (a result sized by the data in a pass whose
    shapes the host reads anyway: `n = int(mask.sum())` then `x[mask]`). `operations`: the file's operations, once
    each (`own_operations`); `purposes`: the syntax layer's `SyncPurposes`; `position(node)`: where a node starts,
    (line, column), or None."""
    here = position(node)
    if here is None:
        return False
    for other in operations:
        if other.function != own.function or other.site == own.site \
                or other.operation.op not in _HOST_READS or other.operation.conditional or other.chain:
            continue
        later_node = model.node_of(other.site)
        there = position(later_node) if later_node is not None else None
        if there is None or there == here or (there < here and not before_too) or not ancestry.every_pass(later_node, loop):
            continue
        later = purposes.purpose(later_node, True, other.operation.op == OpKind.COPY_D2H.value, False, False)
        if later is not None and later.needed and not (there > here and _drains_of_its_own(model, own, loop, ancestry,
                                                                                           position, node, later_node)):
            return True
    return False


def _drains_of_its_own(model: FileModel, own: OperationAt, loop: cst.CSTNode, ancestry: Ancestry, position,
                       node: cst.CSTNode, later: cst.CSTNode) -> bool:
    """Does the earlier read back at `node` drain the stream once more in the pass: work of the pass queued before it
    (it waits for that), and work queued between it and the later wait (the GPU idles until the host queues it)? (An
    upload's wait is left to the later one: what it waits for is mostly the copies and waits around it.)"""
    if own.operation.op not in _READ_BACK_OPS:
        return False
    return work_between(model, own.function, loop, ancestry, position, loop, node, Work.QUEUED) \
        and work_between(model, own.function, loop, ancestry, position, node, later, Work.QUEUED)


def read_just_before(model: FileModel, ancestry: Ancestry, operations: list, own: OperationAt, node: cst.CSTNode,
                     position, uploads: bool = False) -> Optional[cst.CSTNode]:
    """Where an earlier host read of the same function (needed or not) runs whenever the read at `node` does, in the
    same passes of the same loops, with no GPU work queued between them (`if mean > 50: log(f"{mean}")`); else None.
    It waited for the stream, so the read at `node` finds it drained and adds the copy of its operand, not a wait (a
    placement policy: one wait, one problem; `waited_later_in_pass` is its mirror for a later read the host needs).
    `uploads`: a blocking upload counts as such a wait too (`yield image.cuda(), intrinsics.cuda()`: the first one
    drained the stream, the second finds nothing to wait for)."""
    waits = _HOST_READS | {OpKind.COPY_H2D.value} if uploads else _HOST_READS
    here = position(node)
    loops = [id(loop) for loop in ancestry.loops_around(node)]
    within = ancestry.loops_around(node)[-1] if loops else _scope_of(ancestry, node)
    if here is None or within is None:
        return None
    for other in operations:
        blocking = other.operation.host_blocking is True or (
            other.operation.op in _HOST_READS and other.operation.host_blocking is None)
        if other.function != own.function or other.site == own.site or other.operation.op not in waits \
                or other.operation.conditional or other.chain or not blocking:
            continue
        earlier = model.node_of(other.site)
        there = position(earlier) if earlier is not None else None
        if there is None or there >= here or [id(loop) for loop in ancestry.loops_around(earlier)] != loops \
                or not ancestry.runs_whenever(earlier, node):
            continue
        if not work_between(model, own.function, within, ancestry, position, earlier, node, Work.QUEUED):
            return earlier
    return None


def _scope_of(ancestry: Ancestry, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    return next((a for a in ancestry.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.Lambda))), None)
