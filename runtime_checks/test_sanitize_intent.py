"""Argument intent for kernels the frameworks do not describe, and byte ranges of arrays."""

from __future__ import annotations

import pytest

from streamlint.runtime.sanitize.intent import c_kernel_readonly, python_kernel_writes
from streamlint.runtime.sanitize.record.handles import handle_int
from streamlint.runtime.sanitize.record.log_writer import extent


def test_numba_kernel_writes_subscript_stores_atomics_aliases_and_calls():
    source = '''
@cuda.jit
def k(x, y, z, w, n):
    i = cuda.grid(1)
    t = z
    y[i] = x[i] + n
    t[i] += 1
    cuda.atomic.add(w, 0, x[i])
'''
    assert python_kernel_writes(source) == frozenset({1, 2, 3})


def test_numba_kernel_reading_only_writes_nothing():
    assert python_kernel_writes("def k(a, b):\n    s = a[0] + b[1]\n") == frozenset()


def test_raw_kernel_const_pointers_are_read_only():
    code = 'extern "C" __global__ void f(const float* x, float * y, const int n, float const* w) {}'
    assert c_kernel_readonly(code, "f") == frozenset({0, 3})  # `float const*` is const data too
    assert c_kernel_readonly(code, "missing") is None


@pytest.mark.parametrize("shape,strides,itemsize,expected", [
    ((4, 3), None, 4, (1000, 48)),
    ((4, 3), (12, 4), 4, (1000, 48)),
    ((3,), (24,), 8, (1000, 56)),  # every third float64: spans 2*24+8 bytes
    ((2, 2), (-8, 4), 4, (992, 16)),  # a negative stride reaches below the pointer
    ((0, 3), None, 4, None),
])  # fmt: skip
def test_extent(shape, strides, itemsize, expected):
    assert extent(1000, shape, strides, itemsize) == expected


def test_handle_int_reads_the_common_spellings():
    class CtypesLike:
        value = 77

    class Wrapper:
        handle = CtypesLike()

    class Protocol:
        def __cuda_stream__(self):
            return (0, 55)

    assert handle_int(None) == 0 and handle_int(5) == 5
    assert handle_int(Wrapper()) == 77 and handle_int(Protocol()) == 55
