"""What a test's shape says about how often its branch runs (a syntax-layer question)."""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

import libcst as cst

from streamlint.model.syntax.children import SCOPES, child_nodes, walk
from streamlint.model.syntax.names import dotted
from streamlint.model.syntax.purpose import TRAINING_STEP_METHODS, calls_in, param_names, read_parts, trains, unpacked


def rare_test(test: cst.BaseExpression, periodic: bool = False) -> bool:
    """Does the test run its body only now and then (every N steps; unless `periodic`, once or under a flag)?"""
    if isinstance(test, cst.UnaryOperation) and (periodic or isinstance(test.operator, cst.Not)):
        return rare_test(test.expression, periodic)
    if isinstance(test, (cst.Name, cst.Attribute)):
        return not periodic  # a flag: `if debug:`, `if self.verbose:`
    if isinstance(test, cst.BooleanOperation):
        return rare_test(test.left, periodic) or rare_test(test.right, periodic)
    if isinstance(test, cst.Comparison):
        if script_entry(test):
            return False  # the script run as a program: its body runs once per run, every time
        if has_modulo(test.left) or any(has_modulo(c.comparator) for c in test.comparisons):
            return True  # every N steps
        return not periodic and all(isinstance(c.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot))
                                    for c in test.comparisons)
    return has_modulo(test)


def script_entry(test: cst.BaseExpression) -> bool:
    """`__name__ == "__main__"`: the module run as a script (the checked entry point), not a now-and-then test."""
    return (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)
            and {dotted(test.left), dotted(test.comparisons[0].comparator)} & {"__name__"} != set()
            and any(isinstance(side, cst.SimpleString) and side.raw_value == "__main__"
                    for side in (test.left, test.comparisons[0].comparator)))


def settled_flag(test: cst.BaseExpression, settled: frozenset[str]) -> bool:
    """`if processors:`, `if not use_cache:`: the truth of a name the function binds once outside any loop (or a
    parameter it never rebinds): the same side on every pass of a loop in the call, so a block under it runs on every
    pass or on none; no flag that turns a block on now and then."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return settled_flag(test.expression, settled)
    return isinstance(test, (cst.Name, cst.Attribute)) and dotted(test) in settled


def rare_unless_settled(test: cst.BaseExpression, settled: frozenset[str], compared: frozenset[str] = frozenset()) -> bool:
    """`rare_test`, where a part that is a settled flag (a name bound once, a latch: `self.is_initialized`) turns
    nothing on now and then: `if self.is_initialized and self.t1 < n:` runs as often as its other part allows; nor does
    a comparison of `compared` names (locals bound once: settings, not a parameter each call may bind anew) with
    written constants."""
    if isinstance(test, cst.BooleanOperation):
        return rare_unless_settled(test.left, settled, compared) or rare_unless_settled(test.right, settled, compared)
    return rare_test(test) and not settled_flag(test, settled) and not settled_comparison(test, compared)


def settled_comparison(test: cst.BaseExpression, settled: frozenset[str]) -> bool:
    """`if n_rand is not None:`, `if mode == "train":`: a comparison of settled names with each other or with written
    constants takes the same side on every pass, as a settled flag does (a setting, not a now-and-then test)."""
    if not isinstance(test, cst.Comparison):
        return False
    operands = [test.left, *(c.comparator for c in test.comparisons)]
    named = [o for o in operands if isinstance(o, (cst.Name, cst.Attribute)) and dotted(o) in settled]
    return bool(named) and all(o in named or written_constant(o) for o in operands)


def latch_sides(test: cst.BaseExpression, latched: frozenset[str]) -> tuple[bool, bool]:
    """(body, else): the side that runs only while a latch is unset (`if not self.ready:`, `if not self.ready and
    n == warmup:`, the `else` of `if self.ready:`): before the latch is set, once, not on every call."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return latch_sides(test.left, latched)[0] or latch_sides(test.right, latched)[0], False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return isinstance(test.expression, cst.Attribute) and dotted(test.expression) in latched, False
    return False, isinstance(test, cst.Attribute) and dotted(test) in latched


