"""What a ruff user expects of the command line: usage errors, `rule` by name, output
to a file, showing settings and files, file options and inline config on the command
line, config discovery and `extend`, strict codes, `--fix-only`, colour, `# noqa`
without a colon, and notebook messages in cell terms."""

from __future__ import annotations

import io
import json
import re

import pytest
import tomllib
from conftest import LOOP_SNIPPET, PINNED_SNIPPET, write
from conftest import run_cli as run

from streamlint import rules as registry

FAKE = "import torch.cuda\nhit(SL101)\nhit(SL502)\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    write(tmp_path / "clean.py", "import torch\nx = 1\n")
    write(tmp_path / "pkg" / "bad.py", FAKE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def codes(out: str) -> list[str]:
    """The codes of the findings in concise or full output (a finding's first line)."""
    return re.findall(r"^\S+:\d+:\d+: (SL\d+)", out, flags=re.M)


# ---- usage errors: exit 2 with the usage of the command at fault ----


def test_an_unknown_command_is_a_usage_error(project, capsys):
    code, out, err = run(capsys, "rules", "SL401")
    assert (code, out) == (2, "")
    assert "usage: streamlint [-h]" in err
    assert "unrecognized command 'rules' (did you mean 'rule'?)" in err


def test_a_directory_named_like_a_word_is_still_checked(project, capsys, fake_engine):
    assert run(capsys, "pkg")[0] == 1


def test_a_bad_option_after_check_prints_checks_usage(project, capsys):
    code, _, err = run(capsys, "check", "--bogus", ".")
    assert code == 2
    assert err.startswith("usage: streamlint check") and "unrecognized arguments: --bogus" in err


def test_a_bad_option_after_rule_prints_rules_usage(capsys):
    code, _, err = run(capsys, "rule", "SL101", "--bogus")
    assert code == 2 and err.startswith("usage: streamlint rule")


def test_statistics_refuse_a_format_that_cannot_hold_them(project, capsys):
    code, out, err = run(capsys, "check", "--statistics", "--format", "sarif", ".")
    assert (code, out) == (2, "")
    assert "--statistics cannot be shown in the sarif format" in err


# ---- streamlint rule ----


def test_rule_by_name_is_rule_by_code(capsys):
    rule = registry.rule_by_code("SL401")
    by_name = run(capsys, "rule", rule.name)
    assert by_name[0] == 0 and by_name[1] == run(capsys, "rule", "SL401")[1]


def test_rule_knows_sl000(capsys):
    code, out, _ = run(capsys, "rule", "SL000")
    assert code == 0 and out.startswith("# source-error (SL000)") and "cannot be" in out
    assert run(capsys, "rule", "source-error")[1] == out


def test_rule_codes_are_upper_case(capsys):
    code, _, err = run(capsys, "rule", "sl101")
    assert code == 2 and "unknown rule 'sl101'" in err and "did you mean SL101?" in err


# ---- codes validated strictly ----


@pytest.mark.parametrize("flag", ["--select", "--ignore", "--extend-select"])
def test_lower_case_codes_are_refused(project, capsys, flag):
    code, out, err = run(capsys, "check", flag, "sl101", ".")
    assert (code, out) == (2, "")
    assert "invalid value for " + flag in err and "rule codes are upper case (did you mean SL101?)" in err


def test_lower_case_codes_in_a_config_are_refused(project, capsys):
    write(project / "pyproject.toml", '[tool.streamlint]\nignore = ["sl5"]\n')
    code, _, err = run(capsys, "check", ".")
    assert code == 2 and "ignore: unknown rule selector 'sl5': rule codes are upper case" in err


# ---- output ----


@pytest.mark.usefixtures("fake_engine")
def test_output_file(project, capsys):
    code, out, _ = run(capsys, "check", "-o", "report.json", "--format", "json", ".")
    assert (code, out) == (1, "")
    assert [d["code"] for d in json.loads((project / "report.json").read_text())] == ["SL101", "SL502"]
    assert run(capsys, "check", "--output-file", "report.txt", ".")[1] == ""
    assert (project / "report.txt").read_text().endswith("Found 2 errors.\n")


@pytest.mark.usefixtures("fake_engine")
def test_output_file_that_cannot_be_written_is_exit_2(project, capsys):
    code, _, err = run(capsys, "check", "-o", str(project / "missing" / "r.txt"), ".")
    assert code == 2 and "cannot write" in err


@pytest.mark.usefixtures("fake_engine")
def test_colour_follows_the_terminal_and_no_color(project, capsys, monkeypatch):
    assert "\x1b[" not in run(capsys, "check", ".")[1]  # captured: not a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = run(capsys, "check", ".")[1]
    assert "\x1b[1mpkg/bad.py:2:1\x1b[0m: \x1b[1;31mSL101\x1b[0m fake SL101" in out
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run(capsys, "check", ".")[1]


# ---- files and settings ----


def test_show_files_lists_what_would_be_checked(project, capsys):
    write(project / "build" / "gen.py", FAKE)  # excluded by default
    code, out, _ = run(capsys, "check", "--show-files", ".")
    assert code == 0
    assert out.splitlines() == [str(project / "clean.py"), str(project / "pkg" / "bad.py")]


def test_show_settings_shows_the_config_and_the_rules(project, capsys):
    write(project / "pyproject.toml", '[tool.streamlint]\nselect = ["SL1"]\nignore = ["SL101"]\n')
    code, out, _ = run(capsys, "check", "--show-settings", "pkg/bad.py")
    assert code == 0
    assert f"# Resolved settings for: {project / 'pkg' / 'bad.py'}" in out
    assert f"# Settings path: {project / 'pyproject.toml'}" in out
    shown = tomllib.loads(out)  # TOML, as a config would say it
    assert shown["select"] == ["SL1"] and shown["ignore"] == ["SL101"] and shown["timeout"] == 30.0
    assert "SL102" in shown["enabled-rules"] and "SL101" not in shown["enabled-rules"]
    assert "SL201" not in shown["enabled-rules"]


def test_show_settings_is_toml_with_the_command_lines_layers(project, capsys):
    code, out, _ = run(capsys, "check", "--show-settings", "--select", "SL4", "--unfixable", "SL401",
                       "--per-file-ignores", "pkg/*.py:SL402", "pkg/bad.py")  # fmt: skip
    shown = tomllib.loads(out)
    assert shown["overrides"] == [{"select": ["SL4"], "extend-select": [], "ignore": []}]
    assert shown["fix-overrides"] == [{"extend-select": [], "ignore": ["SL401"]}]
    assert shown["per-file-ignores"] == {"pkg/*.py": ["SL402"]}
    assert "SL402" not in shown["enabled-rules"] and "SL401" in shown["enabled-rules"]


@pytest.mark.usefixtures("fake_engine")
def test_exclude_and_extend_exclude_on_the_command_line(project, capsys):
    write(project / "vendored" / "x.py", FAKE)
    assert "vendored/x.py" in run(capsys, "check", ".")[1]
    assert "vendored" not in run(capsys, "check", "--extend-exclude", "vendored", ".")[1]
    # --exclude replaces the defaults (and the config's): build/ is then checked.
    write(project / "build" / "gen.py", FAKE)
    out = run(capsys, "check", "--exclude", "vendored", ".")[1]
    assert "build/gen.py" in out and "vendored" not in out


@pytest.mark.usefixtures("fake_engine")
def test_extend_exclude_on_the_command_line_adds_to_the_configs(project, capsys):
    write(project / "pyproject.toml", '[tool.streamlint]\nextend-exclude = ["vendored"]\n')
    write(project / "vendored" / "x.py", FAKE)
    write(project / "third" / "y.py", FAKE)
    out = run(capsys, "check", "--extend-exclude", "third", ".")[1]
    assert "vendored" not in out and "third" not in out and "pkg/bad.py" in out


@pytest.mark.usefixtures("fake_engine")
def test_per_file_ignores_on_the_command_line(project, capsys):
    out = run(capsys, "check", "--per-file-ignores", "pkg/*.py:SL5", ".")[1]
    assert codes(out) == ["SL101"]
    code, _, err = run(capsys, "check", "--per-file-ignores", "pkg/*.py", ".")
    assert code == 2 and "expected PATTERN:CODES" in err


@pytest.mark.usefixtures("fake_engine")
def test_per_file_ignores_keys_may_start_with_dot_slash(project, capsys):
    write(project / "pyproject.toml", '[tool.streamlint.per-file-ignores]\n"./pkg/bad.py" = ["SL101"]\n')
    assert codes(run(capsys, "check", ".")[1]) == ["SL502"]


@pytest.mark.usefixtures("fake_engine")
def test_config_key_value_overrides_the_config(project, capsys):
    write(project / "pyproject.toml", '[tool.streamlint]\nselect = ["SL1"]\n')
    assert codes(run(capsys, "check", ".")[1]) == ["SL101"]
    assert codes(run(capsys, "check", "--config", 'select = ["SL5"]', ".")[1]) == ["SL502"]
    code, _, err = run(capsys, "check", "--config", "selekt = 1", ".")
    assert code == 2 and "unknown key 'selekt'" in err


@pytest.mark.usefixtures("fake_engine")
def test_isolated_ignores_the_config(project, capsys):
    write(project / "pyproject.toml", '[tool.streamlint]\nselect = ["SL1"]\n')
    assert codes(run(capsys, "check", "--isolated", ".")[1]) == ["SL101", "SL502"]
    assert codes(run(capsys, "check", "--isolated", "--config", 'ignore = ["SL1"]', ".")[1]) == ["SL502"]
    code, _, err = run(capsys, "check", "--isolated", "--config", "pyproject.toml", ".")
    assert code == 2 and "cannot be used with --isolated" in err


@pytest.mark.usefixtures("fake_engine")
@pytest.mark.parametrize(
    "files, winner",
    [
        ({"streamlint.toml": "SL5", "pyproject.toml": "SL1"}, "SL502"),
        ({".streamlint.toml": "SL1", "streamlint.toml": "SL5"}, "SL101"),
        ({".streamlint.toml": "SL5", "pyproject.toml": "SL1"}, "SL502"),
    ],
)
def test_config_files_in_ruffs_order(project, capsys, files, winner):
    for name, selected in files.items():
        table = "[tool.streamlint]\n" if name == "pyproject.toml" else ""
        write(project / name, f'{table}select = ["{selected}"]\n')
    assert codes(run(capsys, "check", ".")[1]) == [winner]


@pytest.mark.usefixtures("fake_engine")
def test_a_nearer_streamlint_toml_wins_over_a_farther_pyproject(project, capsys):
    write(project / "pyproject.toml", '[tool.streamlint]\nselect = ["SL1"]\n')
    write(project / "pkg" / "streamlint.toml", 'select = ["SL5"]\n')
    assert codes(run(capsys, "check", ".")[1]) == ["SL502"]


@pytest.mark.usefixtures("fake_engine")
def test_extend_reads_another_config_first(project, capsys):
    write(project / "base.toml", 'select = ["SL1", "SL5"]\nignore = ["SL101"]\n')
    write(project / "pyproject.toml", '[tool.streamlint]\nextend = "base.toml"\n')
    assert codes(run(capsys, "check", ".")[1]) == ["SL502"]
    write(project / "pyproject.toml", '[tool.streamlint]\nextend = "base.toml"\nignore = []\n')
    assert codes(run(capsys, "check", ".")[1]) == ["SL101", "SL502"]


@pytest.mark.usefixtures("fake_engine")
def test_extend_loops_and_missing_files_are_errors(project, capsys):
    write(project / "a.toml", 'extend = "b.toml"\n')
    write(project / "b.toml", 'extend = "a.toml"\n')
    code, _, err = run(capsys, "check", "--config", "a.toml", ".")
    assert code == 2 and "extend forms a loop" in err
    write(project / "c.toml", 'extend = "nowhere.toml"\n')
    code, _, err = run(capsys, "check", "--config", "c.toml", ".")
    assert code == 2 and "extend names a missing file" in err


# ---- fixing (real rules: SL201's unsafe fix adds non_blocking=True) ----

FIXABLE = PINNED_SNIPPET


def test_fix_only_fixes_and_reports_nothing_left(tmp_path, capsys, monkeypatch):
    write(tmp_path / "loop.py", FIXABLE)
    monkeypatch.chdir(tmp_path)
    before = run(capsys, "check", "--unsafe-fixes", "loop.py")[1]
    assert "SL201 [*]" in before
    code, out, _ = run(capsys, "check", "--fix-only", "--unsafe-fixes", "loop.py")
    assert (code, out) == (0, "Fixed 1 error.\n")
    assert (tmp_path / "loop.py").read_text() != FIXABLE


def test_exit_non_zero_on_fix(tmp_path, capsys, monkeypatch):
    write(tmp_path / "loop.py", FIXABLE)
    monkeypatch.chdir(tmp_path)
    code, _, _ = run(capsys, "check", "--fix-only", "--unsafe-fixes", "--exit-non-zero-on-fix", "loop.py")
    assert code == 1
    # Nothing left to fix: exit 0 again.
    assert run(capsys, "check", "--fix-only", "--unsafe-fixes", "--exit-non-zero-on-fix", "loop.py")[0] == 0


# ---- suppression comments ----


def test_noqa_without_a_colon_suppresses_all_and_sl900_asks_for_the_colon(tmp_path, capsys, monkeypatch):
    # As ruff: `# noqa CODE` is a bare `# noqa` (its PGH004 asks for the colon).
    write(tmp_path / "loop.py", LOOP_SNIPPET.replace("torch.cuda.synchronize()", "torch.cuda.synchronize()  # noqa SL103"))
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "check", "--output-format", "concise", "loop.py")
    assert code == 1 and codes(out) == ["SL900"]
    assert "`# noqa SL103` has no colon, so it suppresses every code here: write `# noqa: SL103`" in out
    code, out, _ = run(capsys, "check", "--diff", "--unsafe-fixes", "loop.py")
    assert "+        torch.cuda.synchronize()  # noqa: SL103" in out
    run(capsys, "check", "--fix", "--unsafe-fixes", "loop.py")
    assert run(capsys, "check", "loop.py")[0] == 0  # with the colon: SL103 suppressed, nothing to say


