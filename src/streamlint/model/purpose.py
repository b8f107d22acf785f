"""Why the host waits: what a synchronized value feeds, decided from the code's shape.

A host synchronization in a hot path is usually a stall (SL103, SL502), but real code
also synchronizes where it must or means to: the value decides the loop's control flow
(`while err > tol:`, `if cp.all(new == old): break`), the shape of the next arrays
(`n = int(mask.sum())` then `torch.empty(n)`), an assertion of a test, a timed or
measured region (host timers, `elapsed_time`, memory statistics, profiler ranges), it
prepares a CUDA-graph capture, it is compared with a host reference
(`np.allclose(x.get(), ref)`), or it is printed in a block of log lines under a switch
(`if verbosityLevel > 0:`). And a device-to-host copy of an array in a loop that uploads
its input every iteration is a streaming pipeline's output: reading it once after the
loop is no option there, the non-blocking pinned read-back is. A training loop is no
measurement harness: a timer next to a sync there is timing every step (STEP_TIMING, a
stall). Events made in a benchmark's repeat loop only to time it are timing marks
(`creation_purpose`, SL501).

The decision is syntactic and local to the body: where the synchronizing expression
sits (an `if`/`while` test, a `for` iterable, an `assert`, an allocation's shape, a
slice bound), where the name it is assigned to is used (to a small depth), and, for
value-less syncs (`torch.cuda.synchronize()`), which statements stand next to it. File
and function names are never consulted. It is computed lazily, only for operations a
rule is about to report, and cached per operation.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from streamlint.model import tree
from streamlint.model.ops import COPIES, FunctionRecord, GpuOp, OpKind
from streamlint.model.queries import in_training_loop, repeats
from streamlint.model.walk_common import periodic_test

if TYPE_CHECKING:
    from streamlint.model.analysis import FileAnalysis


class Purpose(Enum):
    """What a host synchronization is for. The first five make the wait needed or
    intentional; the last two are still stalls, with advice of their own."""

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
_TIMER_CALLS = frozenset({"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time",
                          "default_timer", "elapsed_time", "get_elapsed_time", "event_elapsed_time",
                          "cudaEventElapsedTime", "cuEventElapsedTime"})
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
_VERIFY_CALLS = frozenset({"allclose", "isclose", "array_equal", "array_equiv", "assert_close"})
_DIFFERENCE_REDUCTIONS = frozenset({"norm", "abs", "fabs", "absolute", "amax", "max"})
# Log calls: what a debug block under a switch (`if verbosity > 0:`) does, and nothing else.
_PRINT_CALLS = frozenset({"print", "pprint", "debug", "info", "warning", "warn", "log", "error", "critical",
                          "exception", "write"})
# Event methods and timing calls: an event used only by these is a timing mark.
_EVENT_TIMING_METHODS = frozenset({"record", "synchronize", "query", "elapsed_time"})
_STORE_METHODS = frozenset({"append", "extend", "put", "put_nowait", "write", "send", "add", "appendleft",
                            "save", "savez", "tofile"})
_ARRAY_READS = frozenset({"numpy", "tobytes", "tofile", "get", "asnumpy", "cpu", "to", "copy_to_host"})
_ORDERING_CALLS = frozenset({"wait_stream", "wait_event", "record", "wait", "empty_cache", "barrier",
                            "range_push", "range_pop"})
_DEPTH = 3  # how many assignments a value is followed through


def _last(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return ""


def _dotted(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        inner = _dotted(func.value)
        return f"{inner}.{func.attr.value}" if inner else func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return ""


def _is_timer(call: cst.Call) -> bool:
    name = _last(call.func)
    dotted = _dotted(call.func)
    return (name in _TIMER_CALLS or name in _MEMORY_CALLS or name in _PROFILER_CALLS
            or dotted in ("time.time", "time.time_ns") or dotted.endswith(_PROFILER_DOTTED))


def _is_assertion(call: cst.Call) -> bool:
    dotted = _dotted(call.func)
    last = _last(call.func)
    return last.lower().startswith("assert") or any(m in dotted + "." for m in _ASSERT_MODULES)


def _is_capture(node: cst.CSTNode) -> bool:
    """A statement that begins a CUDA-graph capture."""
    if isinstance(node, cst.With):
        return any(isinstance(item.item, cst.Call) and _last(item.item.func) in ("graph", "capture") for item in node.items)
    return any(_last(c.func) in _CAPTURE_CALLS - {"graph"} for c in _calls(node))


def _calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and current is not node:
            continue
        if isinstance(current, cst.Call):
            yield current
        stack.extend(tree.children(current))


class _Body:
    """Parents and name uses of one body, built once per record on first question."""

    def __init__(self, analysis: "FileAnalysis", record: FunctionRecord) -> None:
        self.parents = parents_of(analysis)
        self.probes = record.probe_calls  # calls of helpers that time (another module's too)
        self.uses: dict[str, list[cst.Name]] = {}
        stack: list[cst.CSTNode] = [record.node]
        while stack:
            current = stack.pop()
            if current is not record.node and isinstance(current, (cst.FunctionDef, cst.ClassDef)):
                continue  # nested definitions are bodies of their own
            if isinstance(current, cst.Name):
                self.uses.setdefault(current.value, []).append(current)
            stack.extend(tree.children(current))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parents.get(id(node))
        while current is not None:
            yield current
            current = self.parents.get(id(current))


def parents_of(analysis: "FileAnalysis") -> dict[int, cst.CSTNode]:
    """The file's parent map, shared with the fix builder (one walk per file)."""
    if analysis.parents is None:
        parents: dict[int, cst.CSTNode] = {}
        stack: list[cst.CSTNode] = [analysis.module]
        while stack:
            current = stack.pop()
            for child in tree.children(current):
                parents[id(child)] = current
                stack.append(child)
        analysis.parents = parents
    return analysis.parents