def first_passes(test: cst.BaseExpression, counters: list[str]) -> bool:
    """`if i < 25:` (`25 > i`, `<=`): a loop's counter below a written constant runs the body on its first passes
    only (a warm-up, a sample of a long run), however long the loop runs."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    left, (operator, right) = test.left, (test.comparisons[0].operator, test.comparisons[0].comparator)
    if isinstance(operator, (cst.GreaterThan, cst.GreaterThanEqual)):
        left, right = right, left
    elif not isinstance(operator, (cst.LessThan, cst.LessThanEqual)):
        return False
    return isinstance(left, cst.Name) and left.value in counters and written_constant(right)


def listed_passes(test: cst.BaseExpression, counters: "list[str] | frozenset[str]") -> bool:
    """`if step in [i - 1 for i in cfg.eval_steps]:`, `if self.global_step in upsample_steps:`: a counter (a loop's,
    or one the function steps by a constant) among listed values runs the body on those passes only (an evaluation,
    a save or an upsampling at chosen steps), however long the loop runs."""
    if isinstance(test, cst.BooleanOperation):
        return listed_passes(test.left, counters) or listed_passes(test.right, counters)
    return (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.In)
            and dotted(test.left) in counters)


def stepped_counters(nodes: list) -> frozenset[str]:
    """The names and attributes a function steps by a written integer (`self.global_step += 1`): step counters."""
    return frozenset(name for node in nodes if type(node) is cst.AugAssign and isinstance(node.operator, cst.AddAssign)
                     and isinstance(node.value, cst.Integer) and (name := dotted(node.target)) is not None)


def fills_on_miss(node: cst.If) -> tuple[bool, bool]:
    """(body, else): the side of a membership test that runs when the key is missing and stores it: once per key."""
    test = node.test
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False, False
    operator, container = test.comparisons[0].operator, test.comparisons[0].comparator
    if _unset_then_set(test, node.body):
        return True, False
    if isinstance(operator, cst.NotIn):
        return _stores_into(node.body, container), False
    if isinstance(operator, cst.In) and isinstance(node.orelse, cst.Else):
        return False, _stores_into(node.orelse.body, container)
    return False, False


def refills_on_change(node: cst.If, after: Sequence[cst.CSTNode]) -> tuple[bool, bool]:
    """(body, else): the side that runs when a kept key differs from the one asked for, where the key is then kept
    (`if self.key == key: ... else: compute`, `self.key = key` on that side or after the `if`): once per new key."""
    test = node.test
    parts = [test.left, test.right] if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) \
        else [test]
    for part in parts:
        if not (isinstance(part, cst.Comparison) and len(part.comparisons) == 1):
            continue
        operator, right = part.comparisons[0].operator, part.comparisons[0].comparator
        if not isinstance(operator, (cst.Equal, cst.NotEqual)):
            continue
        miss = node.orelse.body if isinstance(operator, cst.Equal) and isinstance(node.orelse, cst.Else) \
            else node.body if isinstance(operator, cst.NotEqual) else None
        kept = [(part.left, right), (right, part.left)]
        if miss is not None and any(_assigns(block, k, v) for k, v in kept for block in (miss, *after)):
            return isinstance(operator, cst.NotEqual), isinstance(operator, cst.Equal)
    return False, False


def _assigns(block: cst.CSTNode, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """Does the block assign `value` to `target` (`self.key = key`), an attribute or name?"""
    if not isinstance(target, (cst.Attribute, cst.Name)):
        return False
    return any(type(n) is cst.Assign and n.value.deep_equals(value) and any(t.target.deep_equals(target) for t in n.targets)
               for n in walk(block))


def sets_what_it_found_unset(node: cst.If, params: frozenset) -> bool:
    """In a loop, `if best is None: best = loss.item()` of a local (no parameter) that the side sets: the side runs on
    the pass that finds it unset, the first, not on every pass (a lazy initialization of a loop's running value)."""
    test = node.test
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name)
            and isinstance(test.comparisons[0].operator, cst.Is) and isinstance(test.comparisons[0].comparator, cst.Name)
            and test.comparisons[0].comparator.value == "None") or test.left.value in params:
        return False
    name = test.left.value
    return any(type(n) is cst.Assign and any(isinstance(t.target, cst.Name) and t.target.value == name for t in n.targets)
               and not (isinstance(n.value, cst.Name) and n.value.value == "None") for n in walk(node.body))


def _unset_then_set(test: cst.Comparison, body: cst.CSTNode) -> bool:
    """`if self.scales[i] <= 0: ... self.scales[i] = v`, `if self.scale is None: self.scale = v`: a kept value tested
    against a constant that marks it unset, and set by the side that found it so (a lazy initialization)."""
    kept, marker = test.left, test.comparisons[0].comparator
    if not isinstance(test.comparisons[0].operator, (cst.Is, cst.Equal, cst.LessThanEqual, cst.LessThan)) \
            or not isinstance(kept, (cst.Attribute, cst.Subscript)) \
            or not (isinstance(marker, (cst.Integer, cst.Float)) or (isinstance(marker, cst.Name) and marker.value == "None")):
        return False
    return any(type(n) is cst.Assign and any(t.target.deep_equals(kept) for t in n.targets) for n in walk(body))


