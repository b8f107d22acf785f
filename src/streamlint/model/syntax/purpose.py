"""Why the code does something, from where it sits in the text (syntax queries keyed by node); the semantic
questions (what stream, what memory, is it hot) are the model's."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from streamlint.model.syntax.ancestry import Ancestry
from streamlint.model.syntax import names
from streamlint.model.syntax.children import child_nodes, walk

# Calls that read a host timer or an elapsed time, by their spelled name's last component.
TIMER_CALLS = frozenset({"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time",
                         "default_timer", "elapsed_time", "get_elapsed_time", "event_elapsed_time",
                         "cudaEventElapsedTime", "cuEventElapsedTime"})
TIMER_DOTTED = frozenset({"time.time", "time.time_ns"})
# Event methods that only time: an event used by these alone is a timing mark.
EVENT_TIMING_METHODS = frozenset({"record", "synchronize", "query", "elapsed_time"})
EVENT_TIMING_FLAG = "enable_timing"  # PyTorch's `torch.cuda.Event(enable_timing=True)`: off unless asked for
# Methods a training step calls (a backward pass and an update): a loop calling both trains.
TRAINING_STEP_METHODS = (frozenset({"backward"}), frozenset({"step"}))
# Methods that keep what they are given (containers, queues, files).
KEEPING_METHODS = frozenset({"append", "extend", "insert", "add", "appendleft", "put", "put_nowait", "setdefault",
                             "write", "send", "save", "savez", "tofile"})
_DEFINITIONS = (cst.FunctionDef, cst.ClassDef)
_BINDS_TARGET = (cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor)  # (nodes whose `target` binds)


def last_name(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def dotted(func: cst.BaseExpression) -> str:
    return names.dotted(func) or ""


def calls_in(node: cst.CSTNode) -> Iterator[cst.Call]:
    """The calls in a statement or block, nested definitions apart."""
    return (n for n in walk(node) if type(n) is cst.Call)


def flat_targets(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The targets an assignment, a `for` or a comprehension's `for` binds, tuples and stars unpacked."""
    kind = type(node)  # (exact types: libcst's node classes are ABCs, slow to test with isinstance)
    if kind is cst.Assign:
        return unpacked([t.target for t in node.targets])
    return unpacked([node.target]) if kind in _BINDS_TARGET else []


def unpacked(targets: list) -> list[cst.BaseExpression]:
    """The targets, tuples, lists and stars unpacked."""
    flat = []
    while targets:
        target = targets.pop()
        if isinstance(target, (cst.Tuple, cst.List)):
            targets.extend(e.value for e in target.elements)
        elif isinstance(target, cst.StarredElement):
            targets.append(target.value)
        else:
            flat.append(target)
    return flat


def bound_names(node: cst.CSTNode) -> list[str]:
    """The names an assignment binds (`total += n` binds `total`: its later uses carry the value)."""
    if not isinstance(node, (cst.Assign, cst.AnnAssign, cst.NamedExpr, cst.AugAssign)):
        return []
    return [t.value for t in flat_targets(node) if isinstance(t, cst.Name)]


def is_timer(call: cst.Call) -> bool:
    return last_name(call.func) in TIMER_CALLS or dotted(call.func) in TIMER_DOTTED


def trains(loop: cst.CSTNode, modules: frozenset = frozenset()) -> bool:
    """A training loop: it calls a backward pass and an update as methods of values (not of `modules`)."""
    methods = {call.func.attr.value for call in calls_in(loop) if isinstance(call.func, cst.Attribute)
               and not (isinstance(call.func.value, cst.Name) and call.func.value.value in modules)}
    return all(methods & kind for kind in TRAINING_STEP_METHODS)


def imported_modules(module: cst.Module) -> frozenset:
    """The names a module's `import` statements bind to modules (`import a.b as m`: m; `import a.b`: a)."""
    aliases = [alias for statement in module.body if isinstance(statement, cst.SimpleStatementLine)
               for small in statement.body if isinstance(small, cst.Import) for alias in small.names]
    return frozenset(alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                     else dotted(alias.name).split(".")[0] for alias in aliases)