def _cache(analysis: "FileAnalysis") -> dict:
    return analysis.__dict__.setdefault("_sync_purposes", {})


def sync_purpose(analysis: "FileAnalysis", record: FunctionRecord, op: GpuOp) -> Optional[Purpose]:
    """What the host synchronization `op` is for, when the code's shape tells; None
    when it tells nothing (a plain stall)."""
    cache = _cache(analysis)
    key = ("op", id(op))
    if key not in cache:
        bodies = cache.setdefault("bodies", {})
        body = bodies.get(id(record.node))
        if body is None:
            body = bodies[id(record.node)] = _Body(analysis, record)
        cache[key] = _decide(body, record, op)
    return cache[key]


def _decide(body: _Body, record: FunctionRecord, op: GpuOp) -> Optional[Purpose]:
    found = _why(body, record, op)
    if found is Purpose.MEASUREMENT and not op.conditional and in_training_loop(record, op):
        return Purpose.STEP_TIMING  # timing every step of a training loop is the stall itself
    return found  # (every N steps, `if step % N == 0:`, is the windowed timing to advise)


def _why(body: _Body, record: FunctionRecord, op: GpuOp) -> Optional[Purpose]:
    value_read = op.kind in COPIES or op.kind is OpKind.IMPLICIT_SYNC
    found = _feeds(body, op.node, 0) if value_read else None
    if found is not None and found is not Purpose.SELECTION:
        return found
    if value_read and _debug_log(body, record, op):
        return Purpose.DEBUG
    near = _neighbours(body, op.node)
    if near is not None:
        return near
    if found is None and value_read and _streams_out(body, record, op):
        return Purpose.OUTPUT
    return found