def _stores_into(block: cst.CSTNode, container: cst.BaseExpression) -> bool:
    """Does the block assign an item of `container` (`container[k] = ...`)?"""
    return any(type(n) is cst.Assign and any(isinstance(t.target, cst.Subscript) and t.target.value.deep_equals(container)
                                             for t in n.targets) for n in walk(block))


def ends_in_raise(block: cst.BaseSuite) -> bool:
    """A branch that ends by raising: an error path, after which the function does not go on."""
    return _ends_with(block, (cst.Raise,))


def empty_test(test: cst.BaseExpression) -> bool:
    """`if not x.shape[0]:`, `if len(xs) == 0:`, `if not a.size or not b.shape[1]:`: a test that something is empty (an
    edge case: the side it guards is the rare one)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return empty_test(test.left) and empty_test(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _a_size(test.expression)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        zero = isinstance(target.comparator, cst.Integer) and target.comparator.value == "0"
        return zero and isinstance(target.operator, (cst.Equal, cst.LessThanEqual)) and _a_size(test.left)
    return False


def _a_size(expr: cst.BaseExpression) -> bool:
    """`x.shape[i]`, `len(x)`, `x.size`, `x.numel()`, `x.nelement()`: a count of elements."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute):
        return expr.value.attr.value == "shape"
    if isinstance(expr, cst.Call):
        func = expr.func
        return (isinstance(func, cst.Name) and func.value == "len") or (
            isinstance(func, cst.Attribute) and func.attr.value in ("numel", "nelement") and not expr.args)
    return isinstance(expr, cst.Attribute) and expr.attr.value == "size"


def ends_the_loop(block: cst.BaseSuite) -> bool:
    """A branch that ends by leaving the loop (`break`, `return`): every pass that goes on runs the rest."""
    return _ends_with(block, (cst.Break, cst.Return))


def _ends_with(block: cst.BaseSuite, kinds: tuple) -> bool:
    last = block.body[-1] if block.body else None
    return isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, kinds) for s in last.body)


def has_modulo(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.BinaryOperation) and (isinstance(expr.operator, cst.Modulo) or has_modulo(expr.left))


def written_constant(expr: cst.BaseExpression) -> bool:
    """A constant written in the source (`0`, `"ring"`, `-1`, `True`, `None`): the same on every run."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return written_constant(expr.expression)
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    return isinstance(expr, cst.Name) and expr.value in ("True", "False", "None")


def called_on_every_side(node: cst.If) -> tuple[list[cst.Call], list[cst.Call]]:
    """(body's, else's) calls of a callee both sides of an `if`/`else` call: it runs whichever side is taken."""
    if not isinstance(node.orelse, cst.Else):
        return [], []
    body, other = _statement_calls(node.body), _statement_calls(node.orelse.body)
    return [c for c in body if any(c.func.deep_equals(o.func) for o in other)], \
        [o for o in other if any(o.func.deep_equals(c.func) for c in body)]


def negated(test: cst.BaseExpression) -> bool:
    """`not x`, `x != c`, `x is not None`: a rare test whose body is the usual side."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return True
    return isinstance(test, cst.Comparison) and any(
        isinstance(c.operator, (cst.NotEqual, cst.IsNot, cst.NotIn)) for c in test.comparisons)


def _statement_calls(block: cst.BaseSuite) -> list[cst.Call]:
    """Calls that are a statement of the block, or the value it assigns or returns."""
    return [s.value for line in getattr(block, "body", ()) if isinstance(line, cst.SimpleStatementLine)
            for s in line.body if isinstance(getattr(s, "value", None), cst.Call)]


