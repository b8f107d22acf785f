"""Rule selection side by side with ruff: for each combination of a config's and the
command line's select / ignore / extend-select and per-file-ignores, streamlint's
selection (settings.py, the one the engine and the cache key use) enables exactly
the rules ruff reports. Ruff's own codes are the universe: streamlint's selection
treats codes and prefixes alike whatever their letters, so ruff's `F4` plays our `SL4`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from streamlint.selection import RuleSelection
from streamlint.settings import Settings, enabled_codes_for_file, fixable_codes

# A file on which ruff reports exactly these codes (of the ones we compare).
SOURCE = 'import os\nl = 1\nx = None\nif x == None:\n    pass\nif x == True:\n    pass\n\n\ndef f():\n    y = 1\n    return f"abc"\n\n\nz = 1 \n'
UNIVERSE = ("E711", "E712", "E741", "F401", "F541", "F841", "W291")


def _ruff() -> list[str] | None:
    exe = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")
    return [exe] if exe else None


RUFF = _ruff()
pytestmark = pytest.mark.skipif(RUFF is None, reason="ruff is not installed (the `test` extra has it)")

# (config: select, ignore, extend-select, per-file-ignores; command line: select, ignore, extend-select)
CASES = [
    (["F"], [], [], {}, None, [], []),
    (["F"], ["F4"], [], {}, None, [], []),
    (["F"], ["F4"], [], {}, ["F"], [], []),  # a CLI --select replaces the config's choice, ignore included
    (None, ["F401"], [], {}, None, [], ["E7"]),
    (["E", "F"], ["E7"], [], {}, ["E711"], [], []),
    (["ALL"], ["E"], ["E711"], {}, None, [], []),
    (["F4"], [], [], {}, None, ["F401"], ["W"]),
    (["E", "F"], ["E711"], [], {}, ["E71"], [], []),
    (None, [], [], {}, ["F"], ["F401"], ["F401"]),  # one layer: ignore wins a tie
    (["F"], [], ["E711"], {}, None, ["E"], []),
    (None, [], [], {}, None, ["E7", "W"], []),
    (["E7", "F"], ["E741"], [], {}, None, [], ["E74"]),  # more specific wins
    (None, [], [], {"a.py": ["F"]}, None, [], []),
    (None, [], [], {"./a.py": ["F4"]}, None, [], []),
    (None, [], [], {"*.py": ["E7"]}, ["E711", "F401"], [], []),
    (["F"], [], [], {"sub/*.py": ["F"]}, None, [], []),  # matches nothing here
]


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def _ruff_codes(tmp_path, cfg_select, cfg_ignore, cfg_extend, per_file, cli_select, cli_ignore, cli_extend) -> set[str]:
    # Ruff's default selection is a few families; streamlint's is every rule. ALL in
    # ruff's config stands for our default.
    lines = ["[lint]", f"select = {_toml_list(cfg_select or ['ALL'])}"]
    lines += [f"ignore = {_toml_list(cfg_ignore)}", f"extend-select = {_toml_list(cfg_extend)}"]
    if per_file:
        lines.append("[lint.per-file-ignores]")
        lines += [f"{json.dumps(k)} = {_toml_list(v)}" for k, v in per_file.items()]
    (tmp_path / "ruff.toml").write_text("\n".join(lines) + "\n")
    (tmp_path / "a.py").write_text(SOURCE)
    argv = [*RUFF, "check", "--no-cache", "--output-format", "json", "--exit-zero"]
    for flag, values in (("--select", cli_select), ("--ignore", cli_ignore), ("--extend-select", cli_extend)):
        if values is not None and (values or flag == "--select"):
            argv += [flag, ",".join(values)]
    done = subprocess.run(argv + ["a.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return {d["code"] for d in json.loads(done.stdout)} & set(UNIVERSE)


def _our_codes(tmp_path, cfg_select, cfg_ignore, cfg_extend, per_file, cli_select, cli_ignore, cli_extend) -> set[str]:
    settings = Settings(
        select=tuple(cfg_select) if cfg_select is not None else None,
        ignore=tuple(cfg_ignore), extend_select=tuple(cfg_extend),
        per_file_ignores=tuple((k, tuple(v)) for k, v in per_file.items()), root=tmp_path,
    ).with_overrides(RuleSelection(
        select=tuple(cli_select) if cli_select is not None else None,
        extend_select=tuple(cli_extend), ignore=tuple(cli_ignore),
    ))  # fmt: skip
    return set(enabled_codes_for_file(settings, str(tmp_path / "a.py"), UNIVERSE))


def test_the_file_triggers_every_code_of_the_universe(tmp_path):
    assert _ruff_codes(tmp_path, None, [], [], {}, None, [], []) == set(UNIVERSE)


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_selection_matches_ruff(tmp_path, case):
    assert _our_codes(tmp_path, *case) == _ruff_codes(tmp_path, *case)


# ---- fixable / unfixable / extend-fixable: which findings' fixes --fix may apply ----

# The codes of the universe whose rules ruff can fix (E741 has no fix).
FIXES = ("E711", "E712", "F401", "F541", "F841", "W291")

# (config: fixable, unfixable, extend-fixable; command line: fixable, unfixable, extend-fixable)
FIX_CASES = [
    (None, [], [], None, [], []),
    (None, ["F"], [], None, [], []),
    (None, ["F"], ["F401"], None, [], []),  # more specific wins
    (["E"], [], [], None, [], []),
    (["E"], [], [], ["F"], [], []),  # the command line's --fixable replaces the config's
    (None, [], [], None, ["E7"], ["E711"]),
    (["ALL"], ["W"], [], None, [], ["W291"]),
    (None, ["F401"], [], ["F4"], [], []),
]


def _ruff_fixable(tmp_path, cfg_fixable, cfg_unfixable, cfg_extend, cli_fixable, cli_unfixable, cli_extend):
    lines = ["[lint]", f"select = {_toml_list(list(UNIVERSE))}"]
    if cfg_fixable is not None:
        lines.append(f"fixable = {_toml_list(cfg_fixable)}")
    lines += [f"unfixable = {_toml_list(cfg_unfixable)}", f"extend-fixable = {_toml_list(cfg_extend)}"]
    (tmp_path / "ruff.toml").write_text("\n".join(lines) + "\n")
    (tmp_path / "a.py").write_text(SOURCE)
    argv = [*RUFF, "check", "--no-cache", "--output-format", "json", "--exit-zero"]
    for flag, values in (("--fixable", cli_fixable), ("--unfixable", cli_unfixable), ("--extend-fixable", cli_extend)):
        if values:
            argv += [flag, ",".join(values)]
    done = subprocess.run(argv + ["a.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return {d["code"] for d in json.loads(done.stdout) if d["fix"] is not None} & set(FIXES)


def _our_fixable(tmp_path, cfg_fixable, cfg_unfixable, cfg_extend, cli_fixable, cli_unfixable, cli_extend):
    settings = Settings(
        fixable=tuple(cfg_fixable) if cfg_fixable is not None else None,
        unfixable=tuple(cfg_unfixable), extend_fixable=tuple(cfg_extend),
        fix_overrides=(RuleSelection(
            select=tuple(cli_fixable) if cli_fixable else None,
            ignore=tuple(cli_unfixable), extend_select=tuple(cli_extend),
        ),),
    )  # fmt: skip
    return set(fixable_codes(settings, FIXES))


def test_every_code_of_the_fix_universe_has_a_fix_in_ruff(tmp_path):
    assert _ruff_fixable(tmp_path, None, [], [], None, [], []) == set(FIXES)


@pytest.mark.parametrize("case", FIX_CASES, ids=[str(i) for i in range(len(FIX_CASES))])
def test_fixable_matches_ruff(tmp_path, case):
    assert _our_fixable(tmp_path, *case) == _ruff_fixable(tmp_path, *case)


# ---- extend-per-file-ignores, in the config and on the command line ----

# (config per-file-ignores, config extend-per-file-ignores, --per-file-ignores, --extend-per-file-ignores)
PER_FILE_CASES = [
    ({"a.py": ["F"]}, {"a.py": ["E7"]}, [], []),
    ({"a.py": ["F"]}, {}, [], ["a.py:W"]),
    ({}, {"*.py": ["E711"]}, [], ["a.py:F401"]),
    ({"a.py": ["F"]}, {}, ["a.py:E"], []),  # --per-file-ignores replaces the config's table
]


def _ruff_per_file(tmp_path, table, extend, cli, cli_extend) -> set[str]:
    lines = ["[lint]", "select = [\"ALL\"]", "[lint.per-file-ignores]"]
    lines += [f"{json.dumps(k)} = {_toml_list(v)}" for k, v in table.items()]
    lines += ["[lint.extend-per-file-ignores]"] + [f"{json.dumps(k)} = {_toml_list(v)}" for k, v in extend.items()]
    (tmp_path / "ruff.toml").write_text("\n".join(lines) + "\n")
    (tmp_path / "a.py").write_text(SOURCE)
    argv = [*RUFF, "check", "--no-cache", "--output-format", "json", "--exit-zero"]
    argv += [f"--per-file-ignores={v}" for v in cli] + [f"--extend-per-file-ignores={v}" for v in cli_extend]
    done = subprocess.run(argv + ["a.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return {d["code"] for d in json.loads(done.stdout)} & set(UNIVERSE)


def _our_per_file(tmp_path, table, extend, cli, cli_extend) -> set[str]:
    from streamlint.commands.options import _per_file_ignores
    from streamlint.config import settings_from_file

    lines = ["[per-file-ignores]"] + [f"{json.dumps(k)} = {_toml_list(v)}" for k, v in table.items()]
    lines += ["[extend-per-file-ignores]"] + [f"{json.dumps(k)} = {_toml_list(v)}" for k, v in extend.items()]
    (tmp_path / "streamlint.toml").write_text("\n".join(lines) + "\n")
    inline = {}  # what the command line's options become (commands/options.py)
    if cli:
        inline["per-file-ignores"] = _per_file_ignores(cli, "--per-file-ignores")
    if cli_extend:
        inline["extend-per-file-ignores"] = _per_file_ignores(cli_extend, "--extend-per-file-ignores")
    settings = _universe_selectors_allowed(lambda: settings_from_file(tmp_path / "streamlint.toml", inline))
    return set(enabled_codes_for_file(settings, str(tmp_path / "a.py"), UNIVERSE))


def _universe_selectors_allowed(load):
    # A config's selectors are checked against streamlint's codes: here ruff's stand in.
    from unittest import mock

    with mock.patch("streamlint.config_table._selectors", lambda items, what: tuple(items)):
        return load()


@pytest.mark.parametrize("case", PER_FILE_CASES, ids=[str(i) for i in range(len(PER_FILE_CASES))])
def test_extend_per_file_ignores_matches_ruff(tmp_path, case):
    assert _our_per_file(tmp_path, *case) == _ruff_per_file(tmp_path, *case)


# ---- suppression comments written the ways ruff warns about ----

RUFF_LINE = "x = None\nif x == None:{comment}\n    pass\n"  # E711 on line 2
SUPPRESSION_CASES = [
    # (ruff's file, streamlint's comment place in LOOP_SNIPPET, what it is)
    ("  # noqa: E711", "  # noqa: SL103", "the usual noqa"),
    ("  # noqa: e711", "  # noqa: sl103", "a lower-case code"),
    ("  # NOQA: E711", "  # NOQA: SL103", "an upper-case NOQA"),
    ("  # noqa: E711, e501", "  # noqa: SL103, sl201", "a lower-case code after a code"),
    ("  # noqa: e501, E711", "  # noqa: sl201, SL103", "a lower-case code first"),
    ("  # noqa:e711", "  # noqa:sl103", "a lower-case code without a space"),
]
FILE_CASES = [
    ('"""Doc."""\n# ruff: noqa: E711\n', '"""Doc."""\n# streamlint: ignore-file[SL103]\n', "", "after a docstring"),
    ("", "", "\n# ruff: noqa: E711\n", "at the end"),
    ("import os  # ruff: noqa: E711\n", "import os  # streamlint: ignore-file[SL103]\n", "", "after code"),
]


def _ruff_reports(text: str) -> bool:
    done = subprocess.run([*RUFF, "check", "--no-cache", "--isolated", "--select", "E711", "--output-format",
                           "json", "--exit-zero", "-"], input=text, capture_output=True, text=True)  # fmt: skip
    return any(d["code"] == "E711" for d in json.loads(done.stdout))


def _we_report(text: str) -> bool:
    from streamlint.engine.lint import lint_text

    return any(d.code == "SL103" for d in lint_text(text, "t.py", Settings()))


@pytest.mark.parametrize("ruff_comment, our_comment, what", SUPPRESSION_CASES, ids=[c[2] for c in SUPPRESSION_CASES])
def test_line_suppression_matches_ruff(ruff_comment, our_comment, what):
    from conftest import LOOP_SNIPPET

    ours = LOOP_SNIPPET.replace("torch.cuda.synchronize()", "torch.cuda.synchronize()" + our_comment)
    assert _we_report(ours) == _ruff_reports(RUFF_LINE.format(comment=ruff_comment))


@pytest.mark.parametrize("ruff_comment, our_comment, what", SUPPRESSION_CASES, ids=[c[2] for c in SUPPRESSION_CASES])
def test_invalid_noqa_warns_on_stderr_as_ruff(tmp_path, capsys, monkeypatch, ruff_comment, our_comment, what):
    # ruff: "warning: Invalid `# noqa` directive on a.py:2: ..." on stderr, whatever
    # the selection; streamlint names the file and line too, and the invalid code.
    from conftest import LOOP_SNIPPET, run_cli

    (tmp_path / "a.py").write_text(RUFF_LINE.format(comment=ruff_comment))
    (tmp_path / "loop.py").write_text(
        LOOP_SNIPPET.replace("torch.cuda.synchronize()", "torch.cuda.synchronize()" + our_comment)
    )
    done = subprocess.run([*RUFF, "check", "--no-cache", "--isolated", "--select", "F401", "a.py"], cwd=tmp_path,
                          capture_output=True, text=True)  # fmt: skip
    monkeypatch.chdir(tmp_path)
    _, _, err = run_cli(capsys, "check", "--no-cache", "--select", "SL201", "loop.py")
    ruff_warns = "Invalid `# noqa` directive on a.py:2:" in done.stderr
    assert ("invalid `# noqa` directive on loop.py:9: `" in err) == ruff_warns
    if ruff_warns:
        written = our_comment.split(":", 1)[1].strip()
        assert f"`{written}` is not a list of codes" in err


@pytest.mark.parametrize("ruff_head, our_head, tail, what", FILE_CASES, ids=[c[3] for c in FILE_CASES])
def test_file_suppression_matches_ruff(ruff_head, our_head, tail, what):
    from conftest import LOOP_SNIPPET

    ours_tail = tail.replace("# ruff: noqa: E711", "# streamlint: ignore-file[SL103]")
    ours = our_head + LOOP_SNIPPET + ours_tail
    assert _we_report(ours) == _ruff_reports(ruff_head + RUFF_LINE.format(comment="") + tail)


# ---- options and config keys, side by side: the same switch does the same thing ----


def _ruff_run(cwd, *argv):
    return subprocess.run([*RUFF, "check", "--no-cache", *argv], cwd=cwd, capture_output=True, text=True)


def _our_run(cwd, *argv):
    env = {**os.environ, "PYTHONPATH": os.path.join(os.path.dirname(os.path.dirname(__file__)), "src")}
    return subprocess.run([sys.executable, "-m", "streamlint", "check", "--no-cache", *argv], cwd=cwd,
                          capture_output=True, text=True, env=env)  # fmt: skip


@pytest.fixture
def twins(tmp_path):
    """ruff/ and ours/: a file with one finding each tool can fix, `x == None` and
    SL201's pinned copy (unsafe fixes both)."""
    from conftest import PINNED_SNIPPET

    (tmp_path / "ruff").mkdir()
    (tmp_path / "ours").mkdir()
    (tmp_path / "ruff" / "a.py").write_text(RUFF_LINE.format(comment=""))
    (tmp_path / "ours" / "a.py").write_text(PINNED_SNIPPET)
    return tmp_path / "ruff", tmp_path / "ours"