# -- what a value feeds ------------------------------------------------------------------
def _feeds(body: _Body, node: cst.CSTNode, depth: int, compared: bool = False) -> Optional[Purpose]:
    """Where the expression `node` sits, and where a name bound to it is used.
    `compared`: the value went into a difference's norm (`norm(x.get() - ref)`), which
    verifies a result when it is printed or asserted."""
    child = node
    difference = False
    for parent in body.ancestors(node):
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Subtract):
            difference = True
        if isinstance(parent, (cst.If, cst.While)) and child is parent.test:
            if isinstance(parent, cst.While):
                return Purpose.CONTROL
            return _branch(parent)
        if isinstance(parent, cst.For) and child is parent.iter:
            return Purpose.CONTROL
        if isinstance(parent, cst.IfExp) and child is parent.test:
            return Purpose.SELECTION
        if isinstance(parent, cst.Assert):
            return Purpose.ASSERTION
        if isinstance(parent, cst.Slice):
            return Purpose.SHAPE
        if isinstance(parent, cst.Call) and difference and _last(parent.func) in _DIFFERENCE_REDUCTIONS:
            compared = True  # `norm(x.get() - ref)`, `np.abs(x.get() - ref).max()`
        if isinstance(parent, cst.Call) and child is not parent.func:
            name = _last(parent.func)
            if _is_assertion(parent):
                return Purpose.ASSERTION
            if name in _VERIFY_CALLS:
                return Purpose.VERIFY
            if compared and name in _PRINT_CALLS:
                return Purpose.VERIFY
            if _is_timer(parent):
                return Purpose.MEASUREMENT
            if name == "range":
                return Purpose.CONTROL
            if name in _SHAPE_CALLS:
                return Purpose.SHAPE
            if name in ("full", "new_full") and parent.args and child is parent.args[0]:
                return Purpose.SHAPE  # (the fill value is data, the size is a shape)
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.NamedExpr)) and depth < _DEPTH:
            targets = _bound_names(parent)
            best = None
            for name in targets:
                for use in body.uses.get(name, ()):
                    if _is_target(body, use, parent):
                        continue
                    purpose = _feeds(body, use, depth + 1, compared)
                    if purpose is not None and purpose.needed:
                        return purpose
                    best = best or purpose
            return best
        if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return None
        child = parent
    return None


def _bound_names(node: cst.CSTNode) -> list[str]:
    if isinstance(node, cst.Assign):
        targets: list[cst.BaseExpression] = [t.target for t in node.targets]
    elif isinstance(node, (cst.AnnAssign, cst.NamedExpr)):
        targets = [node.target]
    else:
        return []
    names = []
    while targets:
        target = targets.pop()
        if isinstance(target, cst.Name):
            names.append(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            targets.extend(e.value for e in target.elements)
        elif isinstance(target, cst.StarredElement):
            targets.append(target.value)
    return names


def _is_target(body: _Body, use: cst.Name, assignment: cst.CSTNode) -> bool:
    """Is this occurrence of the name a binding (of this or another assignment)?"""
    child: cst.CSTNode = use
    for parent in body.ancestors(use):
        if isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.AnnAssign, cst.NamedExpr, cst.AugAssign))
                                                    and child is parent.target):
            return True
        if isinstance(parent, (cst.For, cst.CompFor)) and child is parent.target:
            return True
        if isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            child = parent
            continue
        return False
    return False


_LOG_CALLS = frozenset({"print", "warn", "warning", "info", "debug", "error", "log", "append", "add", "extend",
                        "write", "add_scalar", "log_metrics", "exception", "critical"})


def _branch(node: cst.If) -> Optional[Purpose]:
    """What a data-dependent `if` does with its test. It leaves the loop or the function
    (`break`, `continue`, `return`), or queues other work: the host must know (CONTROL).
    It only assigns: the device can choose (`where`: SELECTION). It only raises, logs or
    collects: a check that can run every N steps or on the device (CHECK)."""
    bodies = [node.body.body]
    orelse = node.orelse
    while isinstance(orelse, cst.If):
        bodies.append(orelse.body.body)
        orelse = orelse.orelse
    if isinstance(orelse, cst.Else):
        bodies.append(orelse.body.body)
    kinds = set()
    for body in bodies:
        for stmt in body:
            kinds |= _statement_kinds(stmt)
    if "control" in kinds:
        return Purpose.CONTROL
    if kinds <= {"assign"}:
        return Purpose.SELECTION
    return Purpose.CHECK


