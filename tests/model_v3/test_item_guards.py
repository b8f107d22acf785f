"""The syntax layer's guard clauses on a loop's item (row 7.59): which tests filter the items a pass works on."""

import libcst as cst

from streamlint.model.syntax.tests import item_guards


def _guarded_tests(source: str) -> list[str]:
    loop = cst.parse_module(source).body[0]
    assert isinstance(loop, cst.For)
    found = item_guards(loop)
    module = cst.Module(body=[])
    return [module.code_for_node(line.test) for line in loop.body.body
            if isinstance(line, cst.If) and id(line.test) in found]


def test_a_test_of_the_item_or_of_a_name_derived_from_it_filters_items():
    assert _guarded_tests(
        "for batch in loader:\n"
        "    ids = batch['input_ids']\n"
        "    if ids.shape[1] > max_len:\n"
        "        continue\n"
        "    if not is_valid(batch):\n"
        "        continue\n"
        "    run(ids)\n"
    ) == ["ids.shape[1] > max_len", "not is_valid(batch)"]


def test_a_test_of_the_counter_or_of_nothing_the_item_gives_is_no_filter():
    assert _guarded_tests(
        "for step, batch in enumerate(loader):\n"
        "    if step < warmup:\n"
        "        continue\n"
        "    if (step + 1) % accum and batch is not None:\n"
        "        continue\n"
        "    if not state.enabled:\n"
        "        continue\n"
        "    run(batch)\n"
    ) == []


def test_the_number_a_range_loop_binds_is_its_counter_and_a_name_rebound_from_elsewhere_is_no_item():
    assert _guarded_tests(
        "for i in range(n):\n"
        "    if i == 0:\n"
        "        continue\n"
        "    run(i)\n"
    ) == []
    assert _guarded_tests(
        "for x in xs:\n"
        "    x = fallback()\n"
        "    if x is None:\n"
        "        continue\n"
        "    run(x)\n"
    ) == []


def test_a_test_of_where_a_tensor_lives_is_told_apart_from_a_flag():
    import libcst as cst

    from streamlint.model.transfer.type_tests import tells_device

    told = {text: tells_device(cst.parse_expression(text)) for text in [
        "x.is_cuda", "not x.is_cpu", 'x.device.type == "cuda"', '"cpu" != x.device.type', "self.verbose",
        'x.device == "cuda"', 'x.dtype == "float16"', 'x.device.type == "mps"']}
    assert told == {"x.is_cuda": True, "not x.is_cpu": True, 'x.device.type == "cuda"': True,
                    '"cpu" != x.device.type': True, "self.verbose": False, 'x.device == "cuda"': False,
                    'x.dtype == "float16"': False, 'x.device.type == "mps"': False}
