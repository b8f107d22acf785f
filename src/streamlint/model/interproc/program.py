"""The functions the solver can see: the checked module's and those of the project modules
it imports, by qualified name ("pkg.mod.f", "pkg.mod.C.m")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import libcst as cst

from streamlint.model.interproc.modules import Source
from streamlint.model.syntax.hooks import registered_hooks
from streamlint.model.api import python_std, torch_modules
from streamlint.model.transfer.names import imports_of


# The qualified name of a module's top level, as a function of no parameters.
TOP_LEVEL = "<module>"


@dataclass(frozen=True)
class FunctionRef:
    qualname: str
    module: str
    class_name: str
    node: "cst.FunctionDef | cst.Module"


@dataclass
class ModuleUnit:
    name: str
    tree: cst.Module
    imports: dict[str, str]
    top_names: frozenset[str]  # module-level functions and classes
    classes: frozenset[str] = frozenset()  # module-level classes
    functions: dict[str, FunctionRef] = field(default_factory=dict)
    path: str = ""  # the file it was read from (another module of the project)
    hooks: Optional[frozenset] = None  # (class, function) it registers as PyTorch hooks, once asked


def unit_of(name: str, tree: cst.Module, package: Optional[str] = None) -> ModuleUnit:
    """`package`: where its relative imports start (a package's `__init__`: the package
    itself; by default the module's parent)."""
    classes = frozenset(s.name.value for s in tree.body if isinstance(s, cst.ClassDef))
    base = name.rpartition(".")[0] if package is None else package
    imports = {local: absolute(target, base) for local, target in imports_of(tree).items()}
    unit = ModuleUnit(name, tree, imports, frozenset(_top_names(tree)), classes)
    unit.functions[f"{name}.{TOP_LEVEL}"] = FunctionRef(f"{name}.{TOP_LEVEL}", name, "", tree)
    for statement in tree.body:
        if isinstance(statement, cst.FunctionDef):
            unit.functions[f"{name}.{statement.name.value}"] = FunctionRef(f"{name}.{statement.name.value}", name, "", statement)
        elif isinstance(statement, cst.ClassDef):
            _methods(unit, statement)
    return unit


def absolute(target: str, package: str) -> str:
    """A relative import's target named from the top of the package (`..m.f` imported into
    package "a.b" is "a.m.f"); an absolute one as it is."""
    rest = target.lstrip(".")
    level = len(target) - len(rest)
    if not level:
        return target
    parts = package.split(".") if package else []
    base = parts[: max(len(parts) - (level - 1), 0)]
    return ".".join([*base, rest]) if rest else ".".join(base)


def _methods(unit: ModuleUnit, cls: cst.ClassDef) -> None:
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    for member in body:
        if isinstance(member, cst.FunctionDef):
            qualname = f"{unit.name}.{cls.name.value}.{member.name.value}"
            # a static method has no receiver: a function that lives in the class
            owner = "" if _is_static(member) else cls.name.value
            unit.functions[qualname] = FunctionRef(qualname, unit.name, owner, member)


def _is_static(function: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in function.decorators)


def _top_names(tree: cst.Module) -> list[str]:
    return [s.name.value for s in tree.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))]


# Reads another module of the project by its dotted name.
ModuleLoader = Callable[[str], Optional[Source]]
# How far a name re-exported by a package's `__init__` (or any module) is followed.
_MAX_REEXPORTS = 4


class Program:
    def __init__(self, main: ModuleUnit, loader: Optional[ModuleLoader] = None) -> None:
        self.main = main
        self._units: dict[str, Optional[ModuleUnit]] = {main.name: main}
        self._loader = loader

    def function(self, qualname: str) -> Optional[FunctionRef]:
        found = self._defined(qualname)
        return found if isinstance(found, FunctionRef) else None

    def is_class(self, qualname: str) -> bool:
        return self._defined(qualname) == "class"

    def _defined(self, qualname: str, hops: int = 0) -> "FunctionRef | str | None":
        """The function (or "class") a qualified name denotes: in the longest module prefix
        that is a module of the project, following names that module imports from another."""
        module = qualname
        while "." in module:
            module = module.rsplit(".", 1)[0]
            unit = self.unit(module)
            if unit is None:
                continue
            if qualname in unit.functions:
                return unit.functions[qualname]
            head, _, rest = qualname[len(module) + 1:].partition(".")
            if not rest and head in unit.classes:
                return "class"
            target = unit.imports.get(head)
            if target is None or hops >= _MAX_REEXPORTS:
                return None
            return self._defined(f"{target}.{rest}" if rest else target, hops + 1)
        return None

    def hot_entry(self, function: FunctionRef) -> str:
        """`C.forward` when the function is a method PyTorch runs on every step (an `nn.Module`'s
        `forward`, an optimizer's `step`, a hook its module registers), else ""."""
        unit = self.unit(function.module)
        name = getattr(function.node, "name", None)
        if unit is None or name is None:
            return ""
        if unit.hooks is None:
            unit.hooks = registered_hooks(unit.tree, torch_modules.HOOK_REGISTRATIONS)
        if (function.class_name, name.value) in unit.hooks:
            return f"{function.class_name}.{name.value}" if function.class_name else name.value
        if not function.class_name:
            return ""
        cls = next((s for s in unit.tree.body if isinstance(s, cst.ClassDef) and s.name.value == function.class_name), None)
        bases = [qualified(b.value, unit.imports) for b in cls.bases] if cls is not None else []
        module = name.value in torch_modules.MODULE_HOT_METHODS and any(
            b.startswith(torch_modules.MODULE_NAMESPACE) for b in bases)
        optimizer = name.value in torch_modules.OPTIMIZER_HOT_METHODS and torch_modules.optimizer_base(bases)
        return f"{function.class_name}.{name.value}" if module or optimizer else ""

    def memoized(self, function: FunctionRef) -> bool:
        """Decorated to run once per distinct argument tuple (`functools.lru_cache`)."""
        unit = self.unit(function.module)
        decorators = getattr(function.node, "decorators", ())
        for decorator in decorators:
            expr = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            if unit is not None and qualified(expr, unit.imports) in python_std.MEMOIZING_DECORATORS:
                return True
        return False

    def unit(self, module: str) -> Optional[ModuleUnit]:
        if module not in self._units:
            source = self._loader(module) if self._loader is not None else None
            unit = unit_of(module, source.tree, source.package) if source is not None else None
            if unit is not None:
                unit.path = source.path
            self._units[module] = unit
        return self._units[module]


def qualified(expr: cst.BaseExpression, imports: dict[str, str]) -> str:
    """`nn.Module` as `torch.nn.Module`: a dotted name with its first name resolved by the imports."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return ""
    parts.append(imports.get(expr.value, expr.value))
    return ".".join(reversed(parts))