def _statement_kinds(stmt: cst.CSTNode) -> set[str]:
    """"control" (leaves, or calls something that is not logging), "check" (raise,
    log, collect) or "assign"."""
    kinds: set[str] = set()
    stack = [stmt]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(current, (cst.Break, cst.Continue, cst.Return)):
            return {"control"}
        if isinstance(current, cst.Raise):
            kinds.add("check")
            continue  # (the exception's constructor is no work)
        if isinstance(current, cst.Call):
            if _last(current.func) in _LOG_CALLS or _dotted(current.func).startswith(("logging.", "logger.", "log.")):
                kinds.add("check")
            else:
                return {"control"}
        if isinstance(current, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            kinds.add("assign")
            continue  # (calls in an assigned value compute it: `best = loss.detach()`)
        stack.extend(tree.children(current))
    return kinds


# -- what stands next to a synchronization -----------------------------------------------
def _statement(body: _Body, node: cst.CSTNode) -> tuple[Optional[cst.CSTNode], Optional[cst.CSTNode]]:
    """(the statement holding `node`, the block whose body lists it)."""
    child = node
    for parent in body.ancestors(node):
        if isinstance(child, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and isinstance(
            parent, (cst.IndentedBlock, cst.Module)
        ):
            return child, parent
        child = parent
    return None, None


def _neighbours(body: _Body, node: cst.CSTNode) -> Optional[Purpose]:
    """The statements around a synchronization: an assertion, a timer or memory
    statistic, or a graph capture right after it (or a memory statistic right before)
    make it part of that. `with` blocks are transparent; out of an enclosing loop only a
    capture right after the loop counts (a warm-up loop)."""
    stmt, block = _statement(body, node)
    in_loop = False
    while stmt is not None and block is not None:
        siblings = list(block.body)
        at = next((i for i, s in enumerate(siblings) if s is stmt), None)
        if at is None:
            return None
        if any(_is_capture(later) for later in siblings[at + 1: at + 4]):
            return Purpose.CAPTURE  # (past the graph's own set-up: `g = torch.cuda.CUDAGraph()`)
        for later in siblings[at + 1: at + 4]:
            if not in_loop and _asserts(later):
                return Purpose.ASSERTION
            if not in_loop and not isinstance(later, (cst.For, cst.While)) and not _every_n_steps(later) and any(
                _is_timer(c) or id(c) in body.probes for c in _calls(later)
            ):
                return Purpose.MEASUREMENT
            if not in_loop and _checked_later(body, later):
                return Purpose.ASSERTION  # `out = d.copy_to_host()`, then `assert` on it
            if not _passive(later):
                break
        if at > 0 and not in_loop:
            before = siblings[at - 1]
            if not isinstance(before, (cst.For, cst.While)) and any(_last(c.func) in _MEMORY_CALLS for c in _calls(before)):
                return Purpose.MEASUREMENT
        outer = next((a for a in body.ancestors(block) if isinstance(a, (cst.For, cst.While, cst.With, cst.If,
                                                                            cst.Try, cst.FunctionDef))), None)
        if outer is None or isinstance(outer, cst.FunctionDef):
            return None
        if isinstance(outer, (cst.For, cst.While)):
            in_loop = True
        stmt, block = _statement(body, outer)
    return None


def _every_n_steps(stmt: cst.CSTNode) -> bool:
    """`if step % N == 0:`: what it measures is not the sync before it, which runs every step."""
    return isinstance(stmt, cst.If) and periodic_test(stmt.test)


def _asserts(stmt: cst.CSTNode) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine):
        return any(isinstance(s, cst.Assert) for s in stmt.body) or any(_is_assertion(c) for c in _calls(stmt))
    if isinstance(stmt, cst.With):  # `with pytest.raises(...)`, `with torch.no_grad():` around checks
        return any(_asserts(s) for s in stmt.body.body[:1])
    return False


def _passive(stmt: cst.CSTNode) -> bool:
    """A statement that only synchronizes, orders streams or processes, or logs
    (`s.synchronize()`, `current_stream().wait_stream(side)`, `dist.barrier()`,
    `if rank == 0: log.info(...)`): the window looks past it."""
    if isinstance(stmt, cst.If):
        if not _logs_only(stmt.body.body):
            return False
        if isinstance(stmt.orelse, cst.Else):
            return _logs_only(stmt.orelse.body.body)
        return stmt.orelse is None or _passive(stmt.orelse)
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    return all(
        isinstance(s, cst.Expr) and isinstance(s.value, cst.Call)
        and ("synchron" in _last(s.value.func).lower() or _last(s.value.func) in _ORDERING_CALLS
             or _is_log(s.value))
        for s in stmt.body
    )


def _is_log(call: cst.Call) -> bool:
    return _last(call.func) in _PRINT_CALLS or _dotted(call.func).startswith(("logging.", "logger.", "log."))


def _logs_only(statements) -> bool:
    """Statements that only print or log (a debug or report block)."""
    return bool(statements) and all(
        isinstance(stmt, cst.SimpleStatementLine)
        and all(isinstance(s, cst.Expr) and isinstance(s.value, cst.Call) and _is_log(s.value) for s in stmt.body)
        for stmt in statements
    )


def _checked_later(body: _Body, stmt: cst.CSTNode) -> bool:
    """An assignment whose names flow into an assertion or a comparison with a reference
    (`data = out.copy_to_host()`, `err = norm(data - ref)`, `assert err < tol`)."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], (cst.Assign, cst.AnnAssign)) and stmt.body[0].value is not None):
        return False
    return _feeds(body, stmt.body[0].value, 0) in (Purpose.ASSERTION, Purpose.VERIFY)


# -- a log line under a verbosity switch ---------------------------------------------------
def _debug_log(body: _Body, record: FunctionRecord, op: GpuOp) -> bool:
    """A print or log line, in a block of log lines under an `if` that compares a switch
    the loop does not change with a number (`if verbosityLevel > 0:`): a debug path, off
    unless asked for."""
    stmt, block = _statement(body, op.node)
    if not isinstance(stmt, cst.SimpleStatementLine) or block is None or not _logs_only(block.body):
        return False
    guard = body.parents.get(id(block))
    if not isinstance(guard, cst.If) or guard.body is not block:
        return False
    info = record.loops.get(op.loops[-1]) if op.loops else None
    return _switch(guard.test, info.node if info is not None else record.node)


def _switch(test: cst.BaseExpression, scope: cst.CSTNode) -> bool:
    """`level > 0`, `self.verbose >= 2`: a name the scope never assigns, against a number."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)):
        return False
    sides = (test.left, target.comparator)
    numbers = [e for e in sides if isinstance(e, (cst.Integer, cst.Float))]
    names = [_dotted(e) for e in sides if isinstance(e, (cst.Name, cst.Attribute))]
    return len(numbers) == 1 and len(names) == 1 and bool(names[0]) and names[0] not in _assigned(scope)


def _assigned(scope: cst.CSTNode) -> set[str]:
    """The names and attributes the scope binds (`x = `, `x += `, `for x in`, `self.x = `)."""
    bound: set[str] = set()
    stack = [scope]
    while stack:
        current = stack.pop()
        targets: list[cst.CSTNode] = []
        if isinstance(current, cst.Assign):
            targets = [t.target for t in current.targets]
        elif isinstance(current, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor)):
            targets = [current.target]
        while targets:
            target = targets.pop()
            if isinstance(target, (cst.Tuple, cst.List)):
                targets.extend(e.value for e in target.elements)
            elif isinstance(target, cst.StarredElement):
                targets.append(target.value)
            elif isinstance(target, (cst.Name, cst.Attribute)):
                bound.add(_dotted(target))
        stack.extend(tree.children(current))
    return bound


