"""What a host synchronization is for (model/syntax/sync_purpose.py), asked as the rules ask it:
of the synchronizing operations the v3 model records in a function (ported from the v2 test of
`model.purpose`, whose cases it keeps)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from streamlint.model.api.op_kinds import OpKind
from streamlint.model.file_model import analyze_file
from streamlint.model.readings.hot_paths import Work, work_in
from streamlint.model.readings.operations import own_operations
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.model.syntax.sync_purpose import Purpose, SyncPurposes

_SYNCS = (OpKind.IMPLICIT_SYNC.value, OpKind.COPY_D2H.value, OpKind.DEVICE_SYNC.value)


def purposes(body: str) -> list:
    source = "import time\nimport cupy as cp\nimport numpy as np\nimport torch\n\n\ndef f(model, xs, n, tol):\n"
    source += textwrap.indent(textwrap.dedent(body), "    ")
    module = cst.parse_module(source)
    model = analyze_file(module, "t.py")
    ancestry = Ancestry(module)
    asked = SyncPurposes(ancestry)
    found: list = []
    seen: set = set()
    for qualname, at in own_operations(model):
        operation = at.operation
        if qualname != "t.f" or operation.op not in _SYNCS or at.site in seen:
            continue
        seen.add(at.site)
        node = model.node_of(at.site)
        loops = ancestry.loops_around(node)
        uploads = bool(loops) and work_in(model, qualname, loops[-1], ancestry, Work.UPLOAD)
        copy = operation.op == OpKind.COPY_D2H.value
        value_read = operation.op != OpKind.DEVICE_SYNC.value
        found.append(asked.purpose(node, value_read, copy, operation.conditional, uploads,
                                   into=copy and operation.into_given))
    return found  # in the order the walk met them


@pytest.mark.parametrize(
    "body, expected",
    [
        ("err = cp.ones(())\nwhile err > tol:\n    err = err * 0.5\n", Purpose.CONTROL),
        ("a = cp.zeros(3)\nfor _ in range(n):\n    b = a * 2\n    if cp.all(a == b):\n        break\n    a = b\n",
         Purpose.CONTROL),
        ("a = cp.zeros(3)\nfor _ in range(n):\n    a = a * 2\n    res = float(a.max())\n"
         "    if res < tol:\n        break\n",
         Purpose.CONTROL),
        ("t = torch.zeros(3, device='cuda')\nfor _ in range(n):\n    k = int((t > 0).sum())\n"
         "    out = torch.empty(k, device='cuda')\n",
         Purpose.SHAPE),
        ("t = torch.zeros(3, device='cuda')\nfor _ in range(n):\n    k = t.sum().item()\n    y = t[:k]\n"
         "", Purpose.SHAPE),
        ("t = torch.zeros(3, device='cuda')\nfor _ in range(n):\n    t = t + 1\n    assert t.sum().item() > 0\n",
         Purpose.ASSERTION),
        ("a = cp.zeros(3)\nfor _ in range(n):\n    a = a + 1\n    np.testing.assert_allclose(a.get(), 1)\n",
         Purpose.ASSERTION),
        ("t = torch.zeros(3, device='cuda')\nfor _ in range(n):\n    t = t * 2\n    torch.cuda.synchronize()\n"
         "    peak = torch.cuda.max_memory_allocated()\n", Purpose.MEASUREMENT),
        ("t = torch.zeros(3, device='cuda')\nfor _ in range(n):\n    t0 = time.perf_counter()\n    t = t * 2\n"
         "    v = t.sum().item()\n    dt = time.perf_counter() - t0\n", Purpose.MEASUREMENT),
        ("t = torch.zeros(3, device='cuda')\nfor _ in range(n):\n    t = t * 2\n    torch.cuda.synchronize()\n"
         "g = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n    t = t * 2\n", Purpose.CAPTURE),
        ("t = torch.zeros(3, device='cuda')\nfor _ in range(n):\n    t = t * 2\n    if t.sum() > 0:\n"
         "        t = t * 0\n",
         Purpose.SELECTION),
        ("t = torch.zeros(3, device='cuda')\nfor _ in range(n):\n    t = t * 2\n    if torch.isnan(t).any():\n"
         "        raise ValueError('nan')\n", Purpose.CHECK),
        ("out = []\nfor x in xs:\n    d = cp.asarray(x)\n    out.append(cp.asnumpy(d * 2))\n", Purpose.OUTPUT),
        ("a = cp.zeros(3)\nfor x in xs:\n    a = a + 1\n    r = a.get()\n    ok = np.allclose(r, x)\n    print(ok)\n",
         Purpose.VERIFY),
        ("a = cp.zeros(3)\nfor x in xs:\n    a = a + 1\n    print(np.linalg.norm(cp.asnumpy(a) - x))\n"
         "", Purpose.VERIFY),
        ("a = cp.zeros(3)\nfor _ in range(n):\n    a = a + 1\n    if tol > 0:\n        print(a)\n", Purpose.DEBUG),
        ("t = torch.zeros(3, device='cuda')\nt = t * 2\ntorch.cuda.synchronize()\ntorch.distributed.barrier()\n"
         "if n == 0:\n    print('warm')\ntorch.cuda.profiler.start()\n", Purpose.MEASUREMENT),
        ("t = torch.zeros(3, device='cuda')\nfor _ in range(n):\n    t = t * 2\n    torch.cuda.synchronize()\n"
         "    r = t.cpu()\n    assert r.sum() > 0\n", Purpose.ASSERTION),
        ("for x in xs:\n    loss = model(x.cuda()).sum()\n    loss.backward()\n    model.opt.step()\n"
         "    torch.cuda.synchronize()\n    dt = time.perf_counter()\n", Purpose.STEP_TIMING),
        ("t = torch.zeros(3, device='cuda')\nfor _ in range(n):\n    t = t * 2\n    v = t.sum().item()\n"
         "    print(v)\n", None),
        ("t = torch.zeros(3, device='cuda')\nfor _ in range(n):\n    t = t * 2\n    v = t.sum().item()\n"
         "    u = torch.full((3,), v, device='cuda')\n", None),
        # asking the value's type checks nothing the read returns (row 7.66)
        ("t = torch.zeros(3, device='cuda')\nfor _ in range(n):\n    t = t * 2\n    v = t.sum().item()\n"
         "    assert isinstance(v, (float, int))\n", None),
    ],
    ids=["while", "if-break", "via-name", "alloc", "slice", "assert", "np-testing", "memory", "timer",
         "warmup-capture", "selection", "nan-raise", "stream-out", "verify-allclose", "verify-norm", "debug-switch",
         "profiler-range", "readback-assert", "training-step-timer", "plain", "fill-value", "type-asserted"],
)
def test_purpose(body: str, expected) -> None:
    found = purposes(body)
    assert found, "no synchronization recorded"
    assert found[-1] is expected


@pytest.mark.parametrize("body, expected", [
    # into a buffer the call is given, in a counted loop that only computes: an offload, the pipeline's output
    ("bufs = [np.empty(3) for _ in range(n)]\nfor i in range(n):\n    d = cp.arange(3) * i\n    d.get(out=bufs[i])\n",
     Purpose.OUTPUT),
    # the same loop returning the value: a read-back to keep on the device, not an output
    ("out = []\nfor i in range(n):\n    d = cp.arange(3) * i\n    total = d.get()\n", None),
], ids=["into-given", "returned"])
def test_a_copy_into_a_given_buffer_is_a_pipeline_output(body: str, expected) -> None:
    assert purposes(body)[-1] is expected


def test_python_int_comparisons_read_no_gpu_memory() -> None:
    body = ("a = cp.zeros(3)\nb = cp.zeros(3)\nt = torch.zeros(3, device='cuda')\n"
            "ok = a.data.ptr == b.data.ptr\nok = t.shape[0] == n\nok = t.numel() != n\nok = t.size(0) < n\n"
            "if a.data.ptr == b.data.ptr:\n    pass\n")
    assert purposes(body) == []


@pytest.mark.parametrize("purpose", list(Purpose))
def test_needed_purposes(purpose: Purpose) -> None:
    assert purpose.needed is (purpose not in (Purpose.SELECTION, Purpose.CHECK, Purpose.OUTPUT, Purpose.STEP_TIMING))
