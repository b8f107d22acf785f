"""Capabilities of the v3 model, each as a positive and a negative program written the way
projects write them: which hazards the model finds (kind and function), and that the fix
silences them."""

import textwrap

import libcst as cst
import pytest

from streamlint.model.file_model import analyze_file


def found(source: str) -> list[tuple[str, str]]:
    model = analyze_file(cst.parse_module(textwrap.dedent(source)), "prog.py")
    return sorted((h.kind.value, h.function.rsplit(".", 1)[1]) for h in model.hazards)


# name: (program with {fix} as the deciding spot, the bug's text there, the fix's text there, hazards of the bug)
CASES = {
    "cupy stream entered by with, read on another stream": ("""
        import cupy as cp
        def f(n):
            s1 = cp.cuda.Stream(non_blocking=True)
            s2 = cp.cuda.Stream(non_blocking=True)
            with s1:
                a = cp.random.random(n)
            {fix}
            with s2:
                b = cp.sqrt(a)
            s2.synchronize()
            return b
        """, "pass", "s2.wait_event(s1.record())", [("read_after_write", "f")]),
    # non-blocking: s1 reads `noise` the legacy stream made, and the legacy stream reads `left`
    "blocking cupy streams and the legacy stream order each other": ("""
        import cupy as cp
        def f(x, n):
            s1 = cp.cuda.Stream({fix})
            noise = cp.random.standard_normal(n)
            left = cp.empty(n)
            with s1:
                cp.add(x, noise, out=left)
            return cp.linalg.norm(left)
        """, "non_blocking=True", "", [("read_after_write", "f"), ("read_after_write", "f")]),
    "numba kernel writes what its body stores into": ("""
        import numpy as np
        from numba import cuda

        @cuda.jit
        def scale(x, out):
            i = cuda.grid(1)
            out[i] = 2 * x[i]

        def f(n):
            s1 = cuda.stream()
            s2 = cuda.stream()
            d_x = cuda.device_array(n, dtype=np.float32)
            d_y = cuda.device_array(n, dtype=np.float32)
            scale[64, 256, s1](d_x, d_y)
            {fix}
            scale[64, 256, s2](d_y, d_x)
            s2.synchronize()
        """, "pass", "s1.synchronize()", [("read_after_write", "f"), ("write_after_read", "f")]),
    "slices are regions": ("""
        import cupy as cp
        def f(n, half):
            s1 = cp.cuda.Stream(non_blocking=True)
            s2 = cp.cuda.Stream(non_blocking=True)
            img = cp.zeros(n)
            cp.cuda.runtime.deviceSynchronize()
            with s1:
                img[:half] = cp.random.random(half)
            with s2:
                img[{fix}] = cp.random.random(n - half)
            cp.cuda.runtime.deviceSynchronize()
        """, ":half", "half:", [("write_after_write", "f")]),
    "a sync every few iterations leaves the last ones unwaited": ("""
        import torch
        def f(model, n, batch):
            out = torch.empty(n, batch, pin_memory=True)
            for i in range(n):
                x = torch.randn(batch, device="cuda")
                out[i].copy_(model(x), non_blocking=True)
                if {fix}:
                    torch.cuda.synchronize()
            return out.mean().item()
        """, "(i + 1) % 8 == 0", "True", [("host_read_before_sync", "f")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_capability(name: str) -> None:
    source, bug, fix, expected = CASES[name]
    assert found(source.replace("{fix}", bug)) == expected
    assert found(source.replace("{fix}", fix)) == []


def test_operations_of_a_helper_run_in_the_callers_loop():
    from streamlint.model.readings.operations import operations

    source = textwrap.dedent("""
        import torch
        def loss_value(loss):
            return loss.item()
        def train(model, batches):
            total = 0.0
            for batch in batches:
                loss = model(batch.cuda())
                total += loss_value(loss)
            once = loss_value(model(torch.zeros(1, device="cuda")))
            return total + once
        """)
    model = analyze_file(cst.parse_module(source), "prog.py")
    ops = [(o.operation.op, o.in_loop, bool(o.chain)) for o in operations(model, "train")]
    assert ("implicit synchronization", True, True) in ops  # the helper's .item(), per step
    assert ("implicit synchronization", False, True) in ops  # the same helper once, after the loop
    assert all(op != "implicit synchronization" for op, _, chain in ops if not chain)