# -- timing marks ---------------------------------------------------------------------------
def creation_purpose(analysis: "FileAnalysis", record: FunctionRecord, op: GpuOp) -> Optional[Purpose]:
    """Why an event is made in a loop: MEASUREMENT when it is a timing mark of a
    measurement loop (one that repeats the same work, `for _ in range(n_run):`, reads the
    elapsed time and does not train) and the body uses it only to record, wait for and
    read the time; None otherwise (an event that orders streams, or marks made per batch
    of a pipeline or per step of a training loop)."""
    if op.kind is not OpKind.EVENT_CREATE or not op.loops:
        return None
    info = record.loops.get(op.loops[-1])
    if info is None or not info.timed or not repeats(info) or in_training_loop(record, op):
        return None
    cache = _cache(analysis)
    bodies = cache.setdefault("bodies", {})
    body = bodies.get(id(record.node))
    if body is None:
        body = bodies[id(record.node)] = _Body(analysis, record)
    names = []
    assign = body.parents.get(id(op.node))
    if isinstance(assign, (cst.Assign, cst.AnnAssign)) and assign.value is op.node:
        names = _bound_names(assign)
    if len(names) != 1 or not all(_times(body, use, assign) for use in body.uses.get(names[0], ())):
        return None
    return Purpose.MEASUREMENT