def test_flake8_style_noqa_of_other_tools_is_not_ours_to_report(tmp_path, capsys, monkeypatch):
    # `# noqa E501` (another tool's code, no colon) is a bare noqa for us too, but asking
    # its author for a colon is flake8's business, not SL900's (real projects are full of them).
    write(tmp_path / "loop.py", LOOP_SNIPPET.replace("torch.cuda.synchronize()", "torch.cuda.synchronize()  # noqa E501"))
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "check", "loop.py")
    assert code == 0 and codes(out) == []


def test_noqa_with_a_colon_and_no_code_suppresses_nothing(tmp_path, capsys, monkeypatch):
    # As ruff: "Invalid `# noqa` directive ... expected a comma-separated list of codes".
    write(tmp_path / "copies.py", PINNED_SNIPPET.replace('return host.to("cuda")', 'return host.to("cuda")  # noqa:'))
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "check", "copies.py")
    assert code == 1 and codes(out) == ["SL201", "SL900"]
    assert "`# noqa:` names no code, so it suppresses nothing" in out


# ---- notebooks ----


def test_notebook_messages_count_lines_in_cells(tmp_path, capsys):
    def cell(kind, *lines):
        extra = {"execution_count": None, "outputs": []} if kind == "code" else {}
        return {"cell_type": kind, "metadata": {}, "source": list(lines), **extra}

    notebook = {
        "cells": [
            cell("markdown", "# title\n"),
            cell("code", "import torch\n", "\n", "t = torch.randn(4, device='cuda')\n"),
            cell("code", "x = 1\n", "host = t.to('cpu', non_blocking=True)\n"),
            cell("code", "y = 2\n", "print(host.numpy())\n"),
        ],
        "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5,
    }  # fmt: skip
    path = write(tmp_path / "nb.ipynb", json.dumps(notebook))
    code, out, _ = run(capsys, "check", "--select", "SL403", str(path))
    line = out.splitlines()[0]
    assert code == 1 and line.startswith(f"{path}:cell 4:2:7: SL403")
    assert "(line 2 of cell 3)" in line
    code, out, _ = run(capsys, "check", "--select", "SL403", "--format", "json", str(path))
    assert json.loads(out)[0]["help"].endswith("before line 2")  # the fix idiom, cell-relative too


