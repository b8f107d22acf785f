"""Side by side with ruff (a test extra): the same findings, read from ruff's own JSON,
rendered by streamlint must print what ruff prints: the concise lines and summary
lines (with and without --unsafe-fixes, after --fix, --fix-only and --diff), where
`--show-fixes` puts its list, `--statistics` in text and JSON, paths relative to the working directory, the help in
GitHub annotations, and when `--color auto` colours."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from streamlint import output
from streamlint.commands.report import use_color
from streamlint.diagnostics import Diagnostic
from streamlint.fixes import Applicability, Edit, Fix
from streamlint.output import FixList, text

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is a test extra"),
]

# F401 has a safe fix (except in an __init__.py: none), E711 an unsafe one.
SAFE_AND_UNSAFE = "import os\nimport sys\nx = 1\nif x == None:\n    pass\n"
UNSAFE_ONLY = "x = 1\nif x == None:\n    pass\nif x == None:\n    pass\n"
CLEAN = "x = 1\n"


def ruff(cwd, *argv, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["ruff", "check", "--isolated", "--no-cache", "--select", "F401,E711", *argv],
        cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False,
    )  # fmt: skip


def as_ours(found: list[dict]) -> list[Diagnostic]:
    """ruff's JSON findings as streamlint diagnostics (codes, names and fixes kept)."""
    out = []
    for d in found:
        fix = None
        if d["fix"] is not None:
            edits = tuple(Edit(e["location"]["row"], e["location"]["column"], e["end_location"]["row"],
                               e["end_location"]["column"], e["content"]) for e in d["fix"]["edits"])
            fix = Fix(d["fix"]["message"], Applicability(d["fix"]["applicability"]), edits)
        out.append(Diagnostic(d["filename"], d["location"]["row"], d["location"]["column"], d["code"],
                              d["message"], d["end_location"]["row"], d["end_location"]["column"],
                              d["noqa_row"], d["name"], fix))  # fmt: skip
    return sorted(out, key=lambda d: (d.filename, d.row, d.column))


def findings(cwd, *paths) -> list[Diagnostic]:
    return as_ours(json.loads(ruff(cwd, "--output-format", "json", *paths).stdout))


def ours(fmt: str, diags, **options) -> str:
    out = io.StringIO()
    output.write(fmt, diags, out, **options)
    return out.getvalue()


