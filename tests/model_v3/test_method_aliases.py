"""A class-body assignment of a name to a function binds it as a method (row 6.54): an imported module function is
handed the instance first; a method of the class keeps the instance as its receiver."""

from __future__ import annotations

import textwrap

from streamlint.config import Settings
from streamlint.engine.lint import lint_text

SOURCE = """
import torch


def step_function(runner, batch):
    for chunk in batch.split(4):
        runner.total += chunk.sum().item()


class Runner:
    def __init__(self):
        self.total = 0.0

    def forward(self, batch):
        for chunk in batch.split(4):
            self.total += chunk.max().item()

    step = step_function
    run = forward


def main(data):
    runner = Runner()
    batch = torch.as_tensor(data, device="cuda")
    runner.step(batch)
    runner.run(batch)
"""


def test_aliases_bind_the_function_and_the_method():
    found = [(d.row, d.code) for d in lint_text(textwrap.dedent(SOURCE), "prog.py", Settings.default())]
    # the module function is walked with the instance first and the batch second (its per-chunk read is reported);
    # the method alias is the method itself
    assert (7, "SL502") in found and (16, "SL502") in found


def test_without_the_aliases_the_calls_are_opaque():
    source = textwrap.dedent(SOURCE).replace("    step = step_function\n    run = forward\n", "")
    found = [(d.row, d.code) for d in lint_text(source, "prog.py", Settings.default())]
    assert (7, "SL502") not in found and (16, "SL502") not in found