# ---- options and config keys a ruff user reaches for ----


@pytest.mark.usefixtures("fake_engine")
def test_extend_per_file_ignores_adds_to_the_configs(project, capsys):
    write(project / "pyproject.toml", '[tool.streamlint.per-file-ignores]\n"pkg/*.py" = ["SL101"]\n')
    assert codes(run(capsys, "check", ".")[1]) == ["SL502"]
    code, out, _ = run(capsys, "check", "--extend-per-file-ignores", "pkg/*.py:SL502", ".")
    assert code == 0 and codes(out) == []  # the config's SL101 still ignored, SL502 too
    # --per-file-ignores replaces the config's table instead.
    assert codes(run(capsys, "check", "--per-file-ignores", "pkg/*.py:SL502", ".")[1]) == ["SL101"]


@pytest.mark.usefixtures("fake_engine")
def test_extend_per_file_ignores_in_the_config(project, capsys):
    write(project / "pyproject.toml", '[tool.streamlint]\nper-file-ignores = {"pkg/*.py" = ["SL101"]}\n'
                                      'extend-per-file-ignores = {"pkg/*.py" = ["SL502"]}\n')  # fmt: skip
    assert run(capsys, "check", ".")[0] == 0


@pytest.mark.usefixtures("fake_engine")
def test_ignore_noqa_reports_what_comments_suppress(project, capsys):
    write(project / "pkg" / "bad.py", "import torch.cuda\nhit(SL101)  # noqa: SL101\n# streamlint: ignore-file\n")
    assert run(capsys, "check", ".")[0] == 0
    code, out, _ = run(capsys, "check", "--ignore-noqa", ".")
    assert code == 1 and codes(out) == ["SL101"]


