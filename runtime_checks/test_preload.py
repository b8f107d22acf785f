"""Kernels compiled and loaded before the provoking delay (preload.py): the plain run
notes each Numba kernel's signatures, the provoked run compiles and loads them."""

from __future__ import annotations

from streamlint.runtime import preload


class _Library:
    def __init__(self, log):
        self.log = log

    def get_cufunc(self):
        self.log.append("loaded")


class _Kernel:
    def __init__(self, log):
        self._codelibrary = _Library(log)


class CUDADispatcher:  # the name Numba's kernels have; duck-typed like them
    def __init__(self, sigs=()):
        self.overloads = {sig: None for sig in sigs}
        self.log = []

    def compile(self, sig):
        self.log.append(("compile", sig))
        return _Kernel(self.log)


def test_signatures_round_trip_into_compile_and_load():
    plain = {"produce": CUDADispatcher([("float32[::1]", "int64")]), "helper": len, "n": 3}
    noted = preload.signatures(plain)
    assert [k["name"] for k in noted] == ["produce"]
    fresh = CUDADispatcher()  # the provoked run's own kernel object, not yet compiled
    assert preload.preload(noted, {"produce": fresh}) == ["produce"]
    assert fresh.log == [("compile", ("float32[::1]", "int64")), "loaded"]


def test_a_kernel_missing_from_the_scope_is_left_to_its_call():
    noted = preload.signatures({"consume": CUDADispatcher([("x",)])})
    assert preload.preload(noted, {"consume": "not a kernel"}) == []
