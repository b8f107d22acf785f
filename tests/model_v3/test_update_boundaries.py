"""Gradient accumulation's test marks a training loop's real step (docs/model-cases.md row 7.79)."""

import libcst as cst

from streamlint.model.syntax.children import walk
from streamlint.model.syntax.tests import update_boundaries


def _boundaries(source: str) -> set[str]:
    module = cst.parse_module(source)
    found = update_boundaries(list(walk(module)))
    return {module.code_for_node(n.test) for n in walk(module) if type(n) is cst.If and id(n.test) in found}


def test_update_under_every_n_test_is_the_step():
    source = (
        "for i, b in enumerate(loader):\n"
        "    model(b).backward()\n"
        "    if (i + 1) % accum == 0:\n"
        "        opt.step()\n"
        "    if i % 100 == 0:\n"
        "        print(i)\n"
    )
    assert _boundaries(source) == {"(i + 1) % accum == 0"}


def test_skip_before_the_update_is_the_step():
    source = (
        "for i, b in enumerate(loader):\n"
        "    model(b).backward()\n"
        "    if (i + 1) % accum:\n"
        "        continue\n"
        "    opt.step()\n"
    )
    assert _boundaries(source) == {"(i + 1) % accum"}


def test_update_on_every_pass_leaves_every_n_tests_periodic():
    source = (
        "for i, b in enumerate(loader):\n"
        "    model(b).backward()\n"
        "    opt.step()\n"
        "    if i % 1000 == 0:\n"
        "        scheduler.step()\n"
        "    if (i + 1) % 10:\n"
        "        continue\n"
        "    print(i)\n"
    )
    assert _boundaries(source) == set()


def test_no_training_loop_no_boundary():
    source = (
        "for i, b in enumerate(loader):\n"
        "    if i % 4 == 0:\n"
        "        sim.step()\n"
    )
    assert _boundaries(source) == set()