@pytest.mark.parametrize("flag", ["--select", "--ignore", "--extend-select", "--fixable", "--unfixable"])
def test_an_empty_selector_is_a_usage_error(project, capsys, flag):
    # As ruff: a CI line `--select "$RULES"` with the variable unset must not turn the linter off.
    code, out, err = run(capsys, "check", flag, "", ".")
    assert (code, out) == (2, "")
    assert f'{flag} "" names no rule: give codes, prefixes (SL1) or ALL' in err
    assert run(capsys, "check", flag, " , ", ".")[0] == 2


def test_version_command(capsys):
    from streamlint import __version__

    code, out, err = run(capsys, "version")
    assert (code, out, err) == (0, f"streamlint {__version__}\n", "")
    assert json.loads(run(capsys, "version", "--output-format", "json")[1]) == {"version": __version__}


def test_a_near_miss_still_suggests_a_command(project, capsys):
    assert "did you mean 'version'?" in run(capsys, "versoin")[2]
    assert "did you mean 'verify'?" in run(capsys, "verfy")[2]


def test_fix_and_unsafe_fixes_from_the_config_and_their_negations(tmp_path, capsys, monkeypatch):
    write(tmp_path / "copies.py", FIXABLE)
    write(tmp_path / "pyproject.toml", "[tool.streamlint]\nfix = true\nunsafe-fixes = true\n")
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "check", "--no-fix", "copies.py")[0] == 1  # reported, not fixed
    assert (tmp_path / "copies.py").read_text() == FIXABLE
    run(capsys, "check", "--no-unsafe-fixes", "copies.py")  # SL201's fix is unsafe
    assert (tmp_path / "copies.py").read_text() == FIXABLE
    code, out, _ = run(capsys, "check", "copies.py")  # the config fixes, unsafe fixes included
    assert code == 0 and "(1 fixed, 0 remaining)" in out
    assert "non_blocking=True" in (tmp_path / "copies.py").read_text()


