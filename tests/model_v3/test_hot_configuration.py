"""Hot paths through configuration: a test of an option against a constant is configuration
(its side runs on every call of the objects so configured), a method of the class is its own
(`self.clip_grad_norm_()` is no in-place kernel), and an optimizer reached through project bases
of one module has a hot `step`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst

from streamlint.model.file_model import analyze_file
from streamlint.model.summary.effects import EffectKind


def _model(source: str, path: str = "prog.py"):
    return analyze_file(cst.parse_module(textwrap.dedent(source)), path)


def _operations(model, qualname: str) -> list:
    """(api, conditional, hot) of every operation of every walk of `qualname`."""
    return [(e.operation.api, e.operation.conditional, c.hot)
            for (q, c), w in model.solved.walks.items() if q == f"{model.module}.{qualname}"
            for e in w.summary.effects if e.kind is EffectKind.OPERATION and e.operation is not None]


MODULE = """
import enum

import torch
from torch import nn


class Mode(enum.Enum):
    FAST = 1
    SLOW = 2


class Cache(nn.Module):
    def __init__(self, buffer_size: int = 0, mode=Mode.FAST):
        super().__init__()
        self.buffer_size = buffer_size
        self.mode = mode

    def forward(self, x, step):
        if self.buffer_size == 0:
            side = torch.cuda.Stream()
        if self.mode == Mode.FAST:
            torch.cuda.synchronize()
        if step == 0:
            torch.cuda.current_stream().synchronize()
        return x
"""


def test_an_option_compared_with_a_constant_is_configuration_not_a_one_off():
    ops = _operations(_model(MODULE), "Cache.forward")
    hot = [(api, conditional) for api, conditional, entry in ops if entry == "Cache.forward"]
    assert ("torch.cuda.Stream", False) in hot  # `self.buffer_size == 0`: an option and a written constant
    assert ("torch.cuda.synchronize", False) in hot  # `self.mode == Mode.FAST`: a member of a module-level class
    # a parameter compared with a constant is still a one-off test
    assert all(conditional for api, conditional, _ in ops if api.endswith("Stream.synchronize"))


OWN_METHOD = """
import torch


class Opt(torch.optim.Optimizer):
    def step(self, closure=None):
        self.clip_grad_norm_()

    def clip_grad_norm_(self):
        torch.cuda.synchronize()
"""


def test_a_method_the_class_defines_is_called_not_taken_for_an_in_place_kernel():
    ops = _operations(_model(OWN_METHOD), "Opt.step")
    assert ("torch.cuda.synchronize", False, "Opt.step") in ops


KEYED = """
from torch import optim


class KeyedOptimizer(optim.Optimizer):
    def step(self, closure=None):
        pass


class OptimizerWrapper(KeyedOptimizer):
    def __init__(self, optimizer):
        self._optimizer = optimizer
"""

CLIPPING = """
import torch

from .keyed import OptimizerWrapper


class Clipping(OptimizerWrapper):
    def __init__(self, optimizer, params):
        super().__init__(optimizer)
        self._params = params

    def step(self, closure=None):
        norm = _total_norm([p.grad for p in self._params])
        super().step(closure)


def _total_norm(grads):
    norm = torch.stack(grads).norm()
    return (norm if grads else torch.tensor(0.0)).to(norm.device)
"""


def test_an_optimizer_through_bases_of_one_project_module_has_a_hot_step(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "keyed.py").write_text(textwrap.dedent(KEYED))
    (pkg / "clipping.py").write_text(textwrap.dedent(CLIPPING))
    path = pkg / "clipping.py"
    model = analyze_file(cst.parse_module(path.read_text()), str(path))
    assert any(c.hot == "Clipping.step" for q, c in model.solved.walks if q == "pkg.clipping._total_norm")


REDUCER = """
import torch


class Reducer:
    def __init__(self, params, overlap, partition):
        self.overlap = overlap
        self.partition = partition
        self.boundary = True
        self.large = None
        self.buffer = torch.empty(8, device="cuda")
        for p in params:
            p.register_hook(self.reduce_ready)

    def reduce_ready(self, grad):
        if self.partition or self.boundary:
            self.reduce_bucket()

    def reduce_bucket(self):
        if self.large is not None:
            self.average(self.large)
            self.large = None
        else:
            self.average(self.buffer)
        if self.large is None:
            self.log()

    def average(self, tensor):
        if self.overlap:
            torch.cuda.synchronize()

    def log(self):
        torch.cuda.current_stream().synchronize()
