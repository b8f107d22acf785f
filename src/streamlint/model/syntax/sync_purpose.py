"""Why the host waits: what a synchronized value feeds, from the code's shape (a syntax query keyed by node;
cases: docs/model-cases.md). What is synchronized, on which stream, hot or uploading: the caller's (the model's)."""

from __future__ import annotations

import builtins
from enum import Enum
from typing import Callable, Optional

import libcst as cst

from streamlint.model.syntax.ancestry import LOOPS, Ancestry, comprehension_of  # noqa: F401 (the rules' import)
from streamlint.model.syntax.children import child_nodes, walk
from streamlint.model.syntax.purpose import (
    KEEPING_METHODS, bound_names, calls_in, dotted, flat_targets, imported_modules, is_target, is_timer, last_name,
    names_in, trains,
)
from streamlint.model.syntax.tests import rare_test


class Purpose(Enum):
    """What a host synchronization is for; `needed` says whether the wait is needed or meant."""

    CONTROL = "decides the control flow"  # while test, an `if` that leaves or acts, a `for` iterable, range()
    SHAPE = "decides the shape of later arrays"
    ASSERTION = "is checked by an assertion"
    VERIFY = "compares a result with a reference"  # `np.allclose(x.get(), ref)`, `norm(x.get() - ref)` printed
    MEASUREMENT = "bounds a timed or measured region"
    CAPTURE = "prepares a CUDA-graph capture"
    DEBUG = "feeds a verbose log under a switch"  # `if verbosity > 0: print(x)`: off unless asked for
    SELECTION = "only selects between values"  # `if a > b: x = y`: `where` on the device does it
    CHECK = "only guards a sanity check or a log line"  # `if torch.isnan(loss).any(): raise ...`
    OUTPUT = "is a streaming pipeline's output"  # D2H of an array per uploaded chunk, kept
    STEP_TIMING = "times or measures every training step"  # a timer next to it, in a loop that trains

    @property
    def needed(self) -> bool:
        return self not in (Purpose.SELECTION, Purpose.CHECK, Purpose.OUTPUT, Purpose.STEP_TIMING)


# -- what calls are, by their spelled name's last component ------------------------------
_MEMORY_CALLS = frozenset({"max_memory_allocated", "memory_allocated", "memory_reserved", "max_memory_reserved",
                           "memory_stats", "memory_summary", "reset_peak_memory_stats", "reset_max_memory_allocated",
                           "reset_accumulated_memory_stats", "mem_get_info", "memGetInfo", "cudaMemGetInfo",
                           "cuMemGetInfo", "used_bytes", "total_bytes", "free_bytes", "n_free_blocks",
                           "get_memory_info"})
_CAPTURE_CALLS = frozenset({"capture_begin", "begin_capture", "begin_building", "cudaStreamBeginCapture",
                            "cuStreamBeginCapture", "make_graphed_callables", "graph"})
_SHAPE_CALLS = frozenset({"empty", "zeros", "ones", "rand", "randn", "randint", "arange", "linspace",
                          "empty_pinned", "zeros_pinned", "device_array", "pinned_array", "mapped_array",
                          "new_empty", "new_zeros", "new_ones", "empty_strided", "view", "reshape",
                          "narrow", "split", "expand", "resize_", "repeat", "tile", "broadcast_to", "eye",
                          "tensor_split", "chunk", "unflatten", "topk", "kthvalue", "pad"})
_PROFILER_CALLS = frozenset({"cudaProfilerStart", "cudaProfilerStop", "cuProfilerStart", "cuProfilerStop"})
_PROFILER_DOTTED = ("profiler.start", "profiler.stop")  # torch.cuda.profiler.start()
_ASSERT_MODULES = ("testing.", "np.testing", "numpy.testing", "cp.testing", "cupy.testing", "torch.testing")
# Comparisons of a result with a reference; a difference's norm is one when printed or asserted.
# Builtins that ask a value's type, never its data: a use there needs nothing the read returns (`isinstance(v, float)`).
_TYPE_QUERIES = frozenset({"isinstance", "issubclass", "type", "hasattr", "callable", "id"})
_VERIFY_CALLS = frozenset({"allclose", "isclose", "array_equal", "array_equiv", "assert_close"})
_DIFFERENCE_REDUCTIONS = frozenset({"norm", "abs", "fabs", "absolute", "amax", "max"})
# Log calls: what a debug block under a switch (`if verbosity > 0:`) does, and nothing else.
_PRINT_CALLS = frozenset({"print", "pprint", "debug", "info", "warning", "warn", "log", "error", "critical",
                          "exception", "write"})
