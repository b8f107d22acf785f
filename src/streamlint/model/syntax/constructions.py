"""Where a module calls a class by name (`self.tracker = Tracker(cfg, args, self)`), and what a method of another
class hands the call of its own: its receiver, or one of the receiver's attributes (`DroidFrontend(self.net,
self.video, args)`). The language itself tells what those are (a method's receiver is an instance of its class)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from streamlint.model.syntax.children import walk
from streamlint.model.syntax.names import dotted


@dataclass(frozen=True)
class Construction:
    """One call of the name as written (`called`). `owner`: the module-level class whose method makes it ("" outside
    one). `handed`: for each argument slot (a position "0", "1", ... or a keyword), "" where the owner hands its
    receiver, the attribute's name for `self.<attr>`, None for anything else. `starred`: it passes `*args` or
    `**kwargs` (its slots are not all told)."""

    called: str
    owner: str
    handed: tuple[tuple[str, Optional[str]], ...]
    starred: bool


def constructions(module: cst.Module, name: str) -> tuple[Construction, ...]:
    """Every call in the module whose callee is spelled `name` or ends with `.name`."""
    found: list[Construction] = []
    for statement in module.body:
        if type(statement) is cst.ClassDef:
            for member in statement.body.body:  # type: ignore[union-attr]
                receiver = member.params.params[0].name.value if type(member) is cst.FunctionDef \
                    and member.params.params and not _unbound(member) else ""  # type: ignore[attr-defined]
                owner = statement.name.value if receiver else ""  # type: ignore[attr-defined]
                found.extend(_calls_of(member, name, owner, receiver))
        else:
            found.extend(_calls_of(statement, name, "", ""))
    return tuple(found)


def _unbound(function: cst.FunctionDef) -> bool:
    """A static or class method: its first parameter is no instance of the class."""
    return any(type(d.decorator) is cst.Name and d.decorator.value in ("staticmethod", "classmethod")  # type: ignore
               for d in function.decorators)


def _calls_of(node: cst.CSTNode, name: str, owner: str, receiver: str) -> Iterator[Construction]:
    for inner in walk(node, skip=()):
        if type(inner) is not cst.Call:
            continue
        called = dotted(inner.func)  # type: ignore[attr-defined]
        if called is None or (called != name and not called.endswith("." + name)):
            continue
        slots = tuple((arg.keyword.value if arg.keyword is not None else str(position),
                       _own(arg.value, receiver) if receiver else None)
                      for position, arg in enumerate(inner.args))  # type: ignore[attr-defined]
        yield Construction(called, owner, slots, any(arg.star for arg in inner.args))  # type: ignore[attr-defined]


def _own(value: cst.BaseExpression, receiver: str) -> Optional[str]:
    """"" for the receiver, the attribute's name for `receiver.<attr>`, None for anything else."""
    if type(value) is cst.Name and value.value == receiver:  # type: ignore[attr-defined]
        return ""
    if type(value) is cst.Attribute and type(value.value) is cst.Name \
            and value.value.value == receiver:  # type: ignore[attr-defined]
        return value.attr.value  # type: ignore[attr-defined]
    return None


def kept_whole(function: cst.FunctionDef) -> frozenset[str]:
    """The parameters a constructor keeps whole on its receiver (`self.engine = engine`): a back-reference to its
    owner, whose methods it calls later, rather than the owner's fields read once."""
    params = function.params.params
    receiver = params[0].name.value if params else ""
    names = {p.name.value for p in params[1:]} | {p.name.value for p in function.params.kwonly_params}
    found = set()
    for node in walk(function.body, skip=()):
        if type(node) is cst.Assign and type(node.value) is cst.Name and node.value.value in names:  # type: ignore
            if any(_own(t.target, receiver) for t in node.targets):  # type: ignore[attr-defined]
                found.add(node.value.value)  # type: ignore[attr-defined]
    return frozenset(found)


def fields_read(function: cst.FunctionDef) -> frozenset[str]:
    """The parameters whose attributes the function reads (`slam.bound`): an owner's fields a component takes."""
    params = function.params.params
    names = {p.name.value for p in params[1:]} | {p.name.value for p in function.params.kwonly_params}
    return frozenset(node.value.value for node in walk(function.body, skip=())  # type: ignore[attr-defined]
                     if type(node) is cst.Attribute and type(node.value) is cst.Name  # type: ignore[attr-defined]
                     and node.value.value in names)  # type: ignore[attr-defined]
