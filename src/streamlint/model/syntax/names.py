"""How the syntax queries spell expressions: dotted names as written, attribute names built from text."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.syntax.children import walk


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for a chain of names (parentheses around its parts change nothing), else None."""
    parts: list[str] = []
    while type(node) is cst.Attribute:  # exact types: isinstance on libcst's ABCs is slow
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is not cst.Name:
        return None
    if not parts:
        return node.value  # type: ignore[attr-defined]
    parts.append(node.value)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


def attribute_named(node: cst.BaseExpression) -> Optional[tuple[str, bool]]:
    """A `getattr` argument's name: (literal, True), (a built string's constant prefix, False), or None."""
    if type(node) is cst.SimpleString and not node.prefix.strip("rRuU"):  # type: ignore[attr-defined]
        return node.raw_value, True  # type: ignore[attr-defined]
    if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "format":  # type: ignore
        named = attribute_named(node.func.value)  # type: ignore[attr-defined]
        if named is not None and named[1]:
            return named[0].partition("{")[0], False
    if type(node) is cst.FormattedString and node.parts and type(node.parts[0]) is cst.FormattedStringText:  # type: ignore
        return node.parts[0].value, False  # type: ignore[attr-defined]
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.Add:  # type: ignore[attr-defined]
        named = attribute_named(node.left)  # type: ignore[attr-defined]
        if named is not None and named[1]:
            return named[0], False
    return None


def bound_to_calls(module: cst.Module) -> list[tuple[str, cst.BaseExpression]]:
    """(name, the callee as written) of each top-level `NAME = callee(...)` of a module, in order."""
    found = []
    for statement in module.body:
        assign = statement.body[0] if type(statement) is cst.SimpleStatementLine and statement.body else None
        if type(assign) is cst.Assign and len(assign.targets) == 1 and type(assign.targets[0].target) is cst.Name \
                and type(assign.value) is cst.Call:
            found.append((assign.targets[0].target.value, assign.value.func))
    return found


def kept_under(module: cst.Module, cls: str) -> frozenset[str]:
    """The attributes and names the module keeps instances of the class named `cls` under (`self.frontend =
    Frontend(...)`, `frontend = tracking.Frontend(...)`): what a call of the object through them (`self.frontend()`)
    calls."""
    found = set()
    for node in walk(module, skip=()):
        if type(node) is cst.Assign and type(node.value) is cst.Call:
            name = dotted(node.value.func)
            if name is not None and name.rsplit(".", 1)[-1] == cls:
                found.update(t.target.attr.value if type(t.target) is cst.Attribute else t.target.value
                             for t in node.targets if type(t.target) in (cst.Attribute, cst.Name))
    return frozenset(found)


def returned_names(function: cst.CSTNode) -> frozenset[str]:
    """The names a function returns as they are (`return stream`), its nested functions apart."""
    found: set[str] = set()
    todo = list(getattr(getattr(function, "body", None), "body", ()))
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Return) and isinstance(node.value, cst.Name):
            found.add(node.value.value)
        todo.extend(node.children)
    return frozenset(found)


def rebound_globals(module: cst.Module) -> frozenset[str]:
    """The module-level names a function of the module declares `global` (it may rebind them: an initializer's
    `global _comm; _comm = Communicator(...)`)."""
    found: set[str] = set()
    todo: list = list(module.body)
    while todo:  # (statements only: a `global` is never inside an expression)
        node = todo.pop()
        if isinstance(node, cst.Global):  # (of a one-line suite: `def init(): global _comm`)
            found.update(item.name.value for item in node.names)
            continue
        if isinstance(node, cst.SimpleStatementLine):
            found.update(item.name.value for small in node.body if isinstance(small, cst.Global) for item in small.names)
            continue
        for part in (getattr(node, "body", None), getattr(node, "orelse", None), getattr(node, "finalbody", None)):
            if isinstance(part, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                todo.extend(part.body)
            elif part is not None and hasattr(part, "body"):  # (an `else`/`finally`/`elif` clause)
                todo.append(part)
        todo.extend(getattr(node, "handlers", ()))
        todo.extend(getattr(node, "cases", ()))
    return frozenset(found)


def imports_module(module: cst.Module, prefix: str) -> bool:
    """Does the module import `prefix` or a module in it, absolutely (`from a.b.c import x`, `import a.b`), at any
    depth (an import under `try:` or in a function counts)?"""
    for node in walk(module, skip=()):
        if isinstance(node, cst.Import):
            names = [dotted(alias.name) for alias in node.names]
        elif isinstance(node, cst.ImportFrom) and not node.relative and node.module is not None:
            names = [dotted(node.module)]
        else:
            continue
        if any(name == prefix or (name or "").startswith(prefix + ".") for name in names):
            return True
    return False


def names_only_called(module: cst.Module) -> frozenset[str]:
    """The names the module spells only as what a call calls (`f(...)`, `self.m(...)`) or a `def` defines: never
    handed on as a value (`register_hook(self.m)`, `Thread(target=f)`), so its calls of them are all their uses."""
    spelled: dict[str, int] = {}
    as_callee: dict[str, int] = {}

    def counted(table: dict, name: str) -> None:
        table[name] = table.get(name, 0) + 1

    class Uses(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Name):
                counted(as_callee, func.value)
            elif isinstance(func, cst.Attribute):
                counted(as_callee, func.attr.value)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            counted(as_callee, node.name.value)

        def visit_Name(self, node: cst.Name) -> None:  # (a callee's and a def's own names are visited too)
            counted(spelled, node.value)

    module.visit(Uses())
    return frozenset(name for name, count in as_callee.items() if spelled.get(name) == count)