# Calls that only report or collect: an `if` doing only these (or raising) is a check.
_LOG_CALLS = _PRINT_CALLS - {"pprint"} | {"append", "add", "extend", "add_scalar", "log_metrics"}
_ARRAY_READS = frozenset({"numpy", "tobytes", "tofile", "get", "asnumpy", "cpu", "to", "copy_to_host"})
_ORDERING_CALLS = frozenset({"wait_stream", "wait_event", "record", "wait", "empty_cache", "barrier",
                            "range_push", "range_pop"})
_DEPTH = 3  # how many assignments a value is followed through


def _is_timer(call: cst.Call) -> bool:
    """A host timer, a memory statistic or a profiler range."""
    name = last_name(call.func)
    return (is_timer(call) or name in _MEMORY_CALLS or name in _PROFILER_CALLS
            or dotted(call.func).endswith(_PROFILER_DOTTED))


def _is_assertion(call: cst.Call) -> bool:
    last = last_name(call.func)
    return last.lower().startswith("assert") or any(m in dotted(call.func) + "." for m in _ASSERT_MODULES)


def _is_log(call: cst.Call, names: frozenset = _PRINT_CALLS) -> bool:
    return last_name(call.func) in names or dotted(call.func).startswith(("logging.", "logger.", "log."))


def _is_capture(node: cst.CSTNode) -> bool:
    """A statement that begins a CUDA-graph capture."""
    if isinstance(node, cst.With):
        # (`with torch.cuda.stream(s): g.capture_begin()`: a capture begun first thing in the block)
        return any(isinstance(item.item, cst.Call) and last_name(item.item.func) in ("graph", "capture")
                   for item in node.items) or any(_is_capture(s) for s in node.body.body[:1])
    return any(last_name(c.func) in _CAPTURE_CALLS - {"graph"} for c in calls_in(node))


# -- what a value feeds ------------------------------------------------------------------
def _feeds(body: SyncPurposes, node: cst.CSTNode, depth: int, compared: bool = False) -> Optional[Purpose]:
    """Where `node` sits, and where a name bound to it is used; `compared`: in a difference's norm."""
    child = node
    difference = False
    for parent in body.ancestry.ancestors(node):
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Subtract):
            difference = True
        place = _PLACES.get(type(parent))
        if place is not None and (place[0] is None or getattr(parent, place[0]) is child):
            return place[1] if place[1] is not None else _branch(body, parent, depth)
        if isinstance(parent, cst.Call) and difference and last_name(parent.func) in _DIFFERENCE_REDUCTIONS:
            compared = True
        if isinstance(parent, cst.Call) and child is not parent.func and last_name(parent.func) in _TYPE_QUERIES:
            return None  # (its type, asked, even in an assertion, checks no value)
        if isinstance(parent, cst.Call) and child is not parent.func:
            found = _argument_of(parent, child, compared)
            if found is not None:
                return found
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.NamedExpr, cst.AugAssign)) and depth < _DEPTH:
            return _names_feed(body, parent, depth, compared)
        if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return None
        child = parent
    return None


# Where a value sits: (the parent's field it fills, None for any; its purpose there, None: the `if`'s branches say).
_PLACES = {cst.If: ("test", None), cst.While: ("test", Purpose.CONTROL), cst.For: ("iter", Purpose.CONTROL),
           cst.IfExp: ("test", Purpose.SELECTION), cst.Assert: (None, Purpose.ASSERTION),
           cst.Slice: (None, Purpose.SHAPE)}


def _argument_of(call: cst.Call, child: cst.CSTNode, compared: bool) -> Optional[Purpose]:
    """The value is an argument of a call: an assertion, a comparison, a timer, a size."""
    name = last_name(call.func)
    if _is_assertion(call):
        return Purpose.ASSERTION
    if name in _VERIFY_CALLS or (compared and name in _PRINT_CALLS):
        return Purpose.VERIFY
    if _is_timer(call):
        return Purpose.MEASUREMENT
    if name == "range":
        return Purpose.CONTROL
    if name in _SHAPE_CALLS or (name in ("full", "new_full") and call.args and child is call.args[0]):
        return Purpose.SHAPE  # (a fill value is data, the size is a shape)
    return None


