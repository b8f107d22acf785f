"""Framework API facts as data: one table module per framework, one index here."""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from streamlint.model.api import chainer, cuda_core, cuda_python, cupy, numba_cuda, torch_api
from streamlint.model.api.facts import Fact

FUNCTIONS: dict[str, Fact] = {
    **cupy.FUNCTIONS,
    **numba_cuda.FUNCTIONS,
    **torch_api.FUNCTIONS,
    **cuda_python.FUNCTIONS,
    **cuda_core.FUNCTIONS,
}


# Import spellings that name the same module.
_ALIASES = {
    "cuda.cudart": "cuda.bindings.runtime",
    "cuda.cuda": "cuda.bindings.driver",
    "cuda.bindings.cudart": "cuda.bindings.runtime",
    "cupy.cuda.stream": "cupy.cuda",
    "cupy.cuda.device": "cupy.cuda",
    "torch.cuda.streams": "torch.cuda",
    "numba.cuda.api": "numba.cuda",
    "torch.utils.data.dataloader": "torch.utils.data",
    "cupy._core": "cupy",
    # a namespace that stands for a framework's (CodeQL's `typeModel`): `torch.cuda` on a CUDA machine
    "torch.accelerator": "torch.cuda",
    **cuda_core.MODULE_ALIASES,
    **chainer.MODULE_ALIASES,
}

# Top-level packages whose names mark a file as GPU code worth analysing.
FRAMEWORK_ROOTS = {"cupy": "cupy", "cupyx": "cupy", "numba": "numba", "torch": "torch", "cuda": "cuda-python"}


@lru_cache(maxsize=1 << 16)
def normalize(qualname: str) -> str:
    """Canonical spelling of a qualified name (the longest alias that is a dotted prefix folded)."""
    end = len(qualname)
    while end > 0:
        real = _ALIASES.get(qualname[:end])
        if real is not None:
            return real + qualname[end:]
        end = qualname.rfind(".", 0, end)
    return qualname


def framework_of(qualname: str) -> Optional[str]:
    return FRAMEWORK_ROOTS.get(qualname.split(".", 1)[0])
