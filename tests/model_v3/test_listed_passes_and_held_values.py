"""Two syntax facts of the placement policy: a loop counter tested against listed values runs its side on those passes
only (`syntax/tests.listed_passes`), and a loop or comprehension over a mapping's views passes once per value the
mapping holds (`syntax/sync_purpose.over_held_values`)."""

import libcst as cst
import pytest

from streamlint.model.syntax.sync_purpose import over_held_values
from streamlint.model.syntax.tests import listed_passes


@pytest.mark.parametrize("test, expected", [
    ("step in [i - 1 for i in cfg.eval_steps]", True),
    ("epoch in milestones", True),
    ("rank == 0 and step in save_steps", True),
    ("key in cache", False),  # (not a counter: data decides)
    ("step not in skipped", False),  # (every pass but a few)
    ("step < 25", False),  # (first_passes' shape, not this one)
])
def test_a_counter_among_listed_values(test, expected):
    assert listed_passes(cst.parse_expression(test), ["step", "epoch"]) is expected


@pytest.mark.parametrize("source, expected", [
    ("{k: v.cpu() for k, v in splats.items()}", True),
    ("[v.item() for v in metrics.values()]", True),
    ("[t.item() for t in parts]", False),
    ("[x.item() for x in batch.items(1)]", False),  # (a method with an argument: no mapping view)
    ("{k: v for k, v in zip(names, values)}", False),
])
def test_a_comprehension_over_a_mappings_view(source, expected):
    assert over_held_values(cst.parse_expression(source)) is expected


def test_a_for_loop_over_a_mappings_view():
    loop = cst.parse_statement("for name in splats.keys():\n    pass\n")
    assert over_held_values(loop)
    assert not over_held_values(cst.parse_statement("for b in range(n):\n    pass\n"))


def test_a_range_bounded_by_a_module_constant_of_a_few_is_unrolled():
    from streamlint.model.syntax.sync_purpose import module_constants, unrolled
    module = cst.parse_module("NUM_STREAMS = 4\nNUM_FRAMES = 1000\nCHANGED = 2\nCHANGED += 1\n"
                              "for k in range(NUM_STREAMS):\n    pass\nfor f in range(NUM_FRAMES):\n    pass\n"
                              "for c in range(CHANGED):\n    pass\n")
    constants = module_constants(module)
    assert constants == {"NUM_STREAMS": 4, "NUM_FRAMES": 1000}
    few, many, changed = (s for s in module.body if isinstance(s, cst.For))
    assert unrolled(few, constants) and not unrolled(few)
    assert not unrolled(many, constants)
    assert not unrolled(changed, constants)


def test_a_counter_the_function_steps_is_a_counter():
    from streamlint.model.syntax.children import walk
    from streamlint.model.syntax.tests import stepped_counters
    body = cst.parse_module("self.global_step += 1\nstep += 1\ntotal += loss\nx -= 1\n")
    stepped = stepped_counters(list(walk(body)))
    assert stepped == frozenset({"self.global_step", "step"})
    assert listed_passes(cst.parse_expression("self.global_step in self.upsample_steps"), stepped)