def _times(body: _Body, use: cst.Name, assignment: cst.CSTNode) -> bool:
    """Is this use of an event's name a timing use: a binding, `e.record()`,
    `e.synchronize()`, `e.elapsed_time(other)`, or an argument of an elapsed-time call?"""
    if _is_target(body, use, assignment):
        return True
    parent = body.parents.get(id(use))
    if isinstance(parent, cst.Attribute) and parent.value is use:
        call = body.parents.get(id(parent))
        return isinstance(call, cst.Call) and call.func is parent and parent.attr.value in _EVENT_TIMING_METHODS
    if isinstance(parent, cst.Arg):
        call = body.parents.get(id(parent))
        return isinstance(call, cst.Call) and _last(call.func) in _TIMER_CALLS
    return False


# -- a streaming pipeline's output -------------------------------------------------------
def _streams_out(body: _Body, record: FunctionRecord, op: GpuOp) -> bool:
    """An array read back in a loop that uploads its input every iteration, and kept
    (stored, appended, yielded, written): the read-back is the pipeline's output."""
    if not op.loops or _last(getattr(op.node, "func", cst.Name("x"))) not in _ARRAY_READS and op.kind not in COPIES:
        return False
    loop = op.loops[-1]
    info = record.loops.get(loop)
    fed = isinstance(info.node, cst.For) and not _counts(info.node.iter) if info is not None else False
    if not fed and not any(w.kind is OpKind.COPY_H2D and loop in w.loops for w in record.ops):
        return False  # neither uploads nor iterates over incoming data: not a stream of chunks
    return _kept(body, op.node, 0)


def _counts(iterable: cst.BaseExpression) -> bool:
    """`range(n)`, `enumerate(range(n))`: a counted loop, not one fed with data."""
    while isinstance(iterable, cst.Call) and _last(iterable.func) in ("enumerate", "tqdm", "zip"):
        if not iterable.args:
            return False
        iterable = iterable.args[0].value
    return isinstance(iterable, cst.Call) and _last(iterable.func) in ("range", "trange", "arange")


def _kept(body: _Body, node: cst.CSTNode, depth: int) -> bool:
    child = node
    for parent in body.ancestors(node):
        if isinstance(parent, (cst.Yield,)):
            return True
        if isinstance(parent, cst.Call) and child is not parent.func and _last(parent.func) in _STORE_METHODS:
            return True
        if isinstance(parent, cst.Assign):
            if any(isinstance(t.target, cst.Subscript) for t in parent.targets):
                return True
            if depth < _DEPTH:
                for name in _bound_names(parent):
                    for use in body.uses.get(name, ()):
                        if not _is_target(body, use, parent) and _kept(body, use, depth + 1):
                            return True
            return False
        if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return False
        child = parent
    return False
