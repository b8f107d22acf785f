"""The walk's handlers for the nodes that matter to the index: calls, definitions, loops,
tests, `try`, assignments to `self`, imports. Every other node is walked through its fields
(syntax/walk.py). A handler visits its node's parts in source order, each under the nesting
it runs in: a `for` loop's iterable outside the loop, a `while` test inside it, the first
iterable of a comprehension outside it and everything else inside.
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from streamlint.model.syntax.names import code, dotted
from streamlint.model.syntax.types import CallSite, ImportIndex, Nesting, Param, ParamKind
from streamlint.model.syntax.walk import ClassRecord, DefHeader, Frame, Handler, Walk

# ---- expressions -----------------------------------------------------------------------------


def visit_call(walk: Walk, node: cst.Call) -> None:
    site = walk.site("call")
    callee = dotted(node.func) or ""
    positional = 0
    keywords: list[str] = []
    for arg in node.args:
        if arg.keyword is not None:
            keywords.append(arg.keyword.value)
        elif arg.star == "**":
            keywords.append("**")
        else:
            positional += 1
    root = callee.partition(".")[0]
    walk.frame.calls.append(CallSite(site, callee, root, positional, tuple(keywords), walk.nesting))
    walk.visit(node.func)
    for arg in node.args:
        walk.visit(arg.value)


def visit_attribute(walk: Walk, node: cst.Attribute) -> None:
    value = node.value
    if type(value) is cst.Name:
        walk.dotted_roots.add((value.value, node.attr.value))
        if value.value == walk.frame.receiver:
            walk.frame.reads.add(node.attr.value)
        return
    walk.visit(value)


def visit_if_exp(walk: Walk, node: cst.IfExp) -> None:
    branch = walk.under_test(walk.nesting)
    walk.visit_under(branch, node.body)
    walk.visit(node.test)
    walk.visit_under(branch, node.orelse)


def visit_lambda(walk: Walk, node: cst.Lambda) -> None:
    visit_params(walk, node.params)
    frame, n = walk.frame, walk.nesting
    receiver = frame.receiver
    if receiver and receiver in {p.name.value for _, p in param_nodes(node.params)}:
        frame.receiver = ""  # the lambda's own parameter hides the method's
    walk.visit_under(Nesting(n.loops, n.tests, n.in_try, n.in_except, True), node.body)
    frame.receiver = receiver


def visit_comprehension(walk: Walk, node: cst.BaseComp) -> None:
    # Plan every clause's nesting first: the element is written first but runs innermost.
    nesting = walk.nesting
    plan: list[tuple[cst.CompFor, Nesting, list[Nesting]]] = []
    clause: Optional[cst.CompFor] = node.for_in
    while clause is not None:
        outside = nesting
        nesting = walk.in_loop(nesting)
        tests = []
        for _ in clause.ifs:
            tests.append(nesting)  # a condition runs in the loop, after the conditions before it
            nesting = walk.under_test(nesting)
        plan.append((clause, outside, tests))
        clause = clause.inner_for_in
    if isinstance(node, cst.DictComp):
        walk.visit_under(nesting, [node.key, node.value])
    else:
        walk.visit_under(nesting, node.elt)
    for clause, outside, tests in plan:
        outer, walk.nesting = walk.nesting, outside
        visit_target(walk, clause.target)
        walk.visit(clause.iter)
        walk.nesting = outer
        for condition, inside in zip(clause.ifs, tests):
            walk.visit_under(inside, condition.test)


def visit_yield(walk: Walk, node: cst.Yield) -> None:
    if not walk.nesting.in_lambda:
        walk.frame.generator = True
    walk.visit_maybe(node.value)


def visit_nothing(walk: Walk, node: cst.CSTNode) -> None:
    """Leaves: names and literals hold no code to index."""


# ---- statements ------------------------------------------------------------------------------


def visit_if(walk: Walk, node: cst.If) -> None:
    walk.visit(node.test)
    branch = walk.under_test(walk.nesting)
    walk.visit_under(branch, node.body)
    walk.visit_under(branch, node.orelse)  # `elif` is an `If` here: its own test adds to this one


def visit_while(walk: Walk, node: cst.While) -> None:
    n = walk.nesting
    looping = walk.in_loop(n)
    walk.visit_under(looping, node.test)  # the test runs on every iteration
    body = walk.under_test(looping)
    walk.visit_under(body, node.body)
    walk.visit_under(Nesting(n.loops, body.tests, n.in_try, n.in_except, n.in_lambda), node.orelse)


def visit_for(walk: Walk, node: cst.For) -> None:
    visit_target(walk, node.target)
    walk.visit(node.iter)  # evaluated once, before the loop
    walk.visit_under(walk.in_loop(walk.nesting), node.body)
    walk.visit_maybe(node.orelse)


def visit_try(walk: Walk, node: cst.Try | cst.TryStar) -> None:
    n = walk.nesting
    guarded = Nesting(n.loops, n.tests, True, n.in_except, n.in_lambda) if node.handlers else n
    walk.visit_under(guarded, node.body)
    handling = Nesting(n.loops, n.tests, n.in_try, True, n.in_lambda)
    for handler in node.handlers:
        walk.visit_maybe(handler.type)
        if handler.name is not None:
            visit_target(walk, handler.name.name)
        walk.visit_under(handling, handler.body)
    walk.visit_maybe(node.orelse)
    walk.visit_maybe(node.finalbody)


def visit_match(walk: Walk, node: cst.Match) -> None:
    walk.visit(node.subject)
    case = walk.under_test(walk.nesting)
    for branch in node.cases:
        walk.visit_under(case, branch.pattern)
        walk.visit_under(case, branch.guard)
        walk.visit_under(case, branch.body)


def visit_return(walk: Walk, node: cst.Return) -> None:
    if node.value is not None:
        walk.frame.returns += 1
        walk.visit(node.value)


# ---- stores ----------------------------------------------------------------------------------


def receiver_attribute(walk: Walk, node: cst.CSTNode) -> Optional[str]:
    """`a` when `node` is `self.a` for the current function's receiver `self`."""
    if type(node) is cst.Attribute and type(node.value) is cst.Name:
        receiver = walk.frame.receiver
        if receiver and node.value.value == receiver:
            return node.attr.value
    return None


