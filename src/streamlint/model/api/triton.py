"""Triton: a kernel its decorators compile (`@triton.jit`, under `@triton.autotune`) launched as `kernel[grid](...)`
runs on PyTorch's current stream (Triton's launcher asks torch for it), not on Numba's legacy default stream. Its body
writes memory only through the calls below: a tensor argument whose pointer reaches none of them (nor any call the
tables do not know) is only read."""

from __future__ import annotations

KERNEL_DECORATORS = frozenset({"triton.jit", "triton.autotune", "triton.heuristics"})
LAUNCHED_ON = "torch"  # the framework whose current stream a launch without a stream runs on

ROOT = "triton"  # its functions other than the stores below compute on values or pointers and write no memory
LANGUAGE = "triton.language"
# The language's calls that write memory through the pointer they are given (first argument, or `pointer=`).
STORES = frozenset({f"{LANGUAGE}.{name}" for name in (
    "store", "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg",
    "atomic_xor", "inline_asm_elementwise",
)})
LOADS = frozenset({f"{LANGUAGE}.load"})  # what it returns is a value, no longer a pointer into the argument
# Methods of a block pointer or a tensor descriptor that write through it (`desc.store(offsets, x)`).
STORING_METHODS = frozenset({"store", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
                             "atomic_xor"})
