"""Every rule has a runtime pair; bad.py has the rule's finding, good.py none at all; each
exposes run() with its sizes as parameters."""

from __future__ import annotations

import ast

import pytest

from .rc_data import CODES, FIXTURES, META_CODES
from streamlint.checker import check_source
from streamlint.rules import all_rules
from streamlint.runtime.pairs import find_pairs, is_variant, select


def test_every_rule_has_a_pair():
    # Every rule about GPU code has a pair; meta rules (SL900, about suppression
    # comments) have no GPU behaviour and are listed as such, not silently skipped.
    assert {r.code for r in all_rules() if r.meta} == set(META_CODES)
    codes = {r.code for r in all_rules() if not r.meta}
    assert codes == set(CODES)
    assert {p.code for p in find_pairs([FIXTURES])} == codes


@pytest.mark.parametrize("code", CODES)
def test_bad_is_flagged_and_good_is_clean(code):
    bad = FIXTURES / code / "runtime" / "bad.py"
    good = FIXTURES / code / "runtime" / "good.py"
    bad_codes = {d.code for d in check_source(bad.read_text(), str(bad), all_rules())}
    assert code in bad_codes
    assert check_source(good.read_text(), str(good), all_rules()) == []


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("variant", ["bad", "good"])
def test_run_takes_its_sizes_as_parameters(code, variant):
    tree = ast.parse((FIXTURES / code / "runtime" / f"{variant}.py").read_text())
    runs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run"]
    assert len(runs) == 1
    args = runs[0].args
    assert args.args and len(args.defaults) == len(args.args)  # every size has a default
    assert all(isinstance(d, ast.Constant) or isinstance(d, ast.BinOp) for d in args.defaults)


def test_both_variants_of_a_pair_take_the_same_parameters():
    for code in CODES:
        sigs = []
        for variant in ("bad", "good"):
            tree = ast.parse((FIXTURES / code / "runtime" / f"{variant}.py").read_text())
            run = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run")
            sigs.append([(a.arg, ast.unparse(d)) for a, d in zip(run.args.args, run.args.defaults)])
        assert sigs[0] == sigs[1], code


def test_selection_and_variant_paths():
    pairs = find_pairs([FIXTURES])
    assert [p.code for p in select(pairs, ["SL3"])] == ["SL301", "SL302", "SL303"]
    assert [p.code for p in select(pairs, ["sl401", "SL502"])] == ["SL401", "SL502"]
    assert len(select(pairs, ["ALL"])) == len(pairs)
    assert is_variant(FIXTURES / "SL101" / "runtime" / "bad.py")
    assert not is_variant(FIXTURES / "SL101" / "positive_cupy.py")
    assert [p.code for p in find_pairs([FIXTURES / "SL202" / "runtime" / "good.py"])] == ["SL202"]