def visit_target(walk: Walk, node: cst.CSTNode, also_read: bool = False) -> None:
    """An assignment target: `self.a` stores `a`; anything else is read as code."""
    if type(node) is cst.Tuple or type(node) is cst.List:
        for element in node.elements:
            visit_target(walk, element.value, also_read)
        return
    if type(node) is cst.StarredElement:
        visit_target(walk, node.value, also_read)
        return
    stored = receiver_attribute(walk, node)
    if stored is None:
        walk.visit(node)
        return
    walk.frame.stores.add(stored)
    if also_read:
        walk.frame.reads.add(stored)


def visit_assign(walk: Walk, node: cst.Assign) -> None:
    for target in node.targets:
        visit_target(walk, target.target)
    walk.visit(node.value)


def visit_aug_assign(walk: Walk, node: cst.AugAssign) -> None:
    visit_target(walk, node.target, also_read=True)
    walk.visit(node.value)


def visit_ann_assign(walk: Walk, node: cst.AnnAssign) -> None:
    if node.value is not None:
        visit_target(walk, node.target)
    elif receiver_attribute(walk, node.target) is None:  # `self.a: int` declares, neither reads nor stores
        walk.visit(node.target)
    walk.visit(node.annotation)
    walk.visit_maybe(node.value)


def visit_with(walk: Walk, node: cst.With) -> None:
    for item in node.items:
        walk.visit(item.item)
        if item.asname is not None:
            visit_target(walk, item.asname.name)
    walk.visit(node.body)


# ---- imports ---------------------------------------------------------------------------------


