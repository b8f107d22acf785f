"""The functions the solver can see: the checked module's and those of the project modules
it imports, by qualified name ("pkg.mod.f", "pkg.mod.C.m")."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path as FilePath
from typing import Callable, Optional

import libcst as cst

from streamlint.model.api import python_std, torch_modules
from streamlint.model.transfer.names import imports_of
from streamlint.nesting import nesting_problem


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


def unit_of(name: str, tree: cst.Module) -> ModuleUnit:
    classes = frozenset(s.name.value for s in tree.body if isinstance(s, cst.ClassDef))
    unit = ModuleUnit(name, tree, imports_of(tree), frozenset(_top_names(tree)), classes)
    unit.functions[f"{name}.{TOP_LEVEL}"] = FunctionRef(f"{name}.{TOP_LEVEL}", name, "", tree)
    for statement in tree.body:
        if isinstance(statement, cst.FunctionDef):
            unit.functions[f"{name}.{statement.name.value}"] = FunctionRef(f"{name}.{statement.name.value}", name, "", statement)
        elif isinstance(statement, cst.ClassDef):
            _methods(unit, statement)
    return unit


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


# Reads another module of the project by its dotted name: (its name, its tree) or None.
ModuleLoader = Callable[[str], Optional[cst.Module]]


class Program:
    def __init__(self, main: ModuleUnit, loader: Optional[ModuleLoader] = None) -> None:
        self.main = main
        self._units: dict[str, Optional[ModuleUnit]] = {main.name: main}
        self._loader = loader

    def function(self, qualname: str) -> Optional[FunctionRef]:
        module = qualname
        while "." in module:
            module = module.rsplit(".", 1)[0]
            unit = self.unit(module)
            if unit is not None:
                return unit.functions.get(qualname)
        return None

    def is_class(self, qualname: str) -> bool:
        module, _, name = qualname.rpartition(".")
        unit = self.unit(module) if module else None
        return unit is not None and name in unit.classes

    def hot_entry(self, function: FunctionRef) -> str:
        """`C.forward` when the function is a method PyTorch runs on every step (an `nn.Module`'s
        `forward`, an optimizer's `step`), else ""."""
        unit = self.unit(function.module)
        name = getattr(function.node, "name", None)
        if unit is None or not function.class_name or name is None:
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
            tree = self._loader(module) if self._loader is not None else None
            self._units[module] = unit_of(module, tree) if tree is not None else None
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


def loader_for(path: str, main_name: str) -> ModuleLoader:
    """Modules beside the checked file (`import helpers`, `from .helpers import f`)."""
    directory = FilePath(path).parent if path else None

    def load(module: str) -> Optional[cst.Module]:
        if directory is None:
            return None
        relative = module.split(".")[-1] if module.startswith(main_name.rsplit(".", 1)[0]) else module
        candidate = directory / (relative.replace(".", "/") + ".py")
        try:
            text = candidate.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        if nesting_problem(text) is not None:
            return None  # libcst's native parser would overflow its stack: a module we cannot see
        try:
            return cst.parse_module(text)
        except cst.ParserSyntaxError:
            return None

    return load