def _names_feed(body: SyncPurposes, assignment: cst.CSTNode, depth: int, compared: bool) -> Optional[Purpose]:
    """Where the names it is assigned to are used: the first needed purpose, else the first one."""
    best = None
    # (a name the read binds in its loop and a use reads only after the loop, `correct += n.item()` then
    # `acc = correct / total`: the host needs it once, after the loop, not on every pass)
    loop = body.loop if body.loop is not None and body.ancestry.inside(assignment, body.loop) else None
    for name in bound_names(assignment):
        for use in body.uses.get(name, ()):
            if is_target(use, body.ancestry) or (loop is not None and not body.ancestry.inside(use, loop)):
                continue
            purpose = _feeds(body, use, depth + 1, compared)
            if purpose is not None and purpose.needed:
                return purpose
            best = best or purpose
    return best


def _branch(uses: SyncPurposes, node: cst.If, depth: int) -> Purpose:
    """An `if` that leaves or queues other work needs the value; one that only assigns could select on the device;
    one that raises, logs or collects is a check, but for a collection the function then acts on (`to_remove.append(k)`
    then `if to_remove: window.remove(to_remove[-1])`: a decision)."""
    checks = False
    for statement in (s for body in _bodies(node) for s in body):
        for current in walk(statement, _NOT_ENTERED) if type(statement) not in _NOT_ENTERED else ():
            if type(current) in (cst.Break, cst.Continue, cst.Return) or (
                    type(current) is cst.Call and not _is_log(current, _LOG_CALLS)):
                return Purpose.CONTROL
            if type(current) is cst.Call and _acted_on(uses, current, depth):
                return Purpose.CONTROL
            if type(current) in _ASSIGNMENTS and current.value is not None and _calls_a_function(current.value):
                return Purpose.CONTROL  # (`x = all_gather(t)`: what it calls may do anything, not a value to select)
            checks = checks or type(current) in (cst.Raise, cst.Call)
    return Purpose.CHECK if checks else Purpose.SELECTION


def _acted_on(uses: SyncPurposes, call: cst.Call, depth: int) -> bool:
    """`found.append(x)`: a collection the function uses elsewhere for a purpose that needs it (a test, a loop)."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    if not isinstance(receiver, cst.Name) or last_name(call.func) not in KEEPING_METHODS or depth >= _DEPTH:
        return False
    for use in uses.uses.get(receiver.value, ()):
        if use is receiver or is_target(use, uses.ancestry):
            continue
        purpose = _feeds(uses, use, depth + 1)
        if purpose is not None and purpose.needed:
            return True
    return False


_ASSIGNMENTS = (cst.Assign, cst.AugAssign, cst.AnnAssign)
_BUILTIN_NAMES = frozenset(dir(builtins))


def _calls_a_function(value: cst.CSTNode) -> bool:
    """Does an assigned value call a function by its bare name (a project's or an imported one, not a builtin)?
    A method or a framework namespace's function (`t.detach()`, `cp.sin(u)`) computes a value `where` can select."""
    return any(type(n) is cst.Call and type(n.func) is cst.Name and n.func.value not in _BUILTIN_NAMES  # type: ignore
               for n in walk(value, ()))


def _bodies(node: cst.If) -> list:
    """The statements of each branch of an `if`/`elif`/`else`."""
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        return [node.body.body, *_bodies(orelse)]
    return [node.body.body] + ([orelse.body.body] if isinstance(orelse, cst.Else) else [])


# Nodes whose insides tell no more of what a branch does (an assigned value's calls compute it).
_NOT_ENTERED = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Raise, cst.Assign, cst.AugAssign, cst.AnnAssign)