"""


def test_an_or_of_options_and_a_callee_every_side_calls_keep_the_hook_hot():
    model = _model(REDUCER)
    hot = {(q.rsplit(".", 1)[1], c.hot) for q, c in model.solved.walks if c.hot}
    assert ("reduce_bucket", "Reducer.reduce_ready") in hot  # `self.partition or self.boundary`: options
    assert ("average", "Reducer.reduce_ready") in hot  # both sides of `if self.large is not None:` call it
    assert ("log", "Reducer.reduce_ready") not in hot  # one side of a one-off test only
    ops = _operations(model, "Reducer.reduce_bucket")
    assert ("torch.cuda.synchronize", False, "Reducer.reduce_ready") in ops


CORRELATED = """
import torch


def exclusive(x, first):
    side = torch.cuda.Stream()
    out = torch.ones(8, device="cuda")
    if first:
        with torch.cuda.stream(side):
            out.mul_(2)
    y = x * 2
    if not first:
        y = out + 1
    torch.cuda.synchronize()
    return y


def together(x, rank):
    side = torch.cuda.Stream()
    out = torch.ones(8, device="cuda")
    if rank == 0:
        with torch.cuda.stream(side):
            out.mul_(2)
    y = x * 2
    if rank == 0:
        y = out + 1
    torch.cuda.synchronize()
    return y
"""


def test_tests_of_a_parameter_never_rebound_take_their_sides_together():
    found = {(h.kind.value, h.function.rsplit(".", 1)[1]) for h in _model(CORRELATED).hazards}
    assert ("read_after_write", "together") in found  # both accesses on the side `rank == 0` takes
    assert ("read_after_write", "exclusive") not in found  # `if first:` ... `if not first:`: never both


KEPT_OR = """
import torch


class Opt:
    def __init__(self, params, contiguous, offload, overlap):
        self.contiguous = contiguous or offload
        self.overlap = overlap
        for p in params:
            p.register_hook(self.reduce)

    def reduce(self, grad):
        if self.contiguous:
            self.average(grad)

    def average(self, t):
        if self.overlap:
            torch.cuda.synchronize()
"""


def test_an_or_of_arguments_kept_on_self_is_an_option():
    model = _model(KEPT_OR)
    assert any(q.endswith("Opt.average") and c.hot == "Opt.reduce" for q, c in model.solved.walks)


USUAL_SIDE = """
import torch


class Opt(torch.optim.Optimizer):
    def __init__(self, params, groups):
        self._check = True
        self._groups = groups

    def step(self, closure=None):
        if self._check:
            if closure is not None:
                return
            self._check = False
        if len(self._groups) == 0:
            self.simple()
        else:
            self.grouped()
        if self._check:
            pass
        elif closure is not None:
            self.rare_other()

    def simple(self):
        torch.cuda.current_stream().synchronize()

    def grouped(self):
        torch.cuda.synchronize()

    def rare_other(self):
        torch.cuda.synchronize()
"""


def test_the_other_side_of_a_one_off_is_the_usual_one_and_an_exit_on_a_rare_side_stays_there():
    hot = {(q.rsplit(".", 1)[1], c.hot) for q, c in _model(USUAL_SIDE).solved.walks if c.hot}
    assert ("grouped", "Opt.step") in hot  # the `else` of `len(...) == 0`: every call but the rare one
    assert ("simple", "Opt.step") not in hot  # the one-off side
    assert ("rare_other", "Opt.step") not in hot  # an `elif` keeps its own test


SUPER_INIT = """
import torch


class Base:
    def __init__(self, fused):
        self.fused = fused


class Reducer(Base):
    def __init__(self, fused):
        super().__init__(fused)
        self.stream = torch.cuda.Stream()
"""


def test_super_calls_a_base_method_even_where_the_class_defines_one_of_that_name():
    model = _model(SUPER_INIT)
    walks = [w for (q, c), w in model.solved.walks.items() if q.endswith("Reducer.__init__")]
    assert walks and all(any(attr == "fused" for attr, _ in w.summary.self_stores) for w in walks)