def tested_value(test: cst.BaseExpression, fixed: frozenset[str]) -> Optional[tuple[str, bool]]:
    """(what is tested, negated) of a test of a fixed name or `self.attr`: two such tests take sides together."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = tested_value(test.expression, fixed)
        return (inner[0], not inner[1]) if inner is not None else None
    name = _value_name(test, fixed)
    if name is not None:
        return name, False
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    name, (operator, constant) = _value_name(test.left, fixed), (test.comparisons[0].operator, test.comparisons[0].comparator)
    if name is None or not written_constant(constant):
        return None
    spelled, negation = _COMPARED.get(type(operator), (None, False))
    return (f"{name}{spelled}{cst.Module([]).code_for_node(constant)}", negation) if spelled else None


# How a comparison of a value with a constant is spelled, and whether it is negated.
_COMPARED = {cst.Equal: ("==", False), cst.NotEqual: ("==", True), cst.Is: (" is ", False), cst.IsNot: (" is ", True)}


def _value_name(expr: cst.BaseExpression, fixed: frozenset[str]) -> Optional[str]:
    """A name of `fixed`, or `self.<attr>` spelled "self.attr"."""
    if isinstance(expr, cst.Name):
        return expr.value if expr.value in fixed else None
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return f"self.{expr.attr.value}"
    return None


def never_rebound(function: cst.FunctionDef, own: Optional[list] = None) -> frozenset[str]:
    """The parameters the body never binds again; `own`: its nodes outside nested definitions, when read already."""
    names = param_names(function)
    bound: set[str] = set()
    todo: list = [function.body] if own is None else []
    for node in own or ():
        bound.update(_binds(node))
        if type(node) in SCOPES:  # (no subclasses)
            todo.extend(child_nodes(node))
    return frozenset(names - bound - _bound_in(todo))


def fill_cursors(own: list) -> frozenset[str]:
    """The local names a function counts a fill level with (D-30): set to 0 and otherwise only raised by `+=`
    (`offset = 0`, then `offset += n` per item), never a loop's target nor rebound any other way."""
    zeroed, raised, other = set(), set(), set()
    for node in own:
        kind = type(node)
        if kind is cst.Assign:
            zero = type(node.value) is cst.Integer and node.value.value == "0"
            for target in node.targets:
                (zeroed if zero and type(target.target) is cst.Name else other).update(_target_names(target.target))
        elif kind is cst.AugAssign and type(node.target) is cst.Name:
            (raised if type(node.operator) is cst.AddAssign else other).add(node.target.value)
        elif kind in _BINDS and kind is not cst.AssignTarget:
            other.update(_BINDS[kind](node))
    return frozenset((zeroed & raised) - other)


def loop_bound(own: list) -> frozenset[str]:
    """The names a loop or a comprehension binds per pass (`for d in ...`, `[... for i, x in ...]`): what they
    hold changes from one pass to the next."""
    return frozenset(name for node in own if type(node) in (cst.For, cst.CompFor)
                     for name in _target_names(node.target))


def assigned_once(own: list) -> frozenset[str]:
    """The local names a function binds exactly once, by a plain assignment outside any loop (`buffers = [...]`):
    a closure defined after it sees that value whenever it runs (D-21's cells, beside the parameters)."""
    counts: dict[str, int] = {}
    plain: set[str] = set()
    looped: list = []
    for node in own:
        kind = type(node)
        if kind in (cst.For, cst.While):
            looped.append(node.body)
        for name in _binds(node):
            counts[name] = counts.get(name, 0) + 1
            if kind is cst.AssignTarget or kind is cst.AnnAssign:
                plain.add(name)
    in_loops = _bound_in(looped)
    return frozenset(name for name, n in counts.items() if n == 1 and name in plain and name not in in_loops)


def names_read(function: cst.FunctionDef, among: frozenset[str]) -> frozenset[str]:
    """The names of `among` the function's body reads from the enclosing scope (a closure's free names)."""
    wanted = among - param_names(function)
    return frozenset(n.value for n in walk(function.body, (), read_parts) if type(n) is cst.Name and n.value in wanted)


def _target_names(target: cst.CSTNode) -> Iterator[str]:
    return (t.value for t in unpacked([target]) if type(t) is cst.Name)


# A node type (exact: isinstance on libcst's ABCs is slow) -> the names a node of it binds.
_BINDS = {
    **{kind: lambda n: _target_names(n.target)
       for kind in (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.Del)},
    cst.AsName: lambda n: _target_names(n.name),
    cst.FunctionDef: lambda n: (n.name.value,),
    cst.ClassDef: lambda n: (n.name.value,),
}


def _binds(node: cst.CSTNode) -> Iterator[str]:
    binds = _BINDS.get(type(node))
    return binds(node) if binds is not None else ()


def _bound_in(todo: list) -> set[str]:
    """The names the nodes and every node under them bind."""
    return {name for top in todo for node in walk(top, ()) for name in _binds(node)}