@pytest.fixture
def tree(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(SAFE_AND_UNSAFE)
    (tmp_path / "b.py").write_text(UNSAFE_ONLY)
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("import os\n")  # F401 without a fix
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("paths", [["a.py"], ["b.py"], ["clean.py"], ["a.py", "b.py", "pkg"]])
@pytest.mark.parametrize("unsafe", [False, True])
def test_concise_lines_and_summary_as_ruff(tree, paths, unsafe):
    flags = ["--unsafe-fixes"] if unsafe else []
    expected = ruff(tree, "--output-format", "concise", *flags, *paths).stdout
    assert ours("concise", findings(tree, *paths), unsafe_fixes=unsafe) == expected


@pytest.mark.parametrize("paths", [["a.py"], ["b.py"], ["clean.py"], ["a.py", "pkg"], ["a.py", "b.py", "pkg"]])
@pytest.mark.parametrize("unsafe", [False, True])
def test_statistics_as_ruff(tree, paths, unsafe):
    # The fixable column: [*] every finding of the rule fixable, [-] some, [ ] none;
    # left out when nothing is fixable; nothing at all when nothing was found.
    flags = ["--unsafe-fixes"] if unsafe else []
    diags = findings(tree, *paths)
    expected = ruff(tree, "--statistics", *flags, *paths).stdout
    assert ours("concise", diags, statistics=True, unsafe_fixes=unsafe) == expected
    expected_json = ruff(tree, "--statistics", "--output-format", "json", *flags, *paths).stdout
    if diags:  # (ruff prints nothing at all for none; streamlint's JSON is still JSON)
        assert json.loads(ours("json", diags, statistics=True, unsafe_fixes=unsafe)) == json.loads(expected_json)
    quiet = ruff(tree, "--statistics", "-q", *flags, *paths).stdout
    assert ours("concise", diags, statistics=True, unsafe_fixes=unsafe, quiet=True) == quiet


@pytest.mark.parametrize("name, unsafe", [("a.py", False), ("a.py", True), ("b.py", False), ("clean.py", False)])
def test_summary_after_fix_fix_only_and_diff_as_ruff(tree, name, unsafe):
    flags = ["--unsafe-fixes"] if unsafe else []
    original = (tree / name).read_text()
    before = findings(tree, name)
    # --diff: its last line, after the diff (nothing when there is nothing to say)
    diff = ruff(tree, "--diff", *flags, name).stdout.rstrip("\n").rsplit("\n", 1)[-1]
    fix_only = ruff(tree, "--fix-only", *flags, name).stdout  # (fixes the file)
    remaining = findings(tree, name)
    fixed = len(before) - len(remaining)
    expected = text.diff_summary(fixed, remaining, unsafe)
    assert expected == (diff if diff.startswith(("Would fix", "No errors would")) else "")
    assert fix_only == (text.fix_only_summary(fixed, remaining, unsafe) + "\n").lstrip("\n")
    # --fix on the original: "Found N errors (F fixed, R remaining)." and the hint
    (tree / name).write_text(original)
    fixing = ruff(tree, "--fix", "--output-format", "concise", *flags, name).stdout
    assert ours("concise", findings(tree, name), unsafe_fixes=unsafe, fixed=fixed) == fixing


_FIXED_HEADER = re.compile(r"Fixed \d+ errors?:")


def _skeleton(printed: str, item: tuple[str, ...]) -> list[str]:
    """The lines of a --show-fixes output with the listed fixes' lines as one `ITEMS`
    (ruff lists counts per file and rule, streamlint each fix with its place); for the
    full format only from the blank line before the list (its excerpts are compared
    elsewhere)."""
    lines = printed.splitlines()
    out: list[str] = []
    listing = False
    for line in lines:
        if listing and line.startswith(item):
            if out[-1] != "ITEMS":
                out.append("ITEMS")
            continue
        listing = bool(_FIXED_HEADER.fullmatch(line))
        out.append(line)
    return out


@pytest.mark.parametrize("fmt", ["concise", "full"])
@pytest.mark.parametrize("name, unsafe, quiet", [("a.py", False, False), ("a.py", True, False), ("a.py", False, True),
                                                  ("b.py", False, False), ("clean.py", False, False)])  # fmt: skip
def test_show_fixes_lists_them_before_the_summary_as_ruff(tree, fmt, name, unsafe, quiet):
    # ruff: the findings left, a blank line, "Fixed N errors:" and the list, a blank
    # line, then the summary lines (-q drops only those); nothing when nothing was fixed.
    flags = ["--unsafe-fixes"] if unsafe else []
    before = findings(tree, name)
    applied = [d for d in before if d.fix is not None and d.fix.applies(unsafe)]
    argv = ["--fix", "--show-fixes", "--output-format", fmt, *flags, *(["-q"] if quiet else [])]
    theirs = ruff(tree, *argv, name).stdout
    remaining = findings(tree, name)
    assert len(before) - len(remaining) == len(applied)
    mine = ours(fmt, remaining, unsafe_fixes=unsafe, fixed=len(applied), quiet=quiet, fix_list=FixList(applied),
                source=lambda path, cell: (tree / path).read_text().splitlines())  # fmt: skip
    ruff_lines, our_lines = _skeleton(theirs, ("- ", "    ")), _skeleton(mine, ("  ",))
    if fmt == "full":  # from the blank line before the list (the excerpts are compared elsewhere)
        ruff_lines = ruff_lines[ruff_lines.index("ITEMS") - 2 :] if applied else ruff_lines[-2:]
        our_lines = our_lines[our_lines.index("ITEMS") - 2 :] if applied else our_lines[-2:]
    assert our_lines == ruff_lines
    assert ("ITEMS" in our_lines) == bool(applied)


def test_paths_relative_to_the_working_directory_as_ruff(tree, monkeypatch):
    (tree / "sub").mkdir()
    monkeypatch.chdir(tree / "sub")
    for typed in ("../a.py", str(tree / "a.py"), "./../pkg/../a.py"):
        expected = ruff(tree / "sub", "--output-format", "concise", typed).stdout
        diags = [Diagnostic(typed, d.row, d.column, d.code, d.message, d.end_row, d.end_column, d.noqa_row,
                            d.name, d.fix) for d in findings(tree, "a.py")]  # fmt: skip
        assert ours("concise", diags) == expected


def test_github_annotation_carries_the_help_as_ruff(tree):
    ruffs = ruff(tree, "--output-format", "github", "a.py").stdout.splitlines()
    mine = ours("github", findings(tree, "a.py")).splitlines()
    assert len(mine) == len(ruffs) == 3
    for theirs, line in zip(ruffs, mine):
        # (ruff starts the message with the location; both end with the help line)
        assert "%0A  help: " in theirs
        assert line.endswith(theirs[theirs.index("%0A  help: "):])


@pytest.mark.parametrize(
    "env",
    [{}, {"NO_COLOR": "1"}, {"FORCE_COLOR": "1"}, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, {"CLICOLOR_FORCE": "1"},
     {"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, {"FORCE_COLOR": ""}, {"NO_COLOR": "", "FORCE_COLOR": "1"}],
)  # fmt: skip
@pytest.mark.parametrize("mode", ["auto", "always", "never"])
def test_colour_as_ruff(tree, monkeypatch, env, mode):
    clean_env = {k: "" for k in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "CLICOLOR")}
    for key in clean_env:
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    done = subprocess.run(
        ["ruff", "check", "--isolated", "--no-cache", "--select", "F401", "--output-format", "concise",
         "--color", mode, "a.py"],
        cwd=tree, capture_output=True, text=True, check=False,
        env={k: v for k, v in os.environ.items() if k not in clean_env} | env,
    )  # fmt: skip
    assert use_color(io.StringIO(), mode) == ("\x1b[" in done.stdout)


def test_ruff_is_the_one_installed_for_the_tests():
    # (the comparisons above are against whatever ruff the test extra installed)
    assert subprocess.run(["ruff", "--version"], capture_output=True, text=True, check=False).returncode == 0
    assert sys.version_info >= (3, 9)