def timed(loop: cst.CSTNode) -> bool:
    """A loop that reads a host timer or an elapsed time: a measurement harness."""
    return any(is_timer(call) for call in calls_in(loop))


def repeats(loop: cst.CSTNode, ancestry: Ancestry) -> bool:
    """`for _ in range(n_run):`: the body never reads the loop's variable (it repeats the same work; binding the
    same name again, `_ = model(x)`, is no read of it)."""
    if not isinstance(loop, cst.For):
        return False
    targets = {n.value for n in names_in(loop.target)}
    return not targets & {n.value for n in names_in(loop.body) if not is_target(n, ancestry)}


def made_to_time(creation: cst.Call) -> bool:
    """`torch.cuda.Event(enable_timing=True)`: an event asked for timing (PyTorch makes them without) exists to be
    measured, and each measurement needs a pair of its own; making one costs microseconds."""
    return any(a.keyword is not None and a.keyword.value == EVENT_TIMING_FLAG and isinstance(a.value, cst.Name)
               and a.value.value == "True" for a in creation.args)


def event_on_purpose(creation: cst.Call, loop: cst.CSTNode, function: cst.CSTNode, ancestry: Ancestry) -> bool:
    """An event made to be kept, one per item, or used only to time in a loop that reads the elapsed time: a timing
    mark costs microseconds to make; the wait that reads it is the cost, and is judged where it happens."""
    assign = ancestry.parent(creation)  # (the uses of the one name it is assigned to)
    names = bound_names(assign) if isinstance(assign, (cst.Assign, cst.AnnAssign)) and assign.value is creation else []
    if len(names) != 1:
        return False
    uses = [use for use in names_in(function) if use.value == names[0]]
    if any(_keeps(use, ancestry) for use in uses):
        return True
    return timed(loop) and all(_times(use, ancestry) for use in uses)


def _keeps(use: cst.Name, ancestry: Ancestry) -> bool:
    """The use keeps the value in a container: an argument of a keeping method, an item's value."""
    arg = ancestry.parent(use)
    call = ancestry.parent(arg) if isinstance(arg, cst.Arg) else None
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in KEEPING_METHODS:
        return True
    return isinstance(arg, cst.Assign) and arg.value is use and any(isinstance(t.target, cst.Subscript)
                                                                    for t in arg.targets)


def _times(use: cst.Name, ancestry: Ancestry) -> bool:
    """A binding of an event's name, a call of one of its timing methods, or an elapsed time's argument."""
    if is_target(use, ancestry):
        return True
    parent = ancestry.parent(use)
    if isinstance(parent, cst.Attribute) and parent.value is use:
        call = ancestry.parent(parent)
        return isinstance(call, cst.Call) and call.func is parent and parent.attr.value in EVENT_TIMING_METHODS
    if isinstance(parent, cst.Arg):
        call = ancestry.parent(parent)
        return isinstance(call, cst.Call) and last_name(call.func) in TIMER_CALLS
    return False


def is_target(use: cst.Name, ancestry: Ancestry) -> bool:
    child: cst.CSTNode = use
    for parent in ancestry.ancestors(use):
        if isinstance(parent, cst.AssignTarget) or (isinstance(parent, _BINDS_TARGET) and child is parent.target):
            return True
        if not isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            return False
        child = parent
    return False


def names_in(node: cst.CSTNode) -> list[cst.Name]:
    """The names a node reads or binds (`x.step` reads `x`), nested definitions apart."""
    return [n for n in walk(node, _DEFINITIONS, read_parts) if type(n) is cst.Name]


def read_parts(node: cst.CSTNode) -> list:
    """The parts of a node that are read (`x.step` reads `x`; a keyword argument, its value)."""
    return [node.value] if type(node) in (cst.Attribute, cst.Arg) else child_nodes(node)


def param_names(function: cst.FunctionDef) -> set[str]:
    params = function.params
    return {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