def item_tests(loop: cst.For) -> frozenset[int]:
    """The ids of the loop body's tests of an item against None before it is rebound: data-dependent (row 7.32)."""
    items, found = set(_target_names(loop.target)), set()
    for line in getattr(loop.body, "body", ()):
        if isinstance(line, cst.If) and _none_tested(line.test) in items:
            found.add(id(line.test))
        items -= _bound_in([line])
    return frozenset(found)


def item_guards(loop: cst.For) -> frozenset[int]:
    """The ids of the tests of the loop body's own `if` statements that read the item the pass works on (a name the
    loop binds, or one the pass derived from it before the test) and not the loop's counter (`range`'s number,
    `enumerate`'s count): which passes such a guard lets through depends on the data, on every call (row 7.59:
    `if not is_valid(x): continue`)."""
    counter = _count_name(loop)
    items, found = set(_target_names(loop.target)) - {counter}, set()
    for line in getattr(loop.body, "body", ()):
        if isinstance(line, cst.If):
            read = _names_in(line.test)
            if read & items and counter not in read:
                found.add(id(line.test))
        for statement in getattr(line, "body", ()) if isinstance(line, cst.SimpleStatementLine) else ():
            if isinstance(statement, cst.Assign):
                bound = {name for target in statement.targets for name in _target_names(target.target)}
                items = items | bound if _names_in(statement.value) & items else items - bound
        if not isinstance(line, cst.SimpleStatementLine):
            items -= _bound_in([line])
    return frozenset(found)


def _count_name(loop: cst.For) -> str:
    """The name that counts the passes: `range(...)`'s target, `enumerate(...)`'s first name; "" for none."""
    call = loop.iter.func.value if isinstance(loop.iter, cst.Call) and isinstance(loop.iter.func, cst.Name) else ""
    if call == "range" and isinstance(loop.target, cst.Name):
        return loop.target.value
    if call == "enumerate" and isinstance(loop.target, cst.Tuple) and isinstance(loop.target.elements[0].value, cst.Name):
        return loop.target.elements[0].value.value
    return ""


def _names_in(expr: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(expr, ()) if type(n) is cst.Name}


def none_tested_names(function: cst.CSTNode) -> frozenset[str]:
    """The names the function's body compares with None (`if t0 is None:`, `s if s is not None else d`)."""
    return frozenset(name for node in walk(function, ()) if type(node) is cst.Comparison
                     and (name := _none_tested(node)) is not None)


def _none_tested(test: cst.BaseExpression) -> Optional[str]:
    """The name `x` of `x is None` / `x is not None` (else None)."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name)):
        return None
    comparison = test.comparisons[0]
    none = isinstance(comparison.comparator, cst.Name) and comparison.comparator.value == "None"
    return test.left.value if none and isinstance(comparison.operator, (cst.Is, cst.IsNot)) else None


def update_boundaries(nodes: list) -> frozenset[int]:
    """The tests (by id) of the `if`s of every N passes inside a training loop that mark its real step, where the
    loop steps the update nowhere else (gradient accumulation): one whose body steps the update (`if (i + 1) %
    accum == 0: opt.step()`), or one that leaves the other passes early before the update (`if (i + 1) % accum:
    continue`). What they let through runs on every optimizer step, not now and then. (A loop that steps its
    optimizer on every pass and a scheduler every N has no such test.)"""
    found = set()
    for loop in nodes:
        if type(loop) not in (cst.For, cst.While) or not trains(loop):
            continue
        tests, inside, skips = [], set(), []
        for node in walk(loop.body):
            if type(node) is not cst.If or not rare_test(node.test, periodic=True):
                continue
            steps = {id(call) for call in calls_in(node.body) if _steps_update(call)}
            if steps:
                tests.append(id(node.test))
                inside |= steps
            elif _skips_pass(node.body):
                skips.append(id(node.test))
        steps = [call for call in calls_in(loop.body) if _steps_update(call)]
        if tests and all(id(call) in inside for call in steps):
            found.update(tests)
        elif skips and steps and not tests:
            found.update(skips)
    return frozenset(found)


def _steps_update(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in TRAINING_STEP_METHODS[1]


def _skips_pass(body: cst.BaseSuite) -> bool:
    """`if ...: continue`: the block ends the pass."""
    last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else \
        body if isinstance(body, cst.SimpleStatementSuite) else None
    small = last.body[-1] if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and last.body \
        else None
    return type(small) is cst.Continue