def visit_import(walk: Walk, node: cst.Import) -> None:
    for alias in node.names:
        module = dotted(alias.name) or ""
        if alias.asname is not None:
            bound = _bound_name(alias.asname)
            walk.bindings[bound] = module
        else:
            bound = module.partition(".")[0]  # `import a.b` binds `a`
            walk.bindings[bound] = bound
        walk.imports.append(ImportIndex(module, None, bound, 0, walk.site("import")))


def visit_import_from(walk: Walk, node: cst.ImportFrom) -> None:
    level = len(node.relative)
    module = dotted(node.module) if node.module is not None else ""
    if isinstance(node.names, cst.ImportStar):
        walk.imports.append(ImportIndex(module or "", "*", "*", level, walk.site("import")))
        return
    source = "." * level + (f"{module}." if module else "")
    for alias in node.names:
        name = dotted(alias.name) or ""
        bound = _bound_name(alias.asname) if alias.asname is not None else name
        walk.bindings[bound] = source + name
        walk.imports.append(ImportIndex(module or "", name, bound, level, walk.site("import")))


def _bound_name(asname: cst.AsName) -> str:
    return asname.name.value if isinstance(asname.name, cst.Name) else ""


# ---- definitions -----------------------------------------------------------------------------


def param_nodes(params: cst.Parameters) -> Iterator[tuple[ParamKind, cst.Param]]:
    """The parameters in source order, with their kinds."""
    for param in params.posonly_params:
        yield ParamKind.POSITIONAL_ONLY, param
    for param in params.params:
        yield ParamKind.POSITIONAL, param
    if isinstance(params.star_arg, cst.Param):
        yield ParamKind.VAR_POSITIONAL, params.star_arg
    for param in params.kwonly_params:
        yield ParamKind.KEYWORD_ONLY, param
    if params.star_kwarg is not None:
        yield ParamKind.VAR_KEYWORD, params.star_kwarg


def visit_params(walk: Walk, params: cst.Parameters) -> None:
    """Annotations and defaults run where the function is defined."""
    for _, param in param_nodes(params):
        if param.annotation is not None:
            walk.visit(param.annotation.annotation)
        walk.visit_maybe(param.default)


def params_of(module: cst.Module, params: cst.Parameters) -> tuple[Param, ...]:
    return tuple(
        Param(
            name=param.name.value,
            kind=kind,
            annotation=code(module, param.annotation.annotation) if param.annotation is not None else None,
            default=code(module, param.default) if param.default is not None else None,
        )
        for kind, param in param_nodes(params)
    )


def decorator_names(decorators: tuple[cst.Decorator, ...] | list[cst.Decorator]) -> tuple[str, ...]:
    """`torch.no_grad` for `@torch.no_grad()` and for `@torch.no_grad`; "" when not a name."""
    names = []
    for decorator in decorators:
        expression = decorator.decorator
        if isinstance(expression, cst.Call):
            expression = expression.func
        names.append(dotted(expression) or "")
    return tuple(names)


def base_name(arg: cst.Arg) -> str:
    """`nn.Module` for `nn.Module`, `Generic` for `Generic[T]`; "" when not a name."""
    value = arg.value
    if isinstance(value, cst.Subscript):
        value = value.value
    return (dotted(value) or "") if not arg.star else ""


def _receiver(walk: Walk, params: tuple[Param, ...], decorators: tuple[str, ...], method: bool) -> str:
    """The name `self` has in this function's body."""
    if method:
        if "staticmethod" in decorators:
            return ""
        first = params[0] if params else None
        positional = first is not None and first.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL)
        return first.name if positional else ""
    receiver = walk.frame.receiver  # a closure sees its method's `self`, unless it names its own
    return "" if any(p.name == receiver for p in params) else receiver