@pytest.mark.slow  # starts streamlint in a subprocess, as ruff is
@pytest.mark.parametrize("flag", ["--select", "--ignore", "--extend-select"])
def test_an_empty_selector_is_a_usage_error_in_both(twins, flag):
    theirs, ours = twins
    assert _ruff_run(theirs, flag, "", "a.py").returncode == _our_run(ours, flag, "", "a.py").returncode == 2


@pytest.mark.slow  # starts streamlint in a subprocess, as ruff is
def test_ignore_noqa_in_both(twins):
    theirs, ours = twins
    (theirs / "a.py").write_text(RUFF_LINE.format(comment="  # noqa: E711"))
    (ours / "a.py").write_text((ours / "a.py").read_text().replace('.to("cuda")', '.to("cuda")  # noqa: SL201'))
    for argv, expected in (((), 0), (("--ignore-noqa",), 1)):
        assert _ruff_run(theirs, "--select", "E711", *argv, "a.py").returncode == expected
        assert _our_run(ours, "--select", "SL201", *argv, "a.py").returncode == expected


@pytest.mark.slow  # starts streamlint in a subprocess, as ruff is
def test_add_noqa_with_a_reason_writes_the_same_comment(twins):
    theirs, ours = twins
    _ruff_run(theirs, "--select", "E711", "--add-noqa=legacy code", "a.py")
    _our_run(ours, "--select", "SL201", "--add-noqa=legacy code", "a.py")
    assert "  # noqa: E711 legacy code\n" in (theirs / "a.py").read_text()
    assert "  # noqa: SL201 legacy code\n" in (ours / "a.py").read_text()


