"""The functions a module registers as hooks (PyTorch calls them every pass), by qualified name in the module, and the
attributes a function stores on its receiver (D-38's composition) and on objects its parameters reach (D-16)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.syntax.children import walk
from streamlint.model.syntax.names import dotted
from streamlint.model.syntax.purpose import flat_targets, param_names

_PARTIALS = frozenset({"partial", "functools.partial"})


# Where a registration call takes the function it registers: (position, keyword).
FIRST_ARGUMENT = (0, "")


def registered_hooks(tree: cst.Module, registrations: "frozenset[str] | dict[str, tuple[int, str]]",
                     installed: frozenset[str] = frozenset()) -> frozenset[str]:
    """The qualified names of the functions registered by a call `registrations` (the fact table's) names by its last
    name (`m.register_forward_hook(f)`, `threading.Thread(target=f)`): a set takes the function first, a dict says
    where (position, keyword); and of those stored as an attribute `installed` names (`UNet.forward = patched_forward`:
    the function is now that method of the class or object)."""
    if not isinstance(registrations, dict):
        registrations = dict.fromkeys(registrations, FIRST_ARGUMENT)
    registrations = {**registrations, **{f"{INSTALLED}{name}": FIRST_ARGUMENT for name in installed}}
    returns: dict[str, str] = {}  # a function's path -> the closure it returns
    found: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, cst.FunctionDef):
            _scope(statement, statement.name.value, "", {}, returns, registrations, found)
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for member in statement.body.body:
                if isinstance(member, cst.FunctionDef):
                    path = f"{statement.name.value}.{member.name.value}"
                    _scope(member, path, statement.name.value, {}, returns, registrations, found)
    _scope(tree, "", "", {}, returns, registrations, found)
    # a factory's registration ("C.make()") is of the closure it returns ("C.make.hook")
    return frozenset(returns.get(name[:-2], name) if name.endswith("()") else name for name in found)


def _scope(node: "cst.FunctionDef | cst.Module", path: str, cls: str, outer: dict[str, str],
           returns: dict, registrations: frozenset, found: set) -> None:
    """The registrations in one body (its closures in turn), named as it sees names: its closures, its encloser's."""
    nodes = list(walk(node.body if isinstance(node, cst.FunctionDef) else node))
    inner = [n for n in nodes if type(n) is cst.FunctionDef]  # (no subclass: faster than an ABC's isinstance)
    if isinstance(node, cst.Module):  # (the top level: its functions are visited as functions)
        inner = []
    own = {d.name.value: f"{path}.{d.name.value}" for d in inner}
    names = {**outer, **own}
    for n in nodes:
        where = registrations.get(_last_name(n.func)) if type(n) is cst.Call else None
        registered = _argument(n, where) if where is not None else _installed(n, registrations)
        if registered is not None:
            named = _named(registered, cls, names)
            if named is not None:
                found.add(named)
        elif type(n) is cst.Return and isinstance(n.value, cst.Name) and n.value.value in own:
            returns.setdefault(path, own[n.value.value])
    for d in inner:
        _scope(d, own[d.name.value], cls, names, returns, registrations, found)


# The key of an attribute a function stored there becomes a method of (`registered_hooks`'s `installed`).
INSTALLED = "<installed as>."


def _installed(node: cst.CSTNode, registrations: dict) -> Optional[cst.BaseExpression]:
    """The function an assignment stores as an installed attribute (`Module.forward = f`: `f`), else None."""
    if type(node) is not cst.Assign or len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Attribute):
        return None
    return node.value if f"{INSTALLED}{node.targets[0].target.attr.value}" in registrations else None


def _last_name(func: cst.BaseExpression) -> str:
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


def _argument(call: cst.Call, where: tuple[int, str]) -> Optional[cst.BaseExpression]:
    """The argument at (position, keyword) of the call, if written."""
    position, keyword = where
    for arg in call.args:
        if keyword and arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[position] if position is not None and position < len(positional) else None


def _named(expr: cst.BaseExpression, cls: str, names: dict[str, str]) -> Optional[str]:
    if isinstance(expr, cst.Call) and dotted(expr.func) in _PARTIALS and expr.args:
        expr = expr.args[0].value  # `functools.partial(self._fetch, "fwd")`: the function it calls
    factory = isinstance(expr, cst.Call)
    if factory:  # `self._make_hook(name)`: the closure the factory returns
        expr = expr.func
    name = None
    if isinstance(expr, cst.Name):
        name = names.get(expr.value, expr.value)
    elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value in ("self", cls) \
            and cls:
        name = f"{cls}.{expr.attr.value}"  # (`self.m`, or `C.m` of a static method)
    return f"{name}()" if name is not None and factory else name


def stored_attributes(node: "cst.FunctionDef | cst.Module", receiver: str,
                      keeping: frozenset = frozenset()) -> tuple[frozenset[str], frozenset[str]]:
    """(the attributes a method stores into on its receiver, those assigned on objects its other parameters reach).
    On the receiver: `self.a = ...`, `self.a.b = ...`, `self.a[i] = ...` ("a"; plain, annotated or augmented, in a
    tuple target too), an item given by one of the `keeping` methods (`self.a.append(x)`), "*" for `setattr`.
    On the others: "a" of `<p>.<...>.a = ...`, `p` a parameter."""
    if not isinstance(node, cst.FunctionDef):
        return frozenset(), frozenset()
    holders = param_names(node) - {receiver}
    own: set[str] = set()
    held: set[str] = set()
    for statement in walk(node.body):
        if type(statement) is cst.Call:
            func = statement.func
            if type(func) is cst.Name and func.value == "setattr":
                own.add("*")
            elif type(func) is cst.Attribute and func.attr.value in keeping:
                own.update(_on_receiver(func.value, receiver))
            continue
        if type(statement) is cst.AnnAssign and statement.value is None:
            continue  # (an annotation stores nothing)
        for target in flat_targets(statement):
            own.update(_on_receiver(target, receiver))
            if isinstance(target, cst.Attribute) and _root(target.value) in holders:
                held.add(target.attr.value)
    return frozenset(own) if receiver else frozenset(), frozenset(held)


def _root(node: cst.BaseExpression) -> str:
    """`node` of `node.state` (a dotted holder), "" for anything else."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


def _on_receiver(target: cst.BaseExpression, receiver: str) -> set[str]:
    """{"a"} for `self.a`, `self.a.b`, `self.a[i]` (`receiver` is "self"), else nothing."""
    while isinstance(target, (cst.Attribute, cst.Subscript)) and not (
            isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
        target = target.value
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == receiver:
        return {target.attr.value}
    return set()