# -- what stands next to a synchronization -----------------------------------------------
def _statement(body: SyncPurposes, node: cst.CSTNode) -> tuple[Optional[cst.CSTNode], Optional[cst.CSTNode]]:
    """(the statement holding `node`, the block whose body lists it)."""
    child = node
    for parent in body.ancestry.ancestors(node):
        if isinstance(child, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and type(parent) in _BLOCKS:
            return child, parent
        child = parent
    return None, None


_BLOCKS = (cst.IndentedBlock, cst.Module)


def _neighbours(body: SyncPurposes, node: cst.CSTNode) -> Optional[Purpose]:
    """What stands right after the sync makes it part of that; past a loop only a capture counts (a warm-up loop)."""
    stmt, block = _statement(body, node)
    in_loop = False
    while stmt is not None and block is not None:
        siblings = list(block.body)
        at = next(i for i, s in enumerate(siblings) if s is stmt)  # (a block lists the statements it holds)
        if any(_is_capture(later) for later in siblings[at + 1: at + 4]) or _capture_after_set_up(siblings[at + 1:]):
            return Purpose.CAPTURE  # (past the graph's own set-up: `g = torch.cuda.CUDAGraph()`)
        for later in siblings[at + 1: at + 4]:
            found = None if in_loop else _next_to(body, later)
            if found is not None:
                return found
            if not _passive(later):
                break
        outer = next((a for a in body.ancestry.ancestors(block) if isinstance(a, (cst.For, cst.While, cst.With, cst.If,
                                                                                    cst.Try, cst.FunctionDef))), None)
        if outer is None or isinstance(outer, cst.FunctionDef):
            return None
        in_loop = in_loop or isinstance(outer, LOOPS)
        stmt, block = _statement(body, outer)
    return None


def _capture_after_set_up(later: list) -> bool:
    """A capture follows after any number of the capture's set-up lines: assignments and log lines that call
    nothing but graph constructors and builtins (`graphs = [torch.cuda.CUDAGraph() for _ in range(n)]`, `n = self.config.n`,
    `inputs = [static_x] + [layer.out for layer in layers]`)."""
    for statement in later:
        if _is_capture(statement):
            return True
        if not (isinstance(statement, cst.SimpleStatementLine) and all(
                isinstance(s, (cst.Assign, cst.AnnAssign)) for s in statement.body)
                and all(last_name(c.func) in _GRAPH_CONSTRUCTORS or _builtin(c) for c in calls_in(statement))) \
                and not _passive(statement):
            return False
    return False


_GRAPH_CONSTRUCTORS = frozenset({"CUDAGraph", "graph_pool_handle"})


def _builtin(call: cst.Call) -> bool:
    """`range(n)`, `len(xs)`: a builtin, which queues no GPU work."""
    return isinstance(call.func, cst.Name) and call.func.value in _BUILTIN_NAMES


def _next_to(body: SyncPurposes, later: cst.CSTNode) -> Optional[Purpose]:
    """An assertion, a measurement (not every N steps: that measures other steps), or an assignment checked later."""
    if _asserts(later):
        return Purpose.ASSERTION
    periodic = isinstance(later, cst.If) and rare_test(later.test, periodic=True)
    if not isinstance(later, LOOPS) and not periodic and any(
            _is_timer(c) or id(c) in body.probes for c in calls_in(later)):
        return Purpose.MEASUREMENT
    return Purpose.ASSERTION if _checked_later(body, later) else None


def _asserts(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and (
        any(isinstance(s, cst.Assert) and not _types_only(s.test) for s in stmt.body)
        or any(_is_assertion(c) for c in calls_in(stmt)))


def _types_only(test: cst.BaseExpression) -> bool:
    """A test that asks only types (`isinstance(v, (float, int))`, and `and`/`or`/`not` of such): no value checked."""
    if isinstance(test, cst.BooleanOperation):
        return _types_only(test.left) and _types_only(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _types_only(test.expression)
    return isinstance(test, cst.Call) and last_name(test.func) in _TYPE_QUERIES


def _passive(stmt: cst.CSTNode) -> bool:
    """A statement that only synchronizes, orders streams or processes, or logs: the window looks past it."""
    if isinstance(stmt, cst.If):
        return all(_logs_only(body) for body in _bodies(stmt))
    return _calls_only(stmt, lambda call: "synchron" in last_name(call.func).lower()
                       or last_name(call.func) in _ORDERING_CALLS or _is_log(call))


def _logs_only(statements) -> bool:
    """Statements that only print or log (a debug or report block)."""
    return bool(statements) and all(_calls_only(stmt, _is_log) for stmt in statements)


def _calls_only(stmt: cst.CSTNode, kind) -> bool:
    """A line of calls, each of the `kind` asked."""
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, cst.Expr) and isinstance(s.value, cst.Call) and kind(s.value) for s in stmt.body)


def _checked_later(body: SyncPurposes, stmt: cst.CSTNode) -> bool:
    """An assignment whose names flow into an assertion or a comparison with a reference."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], (cst.Assign, cst.AnnAssign)) and stmt.body[0].value is not None):
        return False
    return _feeds(body, stmt.body[0].value, 0) in (Purpose.ASSERTION, Purpose.VERIFY)


# -- a log line under a verbosity switch ---------------------------------------------------
def _debug_log(body: SyncPurposes, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
    """A log line among log lines under a test of a switch the scope never sets against a number."""
    stmt, block = _statement(body, node)
    if not isinstance(stmt, cst.SimpleStatementLine) or block is None or not _logs_only(block.body):
        return False
    guard = body.ancestry.parent(block)
    return isinstance(guard, cst.If) and guard.body is block and _switch(guard.test, scope)


def _switch(test: cst.BaseExpression, scope: cst.CSTNode) -> bool:
    """`level > 0`, `self.verbose >= 2`: a name the scope never assigns, against a number."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)):
        return False
    sides = (test.left, target.comparator)
    numbers = [e for e in sides if isinstance(e, (cst.Integer, cst.Float))]
    names = [dotted(e) for e in sides if isinstance(e, (cst.Name, cst.Attribute))]
    if len(numbers) != 1 or len(names) != 1 or not names[0]:
        return False
    assigned = {dotted(t) for n in walk(scope, ()) for t in flat_targets(n)
                if isinstance(t, (cst.Name, cst.Attribute))}
    return names[0] not in assigned


# -- a streaming pipeline's output -------------------------------------------------------
def _streams_out(body: SyncPurposes, node: cst.CSTNode, copy: bool, loop: Optional[cst.CSTNode], uploads: bool,
                 into: bool) -> bool:
    """An array read back and kept in a loop that uploads every iteration or iterates over incoming data; or copied
    into a buffer the call is given (`x.get(out=staging[i])`): an offload, a pipeline stage's output, whatever the loop."""
    if loop is None or last_name(getattr(node, "func", cst.Name("x"))) not in _ARRAY_READS and not copy:
        return False
    if into:
        return True
    fed = isinstance(loop, cst.For) and not _counts(loop.iter)
    return (fed or uploads) and _kept(body, node, 0)


def _counts(iterable: cst.BaseExpression) -> bool:
    """`range(n)`, `enumerate(range(n))`: a counted loop, not one fed with data."""
    while isinstance(iterable, cst.Call) and last_name(iterable.func) in ("enumerate", "tqdm", "zip"):
        if not iterable.args:
            return False
        iterable = iterable.args[0].value
    return isinstance(iterable, cst.Call) and last_name(iterable.func) in ("range", "trange", "arange")


def _kept(body: SyncPurposes, node: cst.CSTNode, depth: int) -> bool:
    child = node
    for parent in body.ancestry.ancestors(node):
        if isinstance(parent, cst.Yield):
            return True
        if isinstance(parent, cst.Call) and child is not parent.func and last_name(parent.func) in KEEPING_METHODS:
            return True
        if isinstance(parent, cst.Assign):
            if any(isinstance(t.target, cst.Subscript) for t in parent.targets):
                return True
            return depth < _DEPTH and any(not is_target(use, body.ancestry) and _kept(body, use, depth + 1)
                                          for name in bound_names(parent) for use in body.uses.get(name, ()))
        if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return False
        child = parent
    return False


class SyncPurposes:
    """The purposes of one module's synchronizations; the asking function's name uses (gathered once per function)."""

    def __init__(self, ancestry: Ancestry) -> None:
        self.ancestry = ancestry
        self.modules = imported_modules(ancestry.module)  # (a module's `step()` is no optimizer's)
        self.probes: frozenset[int] = frozenset()
        self.loop: Optional[cst.CSTNode] = None  # (the innermost loop around the read asked about)
        self.uses: dict[str, list[cst.Name]] = {}
        self._uses: dict[int, dict[str, list[cst.Name]]] = {}

    def purpose(self, node: cst.CSTNode, value_read: bool, copy: bool, conditional: bool,
                uploads: bool, probes: frozenset = frozenset(), into: bool = False) -> Optional[Purpose]:
        """What the sync at `node` is for (None: a stall); `probes`: ids of calls of functions that read a timer;
        `into`: a copy into a host buffer the call is given, not a value it returns."""
        function = next((a for a in self.ancestry.ancestors(node) if isinstance(a, cst.FunctionDef)), self.ancestry.module)
        if id(function) not in self._uses:
            uses = self._uses[id(function)] = {}
            for current in walk(function, (cst.FunctionDef, cst.ClassDef)):
                if isinstance(current, cst.Name):
                    uses.setdefault(current.value, []).append(current)
        self.uses, self.probes = self._uses[id(function)], probes
        loops = self.ancestry.loops_around(node)
        self.loop = loops[-1] if loops else None
        found = _why(self, node, value_read, copy, loops, function, uploads, into)
        if found is Purpose.MEASUREMENT and not conditional and any(trains(loop, self.modules) for loop in loops):
            return Purpose.STEP_TIMING  # timing every step of a training loop is the stall itself
        return found  # (every N steps, `if step % N == 0:`, is the windowed timing to advise)


    def handed_back(self, node: cst.CSTNode) -> bool:
        """Does the value read at `node` leave its function by a `return` or `yield` (itself, or a name bound to it):
        what it is for is the caller's to decide."""
        self.purpose(node, False, False, False, False)  # (gathers the function's name uses)
        return _handed_back(self, node, 0)


def _handed_back(body: SyncPurposes, node: cst.CSTNode, depth: int) -> bool:
    for parent in body.ancestry.ancestors(node):
        if isinstance(parent, (cst.Return, cst.Yield)):
            return True
        if isinstance(parent, (cst.Assign, cst.AnnAssign)) and depth < _DEPTH:
            return any(_handed_back(body, use, depth + 1) for name in bound_names(parent)
                       for use in body.uses.get(name, ()) if not is_target(use, body.ancestry))
        if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return False
    return False


def _why(body: SyncPurposes, node: cst.CSTNode, value_read: bool, copy: bool, loops: list, function: cst.CSTNode,
         uploads: bool, into: bool = False) -> Optional[Purpose]:
    itself = _argument_of(node, node, False) if isinstance(node, cst.Call) else None
    found = itself or (_feeds(body, node, 0) if value_read else None)
    if found is not None and found is not Purpose.SELECTION:
        return found
    if value_read and _debug_log(body, node, loops[-1] if loops else function):
        return Purpose.DEBUG
    # (what stands next to it says what a bare read is for; a test that selects between values says it itself)
    near = _neighbours(body, node) if found is None else None
    if near is not None:
        return near
    # (an array kept as the loop's output is output, whatever else its values choose: `buf[i] = x_h` after `min(m, x_h.min())`)
    if found in (None, Purpose.SELECTION) and value_read \
            and _streams_out(body, node, copy, loops[-1] if loops else None, uploads, into):
        return Purpose.OUTPUT
    return found


# -- one read per element ------------------------------------------------------------------
def element_read(node: cst.CSTNode, loop: cst.CSTNode) -> str:
    """The tensor (as spelled) read one element per pass by the loop's index and only so (one `.tolist()` reads all)."""
    element = _read_element(node, loop) if isinstance(loop, cst.For) else None
    if element is None:
        return ""
    base = dotted(element.value)
    targets = {n.value for n in names_in(loop.target)}
    if not base or not targets & {n.value for el in element.slice for n in names_in(el)}:
        return ""
    if base.split(".")[0] in targets or not _only_reads_elements(loop.body, base):
        return ""
    if _keys_of(loop.iter) == base:
        return ""  # `for key in losses: losses[key]`: a lookup of a mapping's values by key, no tensor's elements
    return base


def _keys_of(iterable: cst.BaseExpression) -> str:
    """The mapping whose keys a loop runs over (`d`, `d.keys()`), as spelled; else ""."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value == "keys" \
            and not iterable.args:
        return dotted(iterable.func.value)
    return dotted(iterable)


def _read_element(node: cst.CSTNode, loop: cst.For) -> Optional[cst.Subscript]:
    """`q[b]` of `q[b].item()`, `int(q[b])`, `if q[b] < 0:`, or of a name the body binds once to it."""
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Attribute):
            return _element_of(node.func.value, loop)
        return _element_of(node.args[0].value, loop) if len(node.args) == 1 else None
    if isinstance(node, cst.Comparison):
        operands = [node.left] + [c.comparator for c in node.comparisons]
        return next((e for e in (_element_of(o, loop) for o in operands) if e is not None), None)
    return _element_of(node, loop)


def _element_of(expr: cst.BaseExpression, loop: cst.For) -> Optional[cst.Subscript]:
    if isinstance(expr, cst.Subscript):
        return expr
    if not isinstance(expr, cst.Name):
        return None
    bound = [n for n in walk(loop.body, ()) if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For))
             and any(type(t) is cst.Name and t.value == expr.value for t in flat_targets(n))]
    if len(bound) != 1 or not isinstance(bound[0], cst.Assign) or len(bound[0].targets) != 1:
        return None  # bound more than once, or otherwise (a loop target, `+=`)
    value = bound[0].value
    return value if isinstance(value, cst.Subscript) else None


def _only_reads_elements(body: cst.CSTNode, base: str) -> bool:
    """Is `base` used in the body only as `base[...]` read (no write, no other use)?"""
    def parts(node: cst.CSTNode) -> list:
        return list(node.slice) if type(node) is cst.Subscript and dotted(node.value) == base else child_nodes(node)

    for current in walk(body, (), parts):
        if type(current) is cst.Subscript and dotted(current.value) == base:
            continue
        if type(current) in (cst.AssignTarget, cst.AugAssign) and _roots_at(current.target, base):
            return False
        if type(current) in (cst.Name, cst.Attribute) and dotted(current) == base:
            return False
    return True


def _roots_at(target: cst.BaseExpression, base: str) -> bool:
    while isinstance(target, (cst.Subscript, cst.Attribute)):
        if dotted(target) == base:
            return True
        target = target.value
    return dotted(target) == base


def waits_on_user(loop: cst.CSTNode) -> bool:
    """An interactive loop: its body calls `input()` (every iteration waits for a person)."""
    return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "input"
               for n in walk(loop, ()))


def draws(loop: cst.CSTNode, qualify: Callable[[cst.BaseExpression], str], libraries: tuple[str, ...]) -> bool:
    """A drawing loop: its body calls a plotting library's function (`plt.plot(...)`, `plt.figure()`) on every pass."""
    body = getattr(loop, "body", None)
    return any(isinstance(n, cst.Call) and qualify(n.func).startswith(libraries)
               for statement in getattr(body, "body", ()) for n in walk(statement, ()))


def waits_on_files(body: cst.CSTNode, qualify: Callable[[cst.BaseExpression], str], calls: frozenset,
                   modules: tuple[str, ...], bound: Callable[[str], bool], defaults: dict) -> bool:
    """A body that waits on the host's files every time it runs: it calls a file reader or writer (`calls`, or a
    function of `modules`) outside any test but a switch its function's defaults turn on (`if run is None:` with
    `run=None`), or a function `bound` says does (a helper that saves a figure). `defaults`: the function's
    parameters' default values (a switch that defaults off, `if visualize:` with `visualize=False`, is not taken)."""
    def parts(node: cst.CSTNode) -> list:
        if type(node) is cst.If:
            side = _default_side(node.test, defaults)
            if side is None and node.orelse is not None and all(
                    waits_on_files(b, qualify, calls, modules, bound, defaults) for b in (node.body, node.orelse)):
                return [node.test, node.body]  # (a file read or written on every side: `.png` or another format)
            return [node.test] + ([node.body] if side is True else [node.orelse] if side is False and node.orelse else [])
        return list(child_nodes(node))

    for n in walk(body, parts=parts):
        if type(n) is not cst.Call:
            continue
        name = qualify(n.func)
        if name and (name in calls or name.startswith(modules) or bound(name)):
            return True
    return False


def parameter_defaults(function: cst.CSTNode) -> dict:
    """The default values of a function's parameters, by name ({} for a module)."""
    params = getattr(function, "params", None)
    if params is None:
        return {}
    return {p.name.value: p.default for p in (*params.posonly_params, *params.params, *params.kwonly_params)
            if p.default is not None}


def _default_side(test: cst.BaseExpression, defaults: dict) -> Optional[bool]:
    """Which side a switch on a parameter takes under its default (`if run is None:` with `run=None`: True; `if
    verbose:` with `verbose=False`: False); None when the test is no such switch."""
    negated = False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, True
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(
            test.comparisons[0].operator, (cst.Is, cst.IsNot)) and isinstance(test.left, cst.Name):
        default, against = defaults.get(test.left.value), test.comparisons[0].comparator
        if default is None or not (isinstance(against, cst.Name) and against.value == "None"):
            return None
        is_none = isinstance(default, cst.Name) and default.value == "None"
        taken = is_none if isinstance(test.comparisons[0].operator, cst.Is) else not is_none
        return taken != negated
    if isinstance(test, cst.Name) and test.value in defaults:
        truth = _literal_truth(defaults[test.value])
        return None if truth is None else truth != negated
    return None


def _literal_truth(value: cst.BaseExpression) -> Optional[bool]:
    if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
        return value.value == "True"
    if isinstance(value, (cst.Integer, cst.Float)):
        return float(value.value.replace("_", "")) != 0
    if isinstance(value, cst.SimpleString):
        return len(value.evaluated_value or "") > 0
    return None


def unrolled(loop: cst.CSTNode, constants: Optional[dict[str, int]] = None) -> bool:
    """`for x in [a, b]:`, `for _ in range(3):`: a loop of a few passes written out in the code (a warm-up, a
    short test loop, a pool of streams made one by one); the loop around it, if any, decides how often they run.
    `constants`: the module's names bound once to a written integer (`for k in range(NUM_STREAMS):`)."""
    if not isinstance(loop, cst.For):
        return False
    if isinstance(loop.iter, (cst.List, cst.Tuple, cst.Set)):
        return not any(isinstance(e, cst.StarredElement) for e in loop.iter.elements)
    call = loop.iter
    counted = isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "range"
    bound = call.args[-1].value if counted and len(call.args) in (1, 2) else None  # type: ignore[attr-defined]
    if isinstance(bound, cst.Name) and constants and bound.value in constants:
        return constants[bound.value] <= FEW_PASSES
    return isinstance(bound, cst.Integer) and int(bound.value, 0) <= FEW_PASSES


def module_constants(module: cst.Module) -> dict[str, int]:
    """The module-level names bound exactly once, to a written integer (`NUM_STREAMS = 4`), read once per module."""
    known = _CONSTANTS.get(id(module))
    if known is not None and known[0] is module:
        return known[1]
    bound: dict[str, list] = {}
    for statement in module.body:
        for small in (statement.body if isinstance(statement, cst.SimpleStatementLine) else ()):
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    for name in walk(target.target, ()):
                        if isinstance(name, cst.Name):
                            bound.setdefault(name.value, []).append(small.value if target.target is name else None)
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and isinstance(small.target, cst.Name):
                bound.setdefault(small.target.value, []).append(None)
    found = {name: int(values[0].value, 0) for name, values in bound.items()
             if len(values) == 1 and isinstance(values[0], cst.Integer)}
    if len(_CONSTANTS) > 64:
        _CONSTANTS.clear()
    _CONSTANTS[id(module)] = (module, found)
    return found


_CONSTANTS: dict[int, tuple[cst.Module, dict[str, int]]] = {}


# A mapping's views: a loop over one passes once per value the program keeps in the mapping.
_HELD_VIEWS = frozenset({"items", "values", "keys"})


def over_held_values(loop: cst.CSTNode) -> bool:
    """`for name in splats.keys():`, `{k: v.cpu() for k, v in state.items()}`: a loop over a mapping's views passes
    once per value the program holds there (a handful of named tensors, metrics or parameters), not once per datum or
    step; the loop around it, if any, decides how often it runs."""
    if isinstance(loop, cst.For):
        iterable = loop.iter
    elif isinstance(loop, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
        iterable = loop.for_in.iter
    else:
        return False
    return (isinstance(iterable, cst.Call) and not iterable.args and isinstance(iterable.func, cst.Attribute)
            and iterable.func.attr.value in _HELD_VIEWS)


def per_device(loop: cst.CSTNode, qualify: Callable[[cst.BaseExpression], str], selectors: frozenset[str]) -> bool:
    """`for gpu in gpus: with cupy.cuda.Device(gpu.index):`: every pass makes current the device its item names (a call
    of `selectors`, by qualified name, given a name the loop binds): the loop runs once per device."""
    if not isinstance(loop, cst.For):
        return False
    items = {n.value for n in walk(loop.target, ()) if isinstance(n, cst.Name)}
    for node in walk(loop.body, ()):
        if isinstance(node, cst.Call) and qualify(node.func) in selectors and any(
                isinstance(n, cst.Name) and n.value in items for arg in node.args for n in walk(arg.value, ())):
            return True
    return False


FEW_PASSES = 8  # `range(n)` with a written n up to this is a few passes written out, not a stream of work