@pytest.mark.slow  # starts streamlint in a subprocess, as ruff is
@pytest.mark.parametrize("argv, fixed", [((), True), (("--no-fix",), False), (("--no-unsafe-fixes",), False)])
def test_fix_and_unsafe_fixes_in_the_config(twins, argv, fixed):
    theirs, ours = twins
    (theirs / "ruff.toml").write_text('fix = true\nunsafe-fixes = true\n[lint]\nselect = ["E711"]\n')
    (ours / "streamlint.toml").write_text('fix = true\nunsafe-fixes = true\nselect = ["SL201"]\n')
    before = (theirs / "a.py").read_text(), (ours / "a.py").read_text()
    _ruff_run(theirs, *argv, "a.py")
    _our_run(ours, *argv, "a.py")
    after = (theirs / "a.py").read_text(), (ours / "a.py").read_text()
    assert (after[0] != before[0], after[1] != before[1]) == (fixed, fixed)


@pytest.mark.slow  # starts streamlint in a subprocess, as ruff is
def test_output_format_in_the_config(twins):
    theirs, ours = twins
    (theirs / "ruff.toml").write_text('output-format = "json"\n[lint]\nselect = ["E711"]\n')
    (ours / "streamlint.toml").write_text('output-format = "json"\nselect = ["SL201"]\n')
    assert [d["code"] for d in json.loads(_ruff_run(theirs, "a.py").stdout)] == ["E711"]
    assert [d["code"] for d in json.loads(_our_run(ours, "a.py").stdout)] == ["SL201"]
