"""A host read that follows, with nothing queued between, an earlier read that runs whenever it does (the test of
the `if` it is under) adds no wait of its own (docs/model-cases.md 7.69): it joins the earlier read's finding, or is
silent when the host needs that earlier value; work queued between makes it a wait of its own."""

from __future__ import annotations

import textwrap

import libcst as cst

from streamlint.config import Settings
from streamlint.engine.lint import lint_text
from streamlint.model.syntax.ancestry import Ancestry

WARNED = """
    import logging

    import torch
    import torch.nn as nn

    logger = logging.getLogger(__name__)


    class OffsetBlock(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.conv_offset = nn.Conv2d(channels, 2, 3, padding=1).cuda()

        def forward(self, x, feat):
            offset = self.conv_offset(feat.cuda())
            offset_absmean = torch.mean(torch.abs(offset))
            if offset_absmean > 50:
                logger.warning(f"Offset abs mean is {offset_absmean}, larger than 50.")
            return x + offset.mean()
"""

NEEDED_FIRST = """
    import torch


    def train(model, optimizer, loader, limit):
        for x in loader:
            loss = model(x.cuda()).mean()
            if loss > limit:
                print(f"skipping a batch with loss {loss}")
                continue
            loss.backward()
            optimizer.step()
"""

WORK_BETWEEN = WARNED.replace(
    'logger.warning(f"Offset abs mean is {offset_absmean}, larger than 50.")',
    'scaled = offset / offset_absmean\n                logger.warning(f"largest scaled offset {scaled.max()}")')


def _rows(source: str) -> list[tuple[int, str, str]]:
    text = textwrap.dedent(source)
    return [(d.row, d.code, d.message) for d in lint_text(text, "prog.py", Settings.default())]


def test_a_log_read_under_the_test_that_read_the_value_joins_its_finding():
    (found,) = _rows(WARNED)
    assert found[:2] == (18, "SL502") and found[2].endswith("with 1 more read right after it (line 19)")


def test_a_read_after_a_read_the_host_needs_is_silent():
    # the test decides whether the step goes on (needed); the message's read after it finds the stream drained
    assert _rows(NEEDED_FIRST) == []


def test_work_queued_between_makes_the_later_read_a_wait_of_its_own():
    # the test now decides whether work is queued (the host needs it); the division queued after it is waited for again
    assert [(row, code) for row, code, _ in _rows(WORK_BETWEEN)] == [(20, "SL502")]


def test_runs_whenever_follows_tests_and_branches():
    module = cst.parse_module("if a():\n    b()\nelse:\n    c()\nd()\nif e():\n    f()\ng() and h()\n")
    calls = {n.func.value: n for n in _calls(module)}
    ancestry = Ancestry(module)
    assert ancestry.runs_whenever(calls["a"], calls["b"]) and ancestry.runs_whenever(calls["a"], calls["c"])
    assert not ancestry.runs_whenever(calls["b"], calls["d"])  # (only on one side)
    assert ancestry.runs_whenever(calls["d"], calls["f"]) and ancestry.runs_whenever(calls["e"], calls["f"])
    assert ancestry.runs_whenever(calls["g"], calls["h"]) and not ancestry.runs_whenever(calls["h"], calls["g"])


def _calls(module: cst.Module) -> list[cst.Call]:
    found: list[cst.Call] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    module.visit(Calls())
    return found
