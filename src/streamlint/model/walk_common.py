"""What the walk shares: call arguments, small marker values, and target/flag readers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from streamlint.model.api.facts import (
    BLOCK_ALWAYS,
    Arg,
    Fact,
)
from streamlint.model.ops import (
    OpKind,
)
from streamlint.model.values import (
    UNKNOWN,
    Buffer,
    Const,
    Device,
    QualRef,
    Stream,
    Value,
)

if TYPE_CHECKING:
    pass

# Frameworks that keep a per-thread current stream.
CURRENT_FRAMEWORKS = ("cupy", "torch")
LOCAL = "<local>."
_BUILTIN_SYNCS = frozenset({"print", "float", "int", "bool", "str", "repr", "complex"})
# Storing a stream or event into a container keeps it for later: creating one per
# item (one event per submodule, streams appended at set-up) is not a hot-path smell.
_CONTAINER_STORES = frozenset({"append", "add", "insert", "extend", "put", "put_nowait", "appendleft", "setdefault"})
# `.wait()` on a handle we cannot see (an async collective's Work, an event): the current
# stream waits for it, and an unseen handle is taken to order everything (stay silent).
_UNKNOWN_STREAM_METHODS = frozenset({"synchronize", "sync", "wait_stream", "wait_event", "wait"})
_OPERATOR_LABELS = {cst.BinaryOperation: "arithmetic", cst.Comparison: "a comparison",
                    cst.UnaryOperation: "arithmetic", cst.AugAssign: "in-place arithmetic"}
# Host timers: a loop that reads one is a measurement harness; its syncs end timed regions.
_TIMERS = frozenset({"time.perf_counter", "time.perf_counter_ns", "time.time", "time.monotonic",
                     "time.monotonic_ns", "time.process_time", "timeit.default_timer"})
_EVENT_TIMERS = frozenset({"cupy.cuda.get_elapsed_time", "numba.cuda.event_elapsed_time"})
# Memory statistics: a function that reads one measures, as one that reads a timer does
# (its call next to a sync is a probe: purpose.py).
_MEMORY_STATS = frozenset({
    f"torch.cuda.{name}" for name in ("memory_allocated", "max_memory_allocated", "memory_reserved",
                                      "max_memory_reserved", "memory_stats", "memory_summary", "mem_get_info")
} | {"cupy.cuda.runtime.memGetInfo", "numba.cuda.current_context.get_memory_info"})
# What a loop's body calls that tells what the loop is (LoopInfo.marks, queries.trains).
LOOP_INTERACTIVE = "interactive"  # waits for a person every iteration: no hot path
_WAITS_ON_USER = frozenset({"input", "getpass.getpass", "sys.stdin.readline", "sys.stdin.read"})
_CAPTURE_BEGIN = frozenset({"begin_capture", "capture_begin", "begin_building"})  # CuPy, torch, cuda.core
_CAPTURE_END = frozenset({"end_capture", "capture_end", "end_building"})
_GRAPH_LAUNCHES = frozenset({"launch", "replay"})  # CuPy and cuda.core Graph.launch, torch CUDAGraph.replay
_POINTER_ATTRS = frozenset({"ctypes", "data", "ptr", "T", "mT", "real", "imag", "base"})


class Args:
    """Evaluated call arguments, addressable by position or keyword."""

    __slots__ = ("positional", "keywords", "values", "spread")

    def __init__(self, positional, keywords, values, spread=None) -> None:
        self.positional: list[cst.BaseExpression] = positional
        self.keywords: dict[str, cst.BaseExpression] = keywords
        self.values: dict[int, Value] = values
        # Keyword arguments a `**kwargs` of known keys gives (`dict(non_blocking=True)`).
        self.spread: dict[str, Value] = spread or {}

    def expr(self, arg: Optional[Arg]) -> Optional[cst.BaseExpression]:
        if arg is None:
            return None
        if arg.kw is not None and arg.kw in self.keywords:
            return self.keywords[arg.kw]
        if arg.pos is not None and arg.pos < len(self.positional):
            return self.positional[arg.pos]
        return None

    def has(self, arg: Optional[Arg]) -> bool:
        return self.expr(arg) is not None or (arg is not None and arg.kw in self.spread)

    def value(self, arg: Optional[Arg]) -> Value:
        expr = self.expr(arg)
        if expr is None and arg is not None and arg.kw in self.spread:
            return self.spread[arg.kw]
        return UNKNOWN if expr is None else self.values.get(id(expr), UNKNOWN)

    def all(self) -> list[Value]:
        return list(self.values.values())

    def pairs(self) -> list[tuple[cst.BaseExpression, Value]]:
        exprs = list(self.positional) + list(self.keywords.values())
        return [(e, self.values.get(id(e), UNKNOWN)) for e in exprs]

    def pair(self, arg: Optional[Arg]) -> tuple[Optional[cst.BaseExpression], Value]:
        return self.expr(arg), self.value(arg)


class _Batch:
    """What iterating a DataLoader yields: a batch (tuple, dict or tensor) of one memory kind."""

    __slots__ = ("batch",)

    def __init__(self, batch: Buffer) -> None:
        self.batch = batch

    def item(self, index) -> Value:
        return self.batch

    def __eq__(self, other) -> bool:
        return isinstance(other, _Batch) and other.batch == self.batch

    def __hash__(self) -> int:
        return hash(self.batch)


class _Capture:
    """`with torch.cuda.graph(g):` - the body is captured, not run."""

    __slots__ = ()


class _AutoSync:
    __slots__ = ("stream",)

    def __init__(self, stream: Stream) -> None:
        self.stream = stream


class _Pinned:
    __slots__ = ("names",)

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names


def _const_bool(value: Value) -> Optional[bool]:
    if isinstance(value, Const) and isinstance(value.value, (bool, int)) and value.value in (0, 1):
        return bool(value.value)
    return None


def _is_cuda_target(value: Value) -> bool:
    if isinstance(value, Const) and isinstance(value.value, str):
        return value.value.split(":")[0] == "cuda"
    if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
        return True  # .to(0) / .cuda(0): a CUDA device index
    if isinstance(value, Device):
        return value.cuda
    return False


def _is_cpu_target(value: Value) -> bool:
    if isinstance(value, Const) and isinstance(value.value, str):
        return value.value == "cpu"
    if isinstance(value, Device):
        return not value.cuda
    return False


def _blocks(fact: Fact, non_blocking: Optional[bool]) -> Optional[bool]:
    if fact.blocking == BLOCK_ALWAYS:
        return True
    return None if non_blocking is None else not non_blocking


def _direction(value: Value, expr: Optional[cst.BaseExpression]) -> OpKind:
    name = value.qualname if isinstance(value, QualRef) else ""
    if isinstance(value, Const) and isinstance(value.value, int):
        return {1: OpKind.COPY_H2D, 2: OpKind.COPY_D2H, 3: OpKind.COPY_D2D}.get(value.value, OpKind.COPY)
    if name.endswith("HostToDevice"):
        return OpKind.COPY_H2D
    if name.endswith("DeviceToHost"):
        return OpKind.COPY_D2H
    if name.endswith("DeviceToDevice"):
        return OpKind.COPY_D2D
    return OpKind.COPY


def periodic_test(test: cst.BaseExpression) -> bool:
    """`step % N == 0` (possibly inside `and`/`or`/`not`)."""
    if isinstance(test, cst.UnaryOperation):
        return periodic_test(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return periodic_test(test.left) or periodic_test(test.right)
    if isinstance(test, cst.Comparison):
        return has_modulo(test.left) or any(has_modulo(c.comparator) for c in test.comparisons)
    return has_modulo(test)


def has_modulo(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.BinaryOperation) and (isinstance(expr.operator, cst.Modulo) or has_modulo(expr.left))


def dotted_name(expr: cst.BaseExpression) -> str:
    """`self.a.b` for a chain of names and attributes; "" for anything else."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        base = dotted_name(expr.value)
        return f"{base}.{expr.attr.value}" if base else ""
    return ""


