"""Each rule's documented examples run (Fixit's VALID/INVALID cases, read from the
docs instead of written twice): every ```python block under "Example" triggers the
rule, and none under "Use instead" does. The docs are what `streamlint rule CODE`,
docs/rules/ and SARIF show, so an example that stopped triggering is a wrong page."""

from __future__ import annotations

import re

import pytest

from streamlint.config import Settings
from streamlint.engine.lint import lint_text
from streamlint.rules import all_rules

HEADING = re.compile(r"^## (.+?)\s*$", re.MULTILINE)
PY_BLOCK = re.compile(r"^```python\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)

RULES = all_rules()


def blocks(doc: str, title: str) -> list[str]:
    """The ```python blocks of the docs' `## title` section."""
    headings = list(HEADING.finditer(doc))
    for i, heading in enumerate(headings):
        if heading.group(1) == title:
            end = headings[i + 1].start() if i + 1 < len(headings) else len(doc)
            return PY_BLOCK.findall(doc[heading.end() : end])
    return []


def codes(snippet: str, rule_code: str) -> list[str]:
    # Every rule enabled, as a user runs it: suppression and SL900 apply too.
    found = lint_text(snippet, f"example_{rule_code.lower()}.py", Settings.default(), rules=RULES)
    return [d.code for d in found]


def _cases(title: str) -> list[tuple]:
    return [
        pytest.param(rule, i, block, id=f"{rule.code}-{i}")
        for rule in RULES
        for i, block in enumerate(blocks(rule.docs(), title), start=1)
    ]


@pytest.mark.parametrize(("rule", "number", "block"), _cases("Example"))
def test_example_triggers_its_rule(rule, number: int, block: str) -> None:
    found = codes(block, rule.code)
    assert "SL000" not in found, f"{rule.code} Example {number} does not parse:\n{block}"
    assert rule.code in found, (
        f"{rule.code} Example {number} produces no {rule.code} finding (found {found}):\n{block}"
    )


@pytest.mark.parametrize(("rule", "number", "block"), _cases("Use instead"))
def test_use_instead_does_not_trigger_its_rule(rule, number: int, block: str) -> None:
    found = codes(block, rule.code)
    assert "SL000" not in found, f"{rule.code} 'Use instead' {number} does not parse:\n{block}"
    assert rule.code not in found, f"{rule.code} 'Use instead' {number} still triggers it:\n{block}"


def test_every_rule_has_examples_of_both_kinds() -> None:
    missing = [
        f"{rule.code}: {title}"
        for rule in RULES
        for title in ("Example", "Use instead")
        if not blocks(rule.docs(), title)
    ]
    assert not missing, missing


def test_a_silent_example_is_caught() -> None:
    # The check is not vacuous: an example the analysis cannot see fails it.
    assert "SL403" not in codes("logits = model(batch)\nx = logits.to('cpu', non_blocking=True)\n", "SL403")
