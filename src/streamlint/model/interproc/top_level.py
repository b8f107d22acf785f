"""The program as a module's top level sees it while the solver computes what its names hold.

Calling a project class there makes an object of that class (its methods, and whether it is a PyTorch module, are
known from the index); every function call stays opaque, because the functions may read the very names being
computed (a summary asked for here would ask for them again)."""

from __future__ import annotations

from typing import Optional

from streamlint.model.domain.values import AbsValue
from streamlint.model.summary.function_summary import FunctionSummary
from streamlint.model.transfer.frame import CallContext


class TopLevelView:
    """A ProgramView that answers only from the index: which names are project classes, and of what kind."""

    def __init__(self, program) -> None:
        self._program = program

    def is_class(self, qualname: str) -> bool:
        return self._program.is_class(qualname)

    def is_module(self, cls: str) -> bool:
        return self._program.is_module(cls)

    def is_enumeration(self, qualname: str) -> bool:
        return self._program.is_enumeration(qualname)

    def summary(self, qualname: str, context: CallContext) -> Optional[FunctionSummary]:
        return None  # (opaque: see the module's docstring)

    def kernel_framework(self, qualname: str) -> str:
        return ""

    def kernel_writes(self, qualname: str) -> Optional[frozenset[int]]:
        return None

    def class_defining(self, module: str, methods: frozenset[str]) -> Optional[str]:
        return None

    def classes_with_method(self, module: str, name: str, within: str = "", call=None) -> tuple[str, ...]:
        return ()

    def hierarchy_of(self, module: str, methods: frozenset[str]) -> Optional[str]:
        return None

    def base_class(self, cls: str) -> Optional[str]:
        return None

    def methods_named(self, cls: str, prefix: str) -> tuple[str, ...]:
        return ()

    def lambda_function(self, module: str, node) -> Optional[str]:
        return self._program.lambda_function(module, node)

    def class_attribute(self, cls: str, attr: str) -> Optional[AbsValue]:
        return None

    def ring_size(self, module: str, attr: str) -> int:
        return 0

    def latches(self, qualname: str) -> frozenset[str]:
        return frozenset()

    def makes_cuda_default(self) -> bool:
        return False  # (what the module-level names hold is read before any setter runs)

    def left_on_holders(self, module: str, attr: str, reader: str) -> Optional[AbsValue]:
        return None

    def property_of(self, cls: str, attr: str) -> str:
        return ""

    def cold_entry(self, qualname: str) -> str:
        return ""

    def method_alias(self, qualname: str) -> "Optional[tuple[str, bool]]":
        return None

    def memoized(self, qualname: str) -> bool:
        return False