def nonempty_test(test: cst.BaseExpression) -> bool:
    """`len(x) > 0` or `len(x) >= 1` on a name or an attribute: the truth test of `x`."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    left, (comparison,) = test.left, test.comparisons
    bound = comparison.comparator
    return isinstance(left, cst.Call) and isinstance(left.func, cst.Name) and left.func.value == "len" \
        and len(left.args) == 1 and left.args[0].keyword is None and not left.args[0].star \
        and isinstance(left.args[0].value, (cst.Name, cst.Attribute)) and isinstance(bound, cst.Integer) \
        and ((isinstance(comparison.operator, cst.GreaterThan) and bound.value == "0")
             or (isinstance(comparison.operator, cst.GreaterThanEqual) and bound.value == "1"))


def rare_test(test: cst.BaseExpression) -> bool:
    """Does this `if` test make its body run only now and then (periodic, one-off, flag)?"""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return rare_test(test.expression)
    if isinstance(test, (cst.Name, cst.Attribute)):
        return True  # a flag: `if debug:`, `if self.verbose:`
    if isinstance(test, cst.BooleanOperation):
        return rare_test(test.left) or rare_test(test.right)
    if isinstance(test, cst.Comparison):
        if has_modulo(test.left) or any(has_modulo(c.comparator) for c in test.comparisons):
            return True  # every N steps
        return all(isinstance(c.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)) for c in test.comparisons)
    return has_modulo(test)