def test_unfixable_and_fixable_choose_which_fixes_apply(tmp_path, capsys, monkeypatch):
    write(tmp_path / "copies.py", FIXABLE)
    monkeypatch.chdir(tmp_path)
    run(capsys, "check", "--fix", "--unsafe-fixes", "--unfixable", "SL2", "copies.py")
    assert (tmp_path / "copies.py").read_text() == FIXABLE
    run(capsys, "check", "--fix", "--unsafe-fixes", "--fixable", "SL4", "copies.py")
    assert (tmp_path / "copies.py").read_text() == FIXABLE
    run(capsys, "check", "--fix", "--unsafe-fixes", "--fixable", "SL4", "--extend-fixable", "SL201", "copies.py")
    assert "non_blocking=True" in (tmp_path / "copies.py").read_text()


def test_unfixable_in_the_config(tmp_path, capsys, monkeypatch):
    write(tmp_path / "copies.py", FIXABLE)
    write(tmp_path / "streamlint.toml", 'unfixable = ["SL201"]\n')
    monkeypatch.chdir(tmp_path)
    run(capsys, "check", "--fix", "--unsafe-fixes", "copies.py")
    assert (tmp_path / "copies.py").read_text() == FIXABLE


@pytest.mark.usefixtures("fake_engine")
def test_output_format_and_show_fixes_from_the_config(project, capsys):
    write(project / "pyproject.toml", '[tool.streamlint]\noutput-format = "json"\n')
    code, out, _ = run(capsys, "check", ".")
    assert code == 1 and [d["code"] for d in json.loads(out)] == ["SL101", "SL502"]
    assert codes(run(capsys, "check", "--output-format", "text", ".")[1]) == ["SL101", "SL502"]


