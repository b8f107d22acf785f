"""Every rule documents itself in ruff's form, and the generated docs are current."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

from streamlint.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent
REQUIRED = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety")
OPTIONAL = ("Known limits", "References")
HEADING = re.compile(r"^## (.+?)\s*$", re.MULTILINE)
PY_BLOCK = re.compile(r"^```python\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
CODE = re.compile(r"SL\d{3}")
KEBAB = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")

RULES = all_rules()


def _gen_module():
    spec = importlib.util.spec_from_file_location("gen_rule_docs", ROOT / "scripts" / "gen_rule_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sections(doc: str) -> dict[str, str]:
    """Heading -> body, for the `## ` sections of a rule's docs."""
    matches = list(HEADING.finditer(doc))
    return {
        m.group(1): doc[m.end() : matches[i + 1].start() if i + 1 < len(matches) else len(doc)]
        for i, m in enumerate(matches)
    }


def test_there_are_rules():
    assert len(RULES) >= 10


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_sections_in_order(rule):
    doc = rule.docs()
    assert doc.startswith("## What it does"), f"{rule.code}: docs must open with '## What it does'"
    headings = HEADING.findall(doc)
    assert tuple(headings[: len(REQUIRED)]) == REQUIRED, f"{rule.code}: sections {headings}"
    rest = headings[len(REQUIRED) :]
    assert all(h in OPTIONAL for h in rest), f"{rule.code}: unexpected sections {rest}"
    assert rest == sorted(rest, key=OPTIONAL.index), f"{rule.code}: optional sections out of order"
    assert len(set(headings)) == len(headings), f"{rule.code}: a section appears twice"
    for name, body in _sections(doc).items():
        assert body.strip(), f"{rule.code}: section {name!r} is empty"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
@pytest.mark.parametrize("section", ["Example", "Use instead"])
def test_examples_are_python_that_parses(rule, section):
    body = _sections(rule.docs())[section]
    blocks = PY_BLOCK.findall(body)
    assert blocks, f"{rule.code}: no ```python block under {section!r}"
    for block in blocks:
        try:
            ast.parse(block)
        except SyntaxError as err:  # pragma: no cover - the message is the point
            pytest.fail(f"{rule.code} {section!r}: example does not parse: {err}\n{block}")


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_code_name_and_summary_format(rule):
    assert CODE.fullmatch(rule.code), rule.code
    assert KEBAB.fullmatch(rule.name), rule.name
    assert rule.summary.strip() and "\n" not in rule.summary, f"{rule.code}: summary must be one line"
    module = rule.__module__.rsplit(".", 1)[-1]
    expected = f"{rule.code.lower()}_{rule.name.replace('-', '_')}"
    assert module == expected, f"{rule.code}: module {module!r} should be {expected!r}"


def test_codes_and_names_are_unique():
    codes = [r.code for r in RULES]
    names = [r.name for r in RULES]
    assert len(set(codes)) == len(codes), codes
    assert len(set(names)) == len(names), names


def test_generated_docs_are_current():
    problems = _gen_module().check(ROOT)
    assert not problems, "run `python scripts/gen_rule_docs.py`:\n" + "\n".join(problems)


def test_generator_check_detects_stale_pages(tmp_path):
    gen = _gen_module()
    assert gen.check(tmp_path)  # nothing generated yet: every page is missing
    gen.write(tmp_path)
    assert gen.check(tmp_path) == []
    page = tmp_path / "docs" / "rules" / f"{RULES[0].code}.md"
    page.write_text(page.read_text(encoding="utf-8") + "hand edit\n", encoding="utf-8")
    (tmp_path / "docs" / "rules" / "SL999.md").write_text("# SL999 gone\n", encoding="utf-8")
    problems = gen.check(tmp_path)
    assert any("out of date" in line for line in problems), problems
    assert any("SL999" in line for line in problems), problems
    assert gen.main(["--check", "--root", str(tmp_path)]) == 1
    gen.write(tmp_path)
    assert gen.check(tmp_path) == []
    assert not (tmp_path / "docs" / "rules" / "SL999.md").exists()


def test_readme_table_lists_every_rule():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for rule in RULES:
        link = f"[{rule.code}](docs/rules/{rule.code}.md)"
        assert link in readme, f"README.md's rule table lacks {rule.code}"
        assert (ROOT / "docs" / "rules" / f"{rule.code}.md").is_file()
