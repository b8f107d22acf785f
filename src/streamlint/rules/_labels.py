"""How messages name the buffer at a place in a call (message data only: no decision reads these)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.checked_file import spell as spelled  # noqa: F401 (the rules spell call targets with it)
from streamlint.model.domain.paths import RootKind
from streamlint.model.syntax.names import dotted

# Spellings of a host array's address (`h.ctypes.data`): the array itself, as a message names it.
_ADDRESS_OF = ("ctypes",)


def argument(call: cst.Call, pos: Optional[int], keyword: Optional[str]) -> Optional[cst.BaseExpression]:
    """The expression passed at position `pos` or as `keyword`."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if pos is not None and pos < len(positional):
        return positional[pos]
    return None


def receiver(call: cst.Call) -> Optional[cst.BaseExpression]:
    return call.func.value if isinstance(call.func, cst.Attribute) else None


def buffer_label(expr: Optional[cst.BaseExpression]) -> str:
    """`h` for `h`, `h[i]`, `h.ctypes.data`; `self.buf` for `self.buf`; "" for anything else."""
    while expr is not None:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
            continue
        if isinstance(expr, cst.Attribute) and expr.attr.value == "data" and isinstance(expr.value, cst.Attribute) \
                and expr.value.attr.value in _ADDRESS_OF:
            expr = expr.value.value
            continue
        return dotted(expr) or ""
    return ""


def bound_name(call: cst.CSTNode, scope: cst.CSTNode) -> str:
    """The name a call's value is bound to (`h = d.get()`) in `scope`, "" when none."""
    found: list[str] = []

    class Binding(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            target, value = node.targets[0].target, node.value
            if len(node.targets) == 1 and isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Tuple) \
                    and len(target.elements) == len(value.elements):
                for name, item in zip(target.elements, value.elements):
                    if item.value is call:  # `s1, s2 = cp.cuda.Stream(), cp.cuda.Stream()`
                        found.append(dotted(name.value) or "")
            if _holds(node.value, call) and len(node.targets) == 1:
                target = node.targets[0].target
                if isinstance(target, (cst.Tuple, cst.List)) and target.elements:
                    target = target.elements[-1].value  # `err, s = cudaStreamCreate()`: the value last
                found.append(dotted(target) or "")

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None and _holds(node.value, call):
                found.append(dotted(node.target) or "")

    scope.visit(Binding())
    return found[0] if found else ""


def _holds(value: cst.BaseExpression, call: cst.CSTNode) -> bool:
    """The value is the call's, or the call's passed through a call of one argument (an error
    check that returns what it is given: `s = checkCudaErrors(cudaStreamCreate())`)."""
    if value is call:
        return True
    return isinstance(value, cst.Call) and len(value.args) == 1 and not value.args[0].keyword \
        and not value.args[0].star and value.args[0].value is call


def pool_name(call: cst.CSTNode, scope: cst.CSTNode) -> str:
    """The name a collection the call makes the items of is bound to (`streams = [Stream() for _
    in range(2)]`, `self.streams = [...]`), "" when none."""
    found: list[str] = []

    class Binding(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            value = node.value
            made = isinstance(value, (cst.ListComp, cst.GeneratorExp, cst.SetComp)) and value.elt is call
            made = made or isinstance(value, (cst.List, cst.Tuple)) and any(e.value is call for e in value.elements)
            if made and len(node.targets) == 1:
                found.append(dotted(node.targets[0].target) or "")

    scope.visit(Binding())
    return found[0] if found else ""


def at(call: cst.Call, where: str, scope: cst.CSTNode) -> str:
    """The label of an operation's side named as an Operation's `host_at` does: "self" (the
    receiver), "return" (the name its value is bound to), "<pos>/<keyword>" (an argument)."""
    if where == "self":
        return buffer_label(receiver(call))
    if where == "return":
        return bound_name(call, scope)
    if "/" in where:
        pos, keyword = where.split("/")
        return buffer_label(argument(call, int(pos) if pos else None, keyword or None))
    return ""


def path_label(path) -> str:
    """A held value's path as messages name it: `self.stream`, `streams[...]` (any index)."""
    text = path.root.spell() if path.root.kind is RootKind.PARAM else path.root.name or "?"  # (a closure's cell)
    for step in path.steps:
        text += f".{step}" if isinstance(step, str) else "[...]"
    return text


def inside(model, at, analysis, work_name) -> str:
    """' inside `helper()` (`api` at line N)' for an operation a called function performs;
    `work_name(inner)` words the operation at its own site (None: not one the rule words)."""
    if not at.chain:
        return ""
    call, inner = model.node_of(at.site), model.node_of(at.own_site)
    if not isinstance(call, cst.Call) or inner is None:
        return ""
    work = work_name(inner)
    line = analysis.line_of(inner)
    if work is None or not line:
        return ""
    helper = spelled(call.func) or analysis.code(call.func)
    return f" inside `{helper.rsplit('.', 1)[-1]}()` ({work} at line {line})"