def test_config_keys_are_checked(project, capsys):
    write(project / "pyproject.toml", '[tool.streamlint]\noutput-format = "yaml"\n')
    code, _, err = run(capsys, "check", ".")
    assert code == 2 and "output-format must be one of" in err and "'yaml'" in err
    write(project / "pyproject.toml", '[tool.streamlint]\nfix = "yes"\n')
    code, _, err = run(capsys, "check", ".")
    assert code == 2 and "fix must be true or false" in err


def test_add_noqa_with_a_reason(tmp_path, capsys, monkeypatch):
    write(tmp_path / "loop.py", LOOP_SNIPPET)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "check", "--add-noqa=legacy loop, see #12", "loop.py")
    assert code == 0 and "added 1 noqa code" in err
    assert "torch.cuda.synchronize()  # noqa: SL103 legacy loop, see #12\n" in (tmp_path / "loop.py").read_text()
    assert run(capsys, "check", "loop.py")[0] == 0  # the reason does not spoil the comment


def test_add_noqa_without_a_reason_leaves_the_next_path_a_path(tmp_path, capsys, monkeypatch):
    write(tmp_path / "loop.py", LOOP_SNIPPET)
    monkeypatch.chdir(tmp_path)
    run(capsys, "check", "--add-noqa", "loop.py")
    assert "torch.cuda.synchronize()  # noqa: SL103\n" in (tmp_path / "loop.py").read_text()


LOWER_CASE_WARNING = (
    "streamlint: warning: invalid `# noqa` directive on loop.py:9: `sl103` is not a list of codes "
    "(codes are upper case: `# noqa: SL103`); it suppresses nothing\n"
)


def test_lower_case_noqa_code_warns_and_does_not_suppress(tmp_path, capsys, monkeypatch):
    # As ruff: `# noqa: e711` is an invalid directive; ruff warns on stderr (file:line)
    # and reports the finding.
    write(tmp_path / "loop.py", LOOP_SNIPPET.replace("torch.cuda.synchronize()", "torch.cuda.synchronize()  # noqa: sl103"))
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "check", "loop.py")
    assert code == 1 and codes(out) == ["SL103", "SL900"]
    assert "`# noqa: sl103` suppresses nothing: codes are upper case; write `# noqa: SL103`" in out
    assert err == LOWER_CASE_WARNING
    # whatever the selection, and from the cache too (as ruff)
    for _ in range(2):
        code, out, err = run(capsys, "check", "--select", "SL103", "loop.py")
        assert code == 1 and codes(out) == ["SL103"] and err == LOWER_CASE_WARNING
    assert run(capsys, "check", "--fix", "--select", "SL103", "loop.py")[2] == LOWER_CASE_WARNING
    # stdin, under its name
    monkeypatch.setattr("sys.stdin", io.StringIO((tmp_path / "loop.py").read_text()))
    assert run(capsys, "check", "--stdin-filename", "loop.py", "-")[2] == LOWER_CASE_WARNING
    # none with -q (as ruff), nor with --ignore-noqa (no comment is read)
    assert run(capsys, "check", "-q", "loop.py")[2] == ""
    assert run(capsys, "check", "--ignore-noqa", "loop.py")[2] == ""


@pytest.mark.parametrize(
    "comment, warned, suppressed",
    [
        ("  # noqa: SL103", False, True),
        ("  # noqa: sl103", True, False),
        ("  # NOQA:sl103", True, False),
        ("  # noqa: Sl103", True, False),
        ("  # noqa: sl103, SL201", True, False),  # the list is invalid from its first code
        ("  # noqa: SL103, sl201", False, True),  # as ruff: the list ends before `sl201`
        ("  # noqa: SL103 sl201", False, True),
        ("  # noqa: e501", False, False),  # another tool's code: that tool warns
    ],
)
def test_noqa_codes_read_as_ruff_reads_them(tmp_path, capsys, monkeypatch, comment, warned, suppressed):
    write(tmp_path / "loop.py", LOOP_SNIPPET.replace("torch.cuda.synchronize()", "torch.cuda.synchronize()" + comment))
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "check", "--select", "SL103", "loop.py")
    assert ("invalid `# noqa` directive on loop.py:9:" in err) == warned
    assert (code, codes(out)) == ((0, []) if suppressed else (1, ["SL103"]))


