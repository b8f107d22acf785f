"""Run every rule over every fixture and compare with the `# expect:` comments in it.

Fixtures live in `fixtures/<CODE>/` (flake8-bugbear "eval file" style): ordinary Python
files named `positive_<what>.py` (must produce findings) or `negative_<what>.py` (must
produce no finding of any rule). Each expected finding is a trailing comment on the line
where the offending call or statement starts:

    err, = cudart.cudaMemcpy(d, h, n, kind)  # expect: SL202
    kern[blocks, threads](d_x)  # expect: SL101, SL102

Comments are found with `tokenize`, so `# expect:` inside a string is not an expectation.
An expectation may also follow another comment on its line, which SL900 fixtures need:

    torch.cuda.synchronize()  # noqa: SL103  # expect: SL900

Every file goes through the engine with every rule enabled, as for a user, so
suppression comments and SL900 apply; the set of (line, code) must match exactly.
Files under `fixtures/<CODE>/runtime/` are reserved for the GPU runtime module and are
not collected here.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

from streamlint.rules import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

CODE_RE = re.compile(r"SL\d{3}")
# A comment (or the part of one from a second `#`) that starts with "expect:" is an
# expectation; it must list codes and nothing else.
EXPECT_START_RE = re.compile(r"(?:^|\s)#\s*expect\s*:", re.IGNORECASE)
EXPECT_RE = re.compile(r"^#\s*expect:\s*(SL\d{3}(?:\s*,\s*SL\d{3})*)\s*,?\s*$")


def _is_reserved(rel: Path) -> bool:
    # fixtures/<CODE>/runtime/... holds the runtime module's bad/good pairs, and
    # fixtures/<CODE>/fixes/... the fix before/after pairs (tests/test_fixes.py).
    return len(rel.parts) > 2 and rel.parts[1] in ("runtime", "fixes")


def _fixture_files() -> list[Path]:
    if not FIXTURES.is_dir():
        return []
    return sorted(
        p
        for p in FIXTURES.rglob("*.py")
        if p.is_file() and not _is_reserved(p.relative_to(FIXTURES))
    )


FIXTURE_FILES = _fixture_files()


def _rel(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix()


def _rule_dir_code(path: Path) -> str | None:
    """The rule code of the fixture's directory (fixtures/SL101/x.py -> SL101), if any."""
    rel = path.relative_to(FIXTURES)
    if len(rel.parts) >= 2 and CODE_RE.fullmatch(rel.parts[0]):
        return rel.parts[0]
    return None


def parse_expectations(text: str, name: str = "<fixture>") -> set[tuple[int, str]]:
    """The (row, code) pairs announced by `# expect: CODE[, CODE]` comments.

    Only real comment tokens count. A malformed expectation or the same code twice on
    one line is an error in the fixture, not a silent no-op.
    """
    expected: set[tuple[int, str]] = set()
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    for tok in tokens:
        start = EXPECT_START_RE.search(tok.string) if tok.type == tokenize.COMMENT else None
        if start is None:
            continue
        row = tok.start[0]
        comment = tok.string[start.start() :].strip()
        match = EXPECT_RE.match(comment)
        if match is None:
            raise AssertionError(
                f"{name}:{row}: malformed expectation {comment!r}; "
                "write '# expect: SL101' or '# expect: SL101, SL502'"
            )
        codes = [c.strip() for c in match.group(1).split(",")]
        if len(codes) != len(set(codes)):
            raise AssertionError(f"{name}:{row}: a code is expected twice on one line: {comment!r}")
        for code in codes:
            expected.add((row, code))
    return expected


def _expectations(path: Path) -> set[tuple[int, str]]:
    return parse_expectations(path.read_text(encoding="utf-8"), _rel(path))


def _format(rows: list[tuple[int, str, str]], source_lines: list[str]) -> str:
    out = []
    for row, code, message in rows:
        line = source_lines[row - 1].strip() if 0 < row <= len(source_lines) else ""
        out.append(f"    line {row}: {code} {message}\n        | {line}")
    return "\n".join(out)


