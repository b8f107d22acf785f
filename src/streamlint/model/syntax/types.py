"""The syntax index of one module: what the analysis needs to know about its shape,
read once by one visitor, frozen, serialisable and cached by the module's content.

Nothing here holds a libcst node: an index crosses process boundaries and lives in the
cache. A place in a module is a `Site`: the qualified name of the enclosing function
(`""` for the module body) and the ordinal of the node among that function's nodes of the
same kind in source order, plus its line and column for messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Optional


class ParamKind(Enum):
    POSITIONAL_ONLY = "positional_only"
    POSITIONAL = "positional"  # positional or keyword
    VAR_POSITIONAL = "var_positional"  # *args
    KEYWORD_ONLY = "keyword_only"
    VAR_KEYWORD = "var_keyword"  # **kwargs


@dataclass(frozen=True)
class Site:
    """A place in a module, stable across runs on the same text."""

    function: str  # qualified name of the enclosing function ("" for the module body)
    ordinal: int  # index among the enclosing function's nodes of that kind, in source order
    line: int  # 1-based
    column: int  # 1-based, in characters


@dataclass(frozen=True)
class Param:
    name: str
    kind: ParamKind
    annotation: Optional[str] = None  # the annotation's dotted name or code ("torch.Tensor", "Optional[cp.ndarray]")
    default: Optional[str] = None  # the default's code ("None", "torch.device('cuda')", "True")


@dataclass(frozen=True)
class Nesting:
    """Where a node sits inside its function: the enclosing loops and tests, outermost first."""

    loops: tuple[int, ...] = ()  # ordinals of the enclosing `for`/`while` loops (each `for` of a comprehension too)
    # ordinals of the enclosing `if`/`while` tests and conditional expressions (also a comprehension's `if`
    # clauses and a `match` statement's cases): the node runs only when the test says so
    tests: tuple[int, ...] = ()
    in_try: bool = False  # inside the body of a `try` that has an `except` handler
    in_except: bool = False  # inside an `except` handler
    in_lambda: bool = False  # inside a lambda's body (it runs when the lambda is called, not here)


@dataclass(frozen=True)
class CallSite:
    site: Site
    callee: str  # the callee as written, dotted: "torch.cuda.Stream", "self.helper", "f", "" when not a name
    receiver_root: str  # the first name of a dotted callee ("self", "torch", "x"), "" when not a name
    positional: int  # number of positional arguments (a `*args` counts as one)
    keywords: tuple[str, ...]  # keyword argument names in order; "**" for a `**kwargs` argument
    nesting: Nesting


@dataclass(frozen=True)
class FunctionIndex:
    qualname: str  # "f", "C.m", "C.m.<locals>.inner", "" for the module body
    name: str
    site: Site  # the `def` line (ordinal: among the enclosing function's `def`s and `class`es; -1 for the module body)
    params: tuple[Param, ...]
    decorators: tuple[str, ...]  # dotted names as written ("staticmethod", "functools.lru_cache", "torch.no_grad")
    class_qualname: Optional[str]  # the class a method belongs to
    is_async: bool
    is_generator: bool  # contains `yield` (not in nested functions)
    calls: tuple[CallSite, ...]  # every call in the body, in source order (nested functions excluded)
    # `self` is the first parameter of a method (not of a staticmethod); a function nested in a method
    # sees the method's, unless a parameter of its own has that name.
    self_reads: tuple[str, ...]  # attributes read as `self.<a>` (first parameter of a method), sorted, unique
    self_stores: tuple[str, ...]  # attributes assigned as `self.<a> = ...` / augmented / annotated, sorted, unique
    returns: int  # number of `return <value>` statements
    nested: tuple[str, ...]  # qualnames of functions defined directly inside


@dataclass(frozen=True)
class ClassIndex:
    qualname: str
    name: str
    site: Site
    bases: tuple[str, ...]  # dotted names as written ("nn.Module", "torch.nn.Module", "Base")
    decorators: tuple[str, ...]
    methods: tuple[str, ...]  # method names in source order
    self_stores: tuple[tuple[str, tuple[str, ...]], ...]  # (method name, attributes it stores), in method order


@dataclass(frozen=True)
class ImportIndex:
    module: str  # "torch.cuda" for `import torch.cuda` / `from torch.cuda import x`; "" for `from . import x`
    name: Optional[str]  # the imported name for `from m import name`; None for `import m`
    alias: str  # the name bound in this module
    level: int  # number of leading dots of a relative import
    site: Site


@dataclass(frozen=True)
class ModuleIndex:
    digest: str  # sha256 of the source text
    functions: tuple[FunctionIndex, ...]  # the module body first (qualname ""), then every def in source order
    classes: tuple[ClassIndex, ...]
    imports: tuple[ImportIndex, ...]
    frameworks: frozenset[str]  # GPU frameworks the module's imports and dotted names mention ("torch", "cupy", ...)
