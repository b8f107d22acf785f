"""Placement of host reads around nested loops (docs/model-cases.md 7.67) and what `zip(*xs)` yields (9.32):
a nested loop that only reads values back repeats the wait of the loop around it, and does not make that loop
an epoch; a nested loop that queues GPU work on every pass does."""

from __future__ import annotations

import textwrap

from streamlint.config import Settings
from streamlint.engine.lint import lint_text

READING_ONLY = """
    import torch


    def report(model, prompt, steps, k):
        tokens = prompt.cuda()
        out = []
        for _ in range(steps):
            best = torch.softmax(model(tokens)[:, -1], dim=-1)[0].topk(k)
            out.append(best.values.sum().item())
            for value in best.values:
                out.append(value.item())
            tokens = torch.cat([tokens, best.indices[:1].view(1, 1)], dim=1)
        return out
"""

QUEUING = """
    import torch


    def refine(x, weights, steps, rounds):
        x = x.cuda()
        out = []
        for _ in range(rounds):
            for w in weights:
                x = torch.relu(x @ w.cuda())
                out.append(x.sum().item())
            out.append(x.norm().item())
        return out
"""

SPREAD = """
    import torch


    def candidates(logits, steps, k):
        logits = logits.cuda()
        out = []
        for step in range(steps):
            probs = torch.softmax(logits[step], dim=-1)
            for prob, token in zip(*probs.topk(k)):
                out.append((token.item(), prob.item()))
        return out
"""


def _rows(source: str) -> list[tuple[int, str]]:
    text = textwrap.dedent(source)
    return [(d.row, d.code) for d in lint_text(text, "prog.py", Settings.default())]


def test_a_nested_loop_that_only_reads_back_leaves_the_loop_around_it_hot():
    # the step's total and each candidate: the candidate loop queues nothing, so the decoding loop waits every step
    assert _rows(READING_ONLY) == [(10, "SL502"), (12, "SL502")]


def test_a_nested_loop_that_queues_work_every_pass_still_makes_the_loop_around_it_an_epoch():
    # the inner loop's read waits every pass; the outer loop's norm is one wait more per round of them
    assert _rows(QUEUING) == [(11, "SL502")]


def test_zip_of_a_spread_tensor_pairs_its_elements():
    # `zip(*probs.topk(k))`: pairs of a value and an index, elements of the CUDA result, read one by one
    assert _rows(SPREAD) == [(11, "SL502")]
