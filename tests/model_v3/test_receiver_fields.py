"""Rows 9.39 and 10.115: what a caller's object holds in its fields (`loop = TrainLoop(model=model)` after
`model.to("cuda")`) refines the class's composed state where that leaves a field untold, for the method called on
the object and the methods it calls on `self`; `list(module.parameters())` is a container of the module's tensors,
never host numbers; and a caller's container of tensors is iterated as tensors named by their place in it."""

from __future__ import annotations

import textwrap

import libcst as cst

from streamlint.config import Settings
from streamlint.engine.lint import lint_text
from streamlint.model.file_model import analyze_file

TRAINER = """
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class Loop:
    def __init__(self, model, data):
        self.model = model
        self.data = data
        self.params = list(self.model.parameters())

    def run(self):
        for batch in self.data:
            self.model(batch.to("cuda", non_blocking=True)).sum().backward()
            self.log_norm()

    def log_norm(self):
        total = 0.0
        for p in self.params:
            total += (p.grad ** 2).sum().item()
        print(total)

"""


def _found(source: str) -> list[tuple[int, str]]:
    return [(d.row, d.code) for d in lint_text(textwrap.dedent(source), "prog.py", Settings.default())]


def test_a_field_the_callers_object_holds_on_the_device_reaches_the_methods():
    source = TRAINER + textwrap.dedent("""
        def main(data):
            model = Net()
            model.to("cuda")
            Loop(model, data).run()
    """)
    assert _found(source) == [(28, "SL502")]


def test_a_field_the_callers_object_holds_on_the_host_stays_silent():
    source = TRAINER + textwrap.dedent("""
        def main(data):
            model = Net()
            model.to("cpu")
            Loop(model, data).run()
    """)
    assert _found(source) == []


def test_no_caller_in_sight_tells_nothing_of_the_fields():
    assert _found(TRAINER) == []


def _summaries(source: str) -> dict:
    model = analyze_file(cst.parse_module(textwrap.dedent(source)), "prog.py")
    return {q.rsplit(".", 1)[1]: w.summary for (q, c), w in model.solved.walks.items() if not c.args}


def test_a_listing_of_a_modules_parameters_is_a_container_not_numbers():
    summaries = _summaries("""
        def params(model):
            return list(model.parameters())
        """)
    assert summaries["params"].returns.kind.value == "container"


def test_a_callers_list_of_cuda_tensors_iterates_as_cuda_tensors():
    source = textwrap.dedent("""
        import torch

        def norms(params):
            return [(p.grad ** 2).sum().item() for p in params]

        def main(steps):
            params = [torch.zeros(4, device="cuda", requires_grad=True) for _ in range(3)]
            for _ in range(steps):
                print(norms(params))
    """)
    assert [code for _, code in _found(source)] == ["SL502"]
