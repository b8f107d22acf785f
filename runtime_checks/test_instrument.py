"""The libcst transform that wraps flagged statements in record_function ranges."""

from __future__ import annotations

from pathlib import Path

import pytest

from .rc_data import FIXTURES
from streamlint.checker import check_source
from streamlint.diagnostics import Diagnostic
from streamlint.rules import all_rules
from streamlint.runtime.instrument import Target, instrument, targets_for


def lint(path: Path):
    text = path.read_text()
    return text, check_source(text, str(path), all_rules())


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*/runtime/bad.py")), ids=lambda p: p.parent.parent.name)
def test_every_bad_fixture_is_instrumented_line_for_line(path):
    text, diags = lint(path)
    result = instrument(text, targets_for(diags, text.count("\n") + 1))
    compile(result.source, str(path), "exec")
    old, new = text.splitlines(), result.source.splitlines()
    assert len(old) == len(new)
    assert not result.skipped
    for d in diags:
        label = f"{d.code}:{d.row}"
        assert result.wrapped[label] == d.row
        assert new[d.row - 1].lstrip().startswith(f"with _streamlint_rf('{label}'")
    changed = {i + 1 for i, (a, b) in enumerate(zip(old, new)) if a != b}
    assert changed == set(result.wrapped.values())


def test_hazard_findings_also_wrap_the_lines_their_message_names():
    text, diags = lint(FIXTURES / "SL401" / "runtime" / "bad.py")
    targets = targets_for(diags, text.count("\n") + 1)
    assert [t.label for t in targets] == ["SL401:48", "SL401:48:ref:47"]


def test_only_hazards_get_reference_targets():
    d = Diagnostic("x.py", 5, 1, "SL301", "copy at line 3 of something", 5, 9, 5)
    assert [t.label for t in targets_for([d])] == ["SL301:5"]


SOURCE = '''\
from __future__ import annotations
import torch

x = torch.zeros(4, device="cuda")  # keep this comment
for step in range(3):
    if x.sum() > 0:
        pass
    while (x.any()):
        break
    y = x.cpu(); z = y + 1
'''


def test_compound_headers_wrap_the_expression_and_keep_comments():
    result = instrument(SOURCE, [
        Target(4, 1, 4, 34, "SL999:4"),
        Target(6, 8, 6, 19, "SL502:6"),
        Target(8, 12, 8, 19, "SL502:8"),
        Target(10, 5, 10, 16, "SL502:10"),
        Target(1, 1, 1, 35, "SL999:1"),
    ])  # fmt: skip
    lines = result.source.splitlines()
    assert lines[3] == "with _streamlint_rf('SL999:4'): x = torch.zeros(4, device=\"cuda\")  # keep this comment"
    assert lines[5] == "    if _streamlint_truth('SL502:6', lambda: x.sum() > 0):"
    assert lines[7] == "    while _streamlint_truth('SL502:8', lambda: x.any()):"
    assert lines[9] == "    with _streamlint_rf('SL502:10'): y = x.cpu(); z = y + 1"
    assert result.skipped == {"SL999:1": "a __future__ import cannot be wrapped"}
    compile(result.source, "s.py", "exec")


def test_two_findings_on_one_statement_nest_in_one_with():
    result = instrument("import torch\ntorch.cuda.synchronize()\n",
                        [Target(2, 1, 2, 25, "SL103:2"), Target(2, 1, 2, 25, "SL502:2")])  # fmt: skip
    assert result.source.splitlines()[1] == (
        "with _streamlint_rf('SL103:2'), _streamlint_rf('SL502:2'): torch.cuda.synchronize()")


def test_awaits_are_not_wrapped_in_a_lambda():
    src = "async def f(x):\n    while await x.ready():\n        pass\n"
    result = instrument(src, [Target(2, 11, 2, 26, "SL502:2")])
    assert result.source == src
    assert result.skipped == {"SL502:2": "the expression awaits or yields"}


def test_the_instrumented_code_runs_and_opens_the_ranges():
    import builtins
    from contextlib import contextmanager

    opened = []

    @contextmanager
    def rf(label):
        opened.append(label)
        yield

    src = "total = 0\nfor i in range(3):\n    total += i\n    if total > 1:\n        total += 10\n"
    result = instrument(src, [Target(3, 5, 3, 15, "SLA:3"), Target(4, 8, 4, 17, "SLB:4")])
    builtins._streamlint_rf = rf
    builtins._streamlint_truth = lambda label, thunk: (opened.append(label), bool(thunk()))[1]
    try:
        scope: dict = {}
        exec(compile(result.source, "s.py", "exec"), scope)
    finally:
        del builtins._streamlint_rf, builtins._streamlint_truth
    assert scope["total"] == 13
    assert opened == ["SLA:3", "SLB:4"] * 3