def _check_file_kind(path: Path, expected: set[tuple[int, str]]) -> None:
    """A positive fixture expects a finding of its rule; a negative one expects none."""
    name = path.name
    if name.startswith("positive_"):
        code = _rule_dir_code(path)
        if code is not None:
            assert any(c == code for _, c in expected), (
                f"{_rel(path)}: a positive fixture of {code} must expect at least one {code} finding"
            )
        else:
            assert expected, f"{_rel(path)}: a positive fixture must expect at least one finding"
    elif name.startswith("negative_"):
        assert not expected, (
            f"{_rel(path)}: a negative fixture must expect no finding of any rule, "
            f"but expects {sorted(expected)}"
        )


def test_fixtures_exist() -> None:
    assert FIXTURE_FILES, f"no fixture files found under {FIXTURES}"


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[_rel(p) for p in FIXTURE_FILES])
def test_fixture(path: Path) -> None:
    # The '# expect:' comments fit the file's kind, and the findings are what they say. The
    # same (cached) run as the expected-output snapshots of tests/test_expected_output.py.
    from expected_output import lint_fixture

    text = path.read_text(encoding="utf-8")
    expected = parse_expectations(text, _rel(path))
    _check_file_kind(path, expected)
    diagnostics = lint_fixture(path)
    found: dict[tuple[int, str], list[str]] = {}
    for diag in diagnostics:
        found.setdefault((diag.row, diag.code), []).append(diag.message)

    missing = sorted(expected - set(found))
    unexpected = sorted(set(found) - expected)
    if not missing and not unexpected:
        return

    lines = text.splitlines()
    parts = [f"{_rel(path)}: findings differ from the '# expect:' comments"]
    if missing:
        parts.append("  missing (expected but not reported):")
        parts.append(_format([(row, code, "") for row, code in missing], lines))
    if unexpected:
        parts.append("  unexpected (reported but not expected):")
        parts.append(
            _format(
                [(row, code, msg) for row, code in unexpected for msg in found[(row, code)]],
                lines,
            )
        )
    pytest.fail("\n".join(parts), pytrace=False)


def test_every_rule_has_positive_and_negative_fixtures() -> None:
    rules = all_rules()
    assert rules, "no rules are registered (streamlint.rules.all_rules() is empty)"
    problems = []
    for rule in rules:
        directory = FIXTURES / rule.code
        files = [p for p in FIXTURE_FILES if p.parent == directory]
        if not any(p.name.startswith("positive_") for p in files):
            problems.append(f"{rule.code}: no fixtures/{rule.code}/positive_*.py")
        if not any(p.name.startswith("negative_") for p in files):
            problems.append(f"{rule.code}: no fixtures/{rule.code}/negative_*.py")
    assert not problems, "\n".join(problems)


def test_fixture_codes_are_registered_rules() -> None:
    # Catches a typo in a directory name or an expectation (which would otherwise
    # only ever show up as a confusing "missing" finding).
    codes = {rule.code for rule in all_rules()} | {"SL000"}
    problems = []
    for path in FIXTURE_FILES:
        dir_code = _rule_dir_code(path)
        if dir_code is not None and dir_code not in codes:
            problems.append(f"{_rel(path)}: directory {dir_code} is not a registered rule")
        for row, code in sorted(_expectations(path)):
            if code not in codes:
                problems.append(f"{_rel(path)}:{row}: expects unknown rule {code}")
    assert not problems, "\n".join(problems)


def test_expectation_parser_only_counts_comments() -> None:
    text = (
        'msg = "# expect: SL101"\n'
        "x = 1  # expect: SL101, SL502\n"
        "# not an expectation: expect: SL103 inside prose\n"
    )
    assert parse_expectations(text) == {(2, "SL101"), (2, "SL502")}
    after_noqa = "x = 1  # noqa: SL103  # expect: SL900\ny = 2  # noqa#expect: SL101\n"
    assert parse_expectations(after_noqa) == {(1, "SL900")}
    with pytest.raises(AssertionError):
        parse_expectations("x = 1  # expect: SL101 because\n")
    with pytest.raises(AssertionError):
        parse_expectations("x = 1  # expect: SL101, SL101\n")
