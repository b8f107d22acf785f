"""Which pointer parameters a GPU kernel's body writes through (Numba's stores, Triton's `tl.store`/atomics)."""

import libcst as cst

from streamlint.model.interproc.program import qualified
from streamlint.model.transfer.kernels import stored_parameters, triton_stored_parameters

_IMPORTS = {"tl": "triton.language", "triton": "triton", "helpers": "kernels.helpers"}


def _triton(source: str) -> frozenset[int]:
    function = cst.parse_module(source).body[0]
    assert isinstance(function, cst.FunctionDef)
    return triton_stored_parameters(function, lambda expr: qualified(expr, _IMPORTS))


def test_a_triton_kernel_writes_only_what_it_stores_through():
    assert _triton(
        "def k(x_ptr, y_ptr, out_ptr, n, BLOCK):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    y = tl.load(y_ptr + offs, mask=offs < n)\n"
        "    tl.store(out_ptr + offs, x + y, mask=offs < n)\n"
    ) & {0, 1, 2} == frozenset({2})  # (the offsets' scalars ride along: they are no tensors at a launch)


def test_a_loaded_value_is_no_pointer_into_its_source():
    # `v` holds data loaded through x_ptr; storing it elsewhere writes only the destination
    assert _triton(
        "def k(x_ptr, out_ptr):\n"
        "    v = tl.load(x_ptr)\n"
        "    dst = out_ptr + v\n"
        "    tl.store(dst, v)\n"
    ) == frozenset({1})


def test_a_pointer_advanced_in_a_loop_and_atomics_write_their_parameter():
    assert _triton(
        "def k(acc_ptr, x_ptr, n):\n"
        "    p = x_ptr\n"
        "    for i in range(n):\n"
        "        q = p\n"
        "        p += 1\n"
        "    tl.atomic_add(pointer=acc_ptr, val=tl.load(q))\n"
        "    tl.store(q, 0.0)\n"
    ) == frozenset({0, 1})


def test_a_pointer_handed_to_a_call_nothing_tells_of_may_be_written():
    assert _triton(
        "def k(flag_ptr, x_ptr, y_ptr):\n"
        "    helpers.wait_signal(flag_ptr + 1)\n"
        "    _local_jitted_helper(y_ptr, tl.load(x_ptr))\n"
    ) == frozenset({0, 2})


def test_a_numba_kernel_writes_its_subscripted_targets_and_atomics():
    function = cst.parse_module(
        "def k(a, out, counts):\n"
        "    i = cuda.grid(1)\n"
        "    out[i] = a[i] * 2\n"
        "    cuda.atomic.add(counts, 0, 1)\n"
    ).body[0]
    assert stored_parameters(function) == frozenset({1, 2})