def test_ignore_file_after_the_module_docstring(tmp_path, capsys, monkeypatch):
    write(tmp_path / "loop.py", '"""Training loop."""\n# streamlint: ignore-file[SL103]\n' + LOOP_SNIPPET)
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "check", "loop.py")[0] == 0


@pytest.mark.usefixtures("fake_engine")
def test_verbose_names_each_file_as_it_is_checked(project, capsys):
    code, out, err = run(capsys, "check", "--no-cache", "-v", ".")
    assert code == 1
    assert "streamlint: checked clean.py\n" in err and "streamlint: checked pkg/bad.py\n" in err
    assert "files checked" not in err  # stderr is no terminal here: no counter


@pytest.mark.usefixtures("fake_engine")
def test_watch_checks_again_when_a_file_changes(project, capsys, monkeypatch):
    from streamlint.commands import watch

    polls = []

    def pause(seconds):  # between polls: the user fixes pkg/bad.py on the second
        polls.append(seconds)
        if len(polls) == 2:
            write(project / "pkg" / "bad.py", "import torch.cuda\nhit(SL502)\nhit(SL502)\n")

    real_run = watch.run
    monkeypatch.setattr(watch, "run", lambda *a, **k: real_run(*a, pause=pause, rounds=3, **k))
    code, out, err = run(capsys, "check", "--watch", "--no-cache", ".")
    assert code == 0 and len(polls) == 3
    assert codes(out) == ["SL101", "SL502", "SL502", "SL502"]  # before, then after the edit
    assert "pkg/bad.py changed; checking again" in err and err.count("watching for changes") == 2


def test_watch_refuses_stdin(project, capsys):
    code, _, err = run(capsys, "check", "--watch", "-")
    assert code == 2 and "--watch cannot watch stdin" in err


@pytest.mark.usefixtures("fake_engine")
def test_paths_are_printed_relative_to_the_working_directory(project, capsys, monkeypatch):
    # As ruff: relative inside the working directory however typed, absolute outside it.
    assert run(capsys, "check", str(project / "pkg" / "bad.py"))[1].startswith("pkg/bad.py:2:")
    assert run(capsys, "check", "./pkg/../pkg/bad.py")[1].startswith("pkg/bad.py:2:")
    monkeypatch.chdir(project / "pkg")
    assert run(capsys, "check", "bad.py")[1].startswith("bad.py:2:")
    write(project / "other" / "x.py", FAKE)
    assert run(capsys, "check", "../other/x.py")[1].startswith(f"{project / 'other' / 'x.py'}:2:")


def test_an_unfixable_finding_offers_no_fix(tmp_path, capsys, monkeypatch):
    # As ruff: its JSON gives `"fix": null` for a rule listed in unfixable.
    write(tmp_path / "copies.py", FIXABLE)
    monkeypatch.chdir(tmp_path)
    offered = json.loads(run(capsys, "check", "--unsafe-fixes", "--output-format", "json", "copies.py")[1])
    assert [d["fix"] is not None for d in offered] == [True]
    refused = json.loads(run(capsys, "check", "--unsafe-fixes", "--unfixable", "SL201", "--output-format", "json",
                             "copies.py")[1])  # fmt: skip
    assert [(d["code"], d["fix"]) for d in refused] == [("SL201", None)]


@pytest.mark.usefixtures("fake_engine")
def test_watch_survives_a_configuration_broken_meanwhile(project, capsys, monkeypatch):
    from streamlint.commands import watch

    polls = []

    def pause(seconds):  # poll 1: the config breaks; poll 3: it is mended
        polls.append(seconds)
        if len(polls) == 1:
            write(project / "pyproject.toml", "[tool.streamlint]\nselect = 3\n")
        if len(polls) == 3:
            write(project / "pyproject.toml", '[tool.streamlint]\nselect = ["SL5"]\n')

    real_run = watch.run
    monkeypatch.setattr(watch, "run", lambda *a, **k: real_run(*a, pause=pause, rounds=4, **k))
    code, out, err = run(capsys, "check", "--watch", "--no-cache", ".")
    assert code == 0 and len(polls) == 4
    assert err.count("streamlint: error: ") == 1 and "select" in err
    assert codes(out) == ["SL101", "SL502", "SL502"]  # before, then with the mended config