def visit_function(walk: Walk, node: cst.FunctionDef) -> None:
    # Decorators, annotations and defaults run where the function is defined.
    walk.visit_all(node.decorators)
    visit_params(walk, node.params)
    walk.visit_maybe(node.returns)
    klass, name = walk.klass, node.name.value
    qualname = walk.prefix + name
    params, decorators = params_of(walk.module, node.params), decorator_names(node.decorators)
    class_qualname = klass.header[0] if klass is not None else None
    header = DefHeader(name, walk.site("def"), params, decorators, class_qualname, node.asynchronous is not None)
    if klass is not None:
        klass.methods.append(name)
    else:
        walk.frame.nested.append(qualname)
    slot = len(walk.functions)  # listed in source order: the slot is taken before the body's own definitions
    walk.functions.append(None)
    outer = (walk.frame, walk.nesting, walk.prefix, walk.klass)
    frame = walk.frame = Frame(qualname, _receiver(walk, params, decorators, klass is not None))
    walk.nesting, walk.prefix, walk.klass = Nesting(), qualname + ".<locals>.", None
    walk.visit(node.body)
    walk.frame, walk.nesting, walk.prefix, walk.klass = outer
    walk.functions[slot] = frame.index(header)
    if klass is not None and frame.stores:
        klass.stores.append((name, tuple(sorted(frame.stores))))


def visit_class(walk: Walk, node: cst.ClassDef) -> None:
    walk.visit_all(node.decorators)
    for arg in (*node.bases, *node.keywords):
        walk.visit(arg.value)
    name = node.name.value
    qualname = walk.prefix + name
    bases = tuple(base_name(arg) for arg in node.bases)
    record = ClassRecord(qualname, name, walk.site("def"), bases, decorator_names(node.decorators))
    walk.classes.append(record)
    outer = (walk.prefix, walk.klass)
    walk.prefix, walk.klass = qualname + ".", record
    walk.visit(node.body)  # the class body runs in the enclosing function
    walk.prefix, walk.klass = outer


HANDLERS: dict[type, Handler] = {
    cst.Call: visit_call,
    cst.Attribute: visit_attribute,
    cst.IfExp: visit_if_exp,
    cst.Lambda: visit_lambda,
    cst.ListComp: visit_comprehension,
    cst.SetComp: visit_comprehension,
    cst.GeneratorExp: visit_comprehension,
    cst.DictComp: visit_comprehension,
    cst.Yield: visit_yield,
    cst.If: visit_if,
    cst.While: visit_while,
    cst.For: visit_for,
    cst.Try: visit_try,
    cst.TryStar: visit_try,
    cst.Match: visit_match,
    cst.Return: visit_return,
    cst.Assign: visit_assign,
    cst.AugAssign: visit_aug_assign,
    cst.AnnAssign: visit_ann_assign,
    cst.With: visit_with,
    cst.Import: visit_import,
    cst.ImportFrom: visit_import_from,
    cst.FunctionDef: visit_function,
    cst.ClassDef: visit_class,
    **{leaf: visit_nothing for leaf in (
        cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis, cst.Pass,
        cst.Break, cst.Continue, cst.Global, cst.Nonlocal,
    )},
}


def accepts(params: cst.Parameters, call: cst.Call, bound: bool) -> bool:
    """Whether a def with these parameters can take the call's arguments (its arity: the count of
    positional arguments, the keyword names, the parameters without defaults); a call that
    unpacks `*xs` or `**kw` may take any. `bound`: the def's first parameter is the receiver."""
    if any(arg.star for arg in call.args):
        return True
    kinds = list(param_nodes(params))[1 if bound else 0:]
    given = sum(1 for arg in call.args if arg.keyword is None)
    named = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    positional = [p for kind, p in kinds if kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL)]
    by_name = {p.name.value for kind, p in kinds if kind in (ParamKind.POSITIONAL, ParamKind.KEYWORD_ONLY)}
    starred = {kind for kind, _ in kinds} & {ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD}
    if given > len(positional) and ParamKind.VAR_POSITIONAL not in starred:
        return False
    if ParamKind.VAR_KEYWORD not in starred and not named <= by_name - {p.name.value for p in positional[:given]}:
        return False
    unfilled = [p for kind, p in kinds if kind is not ParamKind.VAR_POSITIONAL and kind is not ParamKind.VAR_KEYWORD
                and p.default is None and p.name.value not in named]
    return all(p in positional[:given] for p in unfilled)
