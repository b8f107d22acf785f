"""Compile and load a provoked program's kernels before its delay (provoke.py).

On an H200 (driver 580, CUDA 13) loading a CUDA module waits for the work already on
the device, lazily (at a kernel's first launch) or eagerly (`cuLibraryLoadData`) alike.
A Numba kernel is compiled and its module loaded at its first call, so in a program
that runs its racing kernels once the provoking spin was waited out by the producer's
own module load, and the consumer's load then waited for the producer: ordered by the
loader, never by the program, and no delay could provoke the race.

So the plain run notes, for each Numba kernel of the program's own module, the
signatures it was compiled for (`signatures`: pickled Numba types, base64), and the
provoked and control runs compile and load those kernels at the delayed statement, just
before the spin is queued (`preload`): every launch after it is a plain launch. (CuPy
kernels come from its on-disk cache and PyTorch's with the library; with
CUDA_MODULE_LOADING=EAGER, runner.py, their modules load before any delay.)
"""

from __future__ import annotations

import base64
import pickle
from typing import Any


def _is_numba_kernel(value: Any) -> bool:
    return type(value).__name__ == "CUDADispatcher" and hasattr(value, "overloads") and hasattr(value, "compile")


def signatures(scope: dict) -> list[dict]:
    """[{"name", "sigs"}] for the Numba kernels bound to names in the program's scope."""
    out = []
    for name, value in list(scope.items()):
        if not _is_numba_kernel(value):
            continue
        sigs = []
        for argtypes in list(value.overloads):
            try:
                sigs.append(base64.b64encode(pickle.dumps(tuple(argtypes))).decode("ascii"))
            except Exception:  # a type that does not pickle: that overload is compiled on its call
                continue
        if sigs:
            out.append({"name": name, "sigs": sigs})
    return out


def preload(kernels: list[dict], scope: dict) -> list[str]:
    """Compile and load the noted kernels found in `scope`; the names done."""
    done = []
    for entry in kernels:
        dispatcher = scope.get(entry["name"])
        if not _is_numba_kernel(dispatcher):
            continue
        for sig in entry["sigs"]:
            try:
                kernel = dispatcher.compile(pickle.loads(base64.b64decode(sig)))
                kernel._codelibrary.get_cufunc()  # the module load, which waits for the device
            except Exception:
                continue
            done.append(entry["name"])
    return done
