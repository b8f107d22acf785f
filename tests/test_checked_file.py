"""The checked file's syntax services (checked_file.py): positions placed from the
statement that holds a node agree with libcst's positions of the whole module; spelling; how
advice spells the frameworks' namespaces in this file."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from streamlint import positions
from streamlint.checked_file import CheckedFile
from streamlint.model.transfer.nodes import preorder

ROOT = Path(__file__).resolve().parent.parent


def _file(source: str, path: str = "") -> CheckedFile:
    source = textwrap.dedent(source)
    return CheckedFile(cst.parse_module(source), path, source)


@pytest.mark.parametrize("fixture", [
    "SL401/positive_numba_producer_consumer.py",
    "SL404/positive_prefetcher_no_record_stream.py",
    "SL103/positive_helper_call_sites_regression.py",
])
def test_positions_of_calls_agree_with_libcst(fixture):
    path = ROOT / "fixtures" / fixture
    checked = _file(path.read_text(), str(path))
    whole = positions.of_module(checked.module)
    calls = [n for n in preorder(checked.module, lambda n: True) if isinstance(n, cst.Call)]
    assert calls
    assert [checked.position(c) for c in calls] == [whole[c] for c in calls]


def test_a_method_whose_text_repeats_is_placed_by_its_class():
    checked = _file("""
        class A:
            def run(self, x):
                return x.cuda()


        class B:
            def run(self, x):
                return x.cuda()
        """)
    calls = [n for n in preorder(checked.module, lambda n: True) if isinstance(n, cst.Call)]
    assert [checked.line_of(c) for c in calls] == [4, 9]


def test_spelling_without_code_generation_and_with_it():
    checked = _file("y = torch.cuda.current_stream(device)[0]\nz = a + b\n")
    first, second = checked.module.body
    assert checked.code(first.body[0].value) == "torch.cuda.current_stream(...)[0]"
    assert checked.code(second.body[0].value) == "a + b"


@pytest.mark.parametrize("source, torch_ns, cupy_ns", [
    ("import torch\nimport cupy as cp\n", "torch.cuda", "cp"),
    ("from deepspeed.accelerator import get_accelerator\n", "get_accelerator()", "cupy"),
    ("from chainer.backends import cuda\n", "torch.cuda", "cuda.cupy"),
    ("x = 1\n", "torch.cuda", "cupy"),
])
def test_how_advice_spells_the_namespaces_here(source, torch_ns, cupy_ns):
    checked = _file(source)
    assert (checked.torch_namespace, checked.cupy_namespace) == (torch_ns, cupy_ns)


def test_the_v3_model_is_built_once_on_first_use():
    checked = _file("import torch\n\ndef f(x):\n    return x.cuda()\n")
    assert checked._model is None
    assert checked.v3 is checked.v3
