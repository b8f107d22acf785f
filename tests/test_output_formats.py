"""The registry of output formats and the formats added beside ruff's: full, gitlab,
junit; and the optional `help` of a diagnostic in each format that can show it."""

from __future__ import annotations

import dataclasses
import io
import json
import xml.etree.ElementTree as ET

import pytest
from conftest import LOOP_SNIPPET, PINNED_SNIPPET, run_cli

from streamlint import cli, output
from streamlint.commands.options import DEFAULT_FORMAT
from streamlint.diagnostics import Diagnostic
from streamlint.fixes import Applicability, Edit, Fix

SOURCE = ["import torch", "", "def f(t):", "    return t.cuda()", ""]
FIX = Fix("Pass `non_blocking=True`", Applicability.UNSAFE, (Edit(4, 19, 4, 19, "non_blocking=True"),))
D = Diagnostic("src/a.py", 4, 12, "SL201", "copy without non_blocking", 4, 20, 4, "missing-non-blocking", FIX)
PLAIN = Diagnostic("src/b.py", 2, 1, "SL103", "device sync in a loop", 2, 8, 2, "device-synchronize")


def render(fmt: str, diags, **options) -> str:
    out = io.StringIO()
    output.write(fmt, diags, out, **options)
    return out.getvalue()


def lines_of(_name: str, _cell: int | None) -> list[str]:
    return SOURCE


# ---- the registry ----


def test_cli_choices_come_from_the_registry():
    _, commands = cli.build_parser()
    check = next(a for a in commands["check"]._actions if a.dest == "format")
    assert tuple(check.choices) == output.FORMATS
    assert {"concise", "full", "json", "sarif", "github", "gitlab", "junit"} <= set(output.FORMATS)
    # no default on the command line, so the config's output-format applies; else full, as ruff
    assert check.default is None and DEFAULT_FORMAT == "full"


def test_ruffs_format_names_and_the_old_name_text():
    _, commands = cli.build_parser()
    parse = commands["check"].parse_args
    assert parse([]).format is None  # resolved later: the config's output-format, else full
    assert parse(["--output-format", "concise"]).format == "concise"
    assert parse(["--format", "text"]).format == "concise"  # the one-line format's old name
    assert render("text", [D]) == render("concise", [D])
    with pytest.raises(SystemExit):
        parse(["--format", "yaml"])


@pytest.mark.parametrize("fmt", output.FORMATS)
def test_every_registered_format_renders(fmt):
    assert "src/a.py" in render(fmt, [D, PLAIN], source=lines_of)
    assert "src/a.py" not in render(fmt, [], source=lines_of)


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown output format"):
        render("yaml", [D])


# ---- full ----


def test_full_shows_source_carets_help_and_the_fix_diff():
    text = render("full", [D], source=lines_of)
    assert text.splitlines() == [
        "src/a.py:4:12: SL201 copy without non_blocking",
        "  |",
        "4 |     return t.cuda()",
        "  |            ^^^^^^^^ SL201",
        "  |",
        "  = help: Pass `non_blocking=True`",
        "",
        "Unsafe fix: Pass `non_blocking=True`",
        "@@ -3,2 +3,2 @@",
        " def f(t):",
        "-    return t.cuda()",
        "+    return t.cuda(non_blocking=True)",
        "",
        "Found 1 error.",
        "1 unsafe fix available with `--fix --unsafe-fixes`.",
    ]


def test_full_marks_an_applicable_fix_and_prefers_the_diagnostics_own_help():
    diag = dataclasses.replace(D, help="Copy asynchronously")
    text = render("full", [diag], source=lines_of, unsafe_fixes=True, quiet=True)
    assert text.startswith("src/a.py:4:12: SL201 [*] copy without non_blocking\n")
    assert "= help: Copy asynchronously\n" in text
    assert "Unsafe fix: Pass `non_blocking=True`\n" in text


def test_full_without_source_or_fix():
    text = render("full", [PLAIN], quiet=True)
    assert text == "src/b.py:2:1: SL103 device sync in a loop\n\n"
    no_source = render("full", [D], quiet=True)
    assert "Unsafe fix: Pass `non_blocking=True`\n  4:19-4:19 -> 'non_blocking=True'\n" in no_source


def test_full_format_from_the_command_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "upload.py").write_text(PINNED_SNIPPET)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "--format", "full", "--no-cache", "upload.py")
    assert code == 1, err
    assert out.startswith("upload.py:6:12: SL201 ")
    assert '6 |     return host.to("cuda")\n' in out
    assert "  |            ^^^^^^^^^^^^^^^ SL201\n" in out
    assert '+    return host.to("cuda", non_blocking=True)\n' in out


# ---- help in JSON and SARIF ----


def test_help_in_json_and_sarif():
    diag = dataclasses.replace(PLAIN, help="Wait for one stream instead")
    assert json.loads(render("json", [diag]))[0]["help"] == "Wait for one stream instead"
    assert json.loads(render("json", [PLAIN]))[0]["help"] is None
    result = json.loads(render("sarif", [diag]))["runs"][0]["results"][0]
    assert result["message"]["text"] == "device sync in a loop\nhelp: Wait for one stream instead"
    assert result["properties"] == {"help": "Wait for one stream instead"}
    plain = json.loads(render("sarif", [PLAIN]))["runs"][0]["results"][0]
    assert plain["message"]["text"] == "device sync in a loop" and "properties" not in plain


# ---- gitlab ----


def test_gitlab_code_quality_report(monkeypatch, tmp_path):
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path))
    inside = dataclasses.replace(D, filename=str(tmp_path / "pkg" / "a.py"))
    twin = dataclasses.replace(inside, row=9, end_row=9, noqa_row=9)
    issues = json.loads(render("gitlab", [inside, twin, PLAIN]))
    assert [i["location"]["path"] for i in issues] == ["pkg/a.py", "pkg/a.py", "src/b.py"]
    first = issues[0]
    assert first["check_name"] == "SL201"
    assert first["description"] == "SL201: copy without non_blocking; help: Pass `non_blocking=True`"
    assert issues[2]["description"] == "SL103: device sync in a loop"  # no help, no fix: no help part
    assert first["severity"] == "major"
    assert first["location"]["positions"] == {"begin": {"line": 4, "column": 12}, "end": {"line": 4, "column": 20}}
    fingerprints = [i["fingerprint"] for i in issues]
    assert len(set(fingerprints)) == 3, "identical findings still get distinct fingerprints"
    # Moving the code (another row) keeps the fingerprint: it does not hash the line.
    moved = json.loads(render("gitlab", [dataclasses.replace(inside, row=40, end_row=40)]))
    assert moved[0]["fingerprint"] == fingerprints[0]
    assert json.loads(render("gitlab", [])) == []


# ---- junit ----


def test_junit_report_one_suite_per_file():
    text = render("junit", [D, dataclasses.replace(D, row=5, column=1), PLAIN])
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ET.fromstring(text.split("\n", 1)[1])
    assert root.tag == "testsuites" and root.get("tests") == "3" and root.get("failures") == "3"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["src/a.py", "src/b.py"]
    assert [s.get("tests") for s in suites] == ["2", "1"]
    case = suites[0].find("testcase")
    assert case.get("name") == "org.streamlint.SL201" and case.get("classname") == "src.a"
    assert (case.get("line"), case.get("column")) == ("4", "12")
    failure = case.find("failure")
    assert failure.get("message") == "copy without non_blocking; help: Pass `non_blocking=True`"
    assert failure.text == "line 4, col 12, copy without non_blocking\nhelp: Pass `non_blocking=True`"
    plain = suites[1].find("testcase/failure")
    assert (plain.get("message"), plain.text) == ("device sync in a loop", "line 2, col 1, device sync in a loop")


def test_junit_clean_run_and_hostile_text():
    root = ET.fromstring(render("junit", []).split("\n", 1)[1])
    assert root.get("tests") == "1" and root.get("failures") == "0"
    assert root.find("testsuite/testcase").get("name") == "No errors found"
    # Control characters and markup in a message (quoted source) keep the XML valid.
    hostile = dataclasses.replace(PLAIN, message="bad \x01 <tag> & \"q\"")
    failure = ET.fromstring(render("junit", [hostile]).split("\n", 1)[1]).find(".//failure")
    assert failure.get("message") == "bad \ufffd <tag> & \"q\""


# ---- help from a rule to the cache ----


def test_a_rules_help_reaches_the_diagnostic_and_survives_the_cache():
    from conftest import SL501_SNIPPET

    from streamlint.cache.codec import decode_diagnostic, encode_diagnostic
    from streamlint.checker import check_source
    from streamlint.rules import Finding, Rule

    class Helpful(Rule):
        """## What it does\nTest.\n"""

        code, name, summary = "SL501", "helpful", "helpful"

        def check(self, analysis):
            yield Finding(analysis.module.body[0], "short message", help="what to do")

    [diag] = check_source(SL501_SNIPPET, "a.py", [Helpful])
    assert (diag.message, diag.help) == ("short message", "what to do")
    again = decode_diagnostic("a.py", json.loads(json.dumps(encode_diagnostic(diag))))
    assert again.help == "what to do" and again == diag


# ---- the help where users look ----


def test_default_output_shows_a_help_line_under_each_finding(tmp_path, capsys, monkeypatch):
    (tmp_path / "copies.py").write_text(PINNED_SNIPPET)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "check", "--no-cache", "copies.py")
    assert code == 1 and out.startswith("copies.py:6:12: SL201 ")
    assert "\n  = help: " in out
    code, out, _ = run_cli(capsys, "check", "--no-cache", "--output-format", "concise", "copies.py")
    assert code == 1 and "help:" not in out and out.count("\n") == 3  # the line, the summary, the hint


def test_github_annotation_has_the_help_on_a_second_line():
    line = render("github", [D])
    assert line.endswith("::SL201 copy without non_blocking%0A  help: Pass `non_blocking=True`\n")
    assert render("github", [PLAIN]).endswith("::SL103 device sync in a loop\n")


def test_lsp_diagnostic_message_has_the_help():
    pytest.importorskip("pygls")
    from lsprotocol import types
    from pygls.workspace.position_codec import PositionCodec

    from streamlint.lsp import convert

    codec = PositionCodec(types.PositionEncodingKind.Utf16)
    lines = convert.lines_of("\n".join(SOURCE))
    assert convert.to_lsp(D, lines, codec).message == "copy without non_blocking\nhelp: Pass `non_blocking=True`"
    helped = dataclasses.replace(PLAIN, help="wait for one stream")
    assert convert.to_lsp(helped, lines, codec).message == "device sync in a loop\nhelp: wait for one stream"
    assert convert.to_lsp(PLAIN, lines, codec).message == "device sync in a loop"


# ---- colour ----


def test_color_option_overrides_the_terminal_and_the_environment(tmp_path, capsys, monkeypatch):
    (tmp_path / "copies.py").write_text(PINNED_SNIPPET)
    monkeypatch.chdir(tmp_path)
    argv = ("check", "--no-cache", "--output-format", "concise", "copies.py")
    assert "\x1b[" not in run_cli(capsys, *argv)[1]  # auto, and captured: not a terminal
    assert "\x1b[1;31mSL201\x1b[0m" in run_cli(capsys, *argv, "--color", "always")[1]
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in run_cli(capsys, *argv)[1]
    assert "\x1b[" not in run_cli(capsys, *argv, "--color", "never")[1]
    full = run_cli(capsys, "check", "--no-cache", "copies.py")[1]
    assert "\x1b[1;31mSL201\x1b[0m" in full  # the full format is coloured too
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run_cli(capsys, *argv)[1]
    assert "\x1b[" in run_cli(capsys, *argv, "--color", "always")[1]
    code, _, err = run_cli(capsys, *argv, "--color", "sometimes")
    assert code == 2 and "--color" in err


def test_paths_are_printed_relative_to_the_working_directory(tmp_path, capsys, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "copies.py").write_text(PINNED_SNIPPET)
    monkeypatch.chdir(tmp_path / "pkg")
    for typed in ("./copies.py", "../pkg/copies.py", str(tmp_path / "pkg" / "copies.py")):
        out = run_cli(capsys, "check", "--no-cache", "--output-format", "concise", typed)[1]
        assert out.startswith("copies.py:6:12: SL201 "), typed
    out = run_cli(capsys, "check", "--no-cache", "--output-format", "concise", str(tmp_path / "pkg"))[1]
    assert out.startswith("copies.py:6:12: SL201 ")
    monkeypatch.chdir(tmp_path.parent)  # above: relative, with its directories
    out = run_cli(capsys, "check", "--no-cache", "--output-format", "github", str(tmp_path / "pkg"))[1]
    assert f"file={tmp_path.name}/pkg/copies.py," in out
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path / "other")  # beside it: absolute, as ruff
    out = run_cli(capsys, "check", "--no-cache", "--output-format", "concise", "../pkg/copies.py")[1]
    assert out.startswith(f"{tmp_path / 'pkg' / 'copies.py'}:6:12: SL201 ")


def test_no_op_fix_says_all_checks_passed(tmp_path, capsys, monkeypatch):
    (tmp_path / "clean.py").write_text("import torch\nx = 1\n")
    monkeypatch.chdir(tmp_path)
    assert run_cli(capsys, "check", "--no-cache", "--fix", "clean.py")[:2] == (0, "All checks passed!\n")
    assert run_cli(capsys, "check", "--no-cache", "--fix-only", "clean.py")[:2] == (0, "")
    (tmp_path / "copies.py").write_text(PINNED_SNIPPET)
    code, out, _ = run_cli(capsys, "check", "--no-cache", "--fix", "--output-format", "concise", "copies.py")
    # nothing fixed (the fix is unsafe): nothing about fixing but the hint
    hint = "1 unsafe fix available with `--fix --unsafe-fixes`."
    assert (code, out.splitlines()[1:]) == (1, ["Found 1 error.", hint])
    code, out, _ = run_cli(capsys, "check", "--no-cache", "--fix", "--unsafe-fixes", "copies.py")
    assert (code, out) == (0, "Found 1 error (1 fixed, 0 remaining).\n")


def test_show_fixes_lists_what_was_fixed_and_nothing_when_nothing_was(tmp_path, capsys, monkeypatch):
    (tmp_path / "clean.py").write_text("import torch\nx = 1\n")
    (tmp_path / "copies.py").write_text(PINNED_SNIPPET)
    monkeypatch.chdir(tmp_path)
    argv = ("check", "--no-cache", "--show-fixes", "--output-format", "concise")
    assert run_cli(capsys, *argv, "--fix", "clean.py")[:2] == (0, "All checks passed!\n")
    original = (tmp_path / "copies.py").read_text()
    code, out, _ = run_cli(capsys, *argv, "--fix", "--unsafe-fixes", "copies.py")
    listed = ["", "Fixed 1 error:", "  copies.py:6:12: SL201 [unsafe] Pass `non_blocking=True`", ""]
    # as ruff: the list between the findings and the summary line, a blank line each side
    assert code == 0 and out.splitlines() == [*listed, "Found 1 error (1 fixed, 0 remaining)."]
    (tmp_path / "copies.py").write_text(original)
    code, out, _ = run_cli(capsys, *argv, "--fix-only", "--unsafe-fixes", "copies.py")
    assert code == 0 and out.splitlines() == [*listed, "Fixed 1 error."]
    (tmp_path / "copies.py").write_text(original)
    code, out, _ = run_cli(capsys, *argv, "--fix", "--unsafe-fixes", "-q", "copies.py")
    assert code == 0 and out.splitlines() == listed  # -q drops only the summary, as ruff


def test_show_fixes_lists_nothing_in_the_formats_tools_read(tmp_path, capsys, monkeypatch):
    # (ruff prints no list there either: it would spoil the JSON)
    (tmp_path / "copies.py").write_text(PINNED_SNIPPET)
    monkeypatch.chdir(tmp_path)
    for fixing in ((), ("--fix",)):
        code, out, _ = run_cli(capsys, "check", "--no-cache", "--show-fixes", "--unsafe-fixes", "--output-format",
                               "json", *fixing, "copies.py")  # fmt: skip
        assert json.loads(out) == [] if fixing else [d["code"] for d in json.loads(out)] == ["SL201"]


def test_show_fixes_without_fix_lists_what_fix_would_do_before_the_summary(tmp_path, capsys, monkeypatch):
    (tmp_path / "copies.py").write_text(PINNED_SNIPPET)
    (tmp_path / "loop.py").write_text(LOOP_SNIPPET)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "check", "--no-cache", "--show-fixes", "--unsafe-fixes", "--output-format",
                           "concise", "copies.py", "loop.py")  # fmt: skip
    assert code == 1 and out.splitlines()[2:] == [
        "", "Can fix 1 error:", "  copies.py:6:12: SL201 [unsafe] Pass `non_blocking=True`", "",
        "Found 2 errors.", "[*] 1 fixable with `--fix`.",
    ]  # fmt: skip


# ---- the fix diff looks at the lines it changes, not at the whole file ----


def _whole_file_diff(lines, edits):
    """The diff as it was computed before: of the whole file (the reference)."""
    import difflib

    from streamlint.fixes.apply import apply_edits

    old = "\n".join(lines)
    before, after = old.split("\n"), apply_edits(old, edits).split("\n")
    if before[-1] == after[-1] == "":
        before, after = before[:-1], after[:-1]
    hunks = difflib.unified_diff(before, after, n=1, lineterm="")
    body = [line for line in hunks if not line.startswith(("---", "+++"))]
    return "".join(line + "\n" for line in body)


@pytest.mark.parametrize(
    "edits",
    [
        (Edit(1, 1, 1, 1, "# first\n"),),  # the first line
        (Edit(3, 5, 3, 9, "XXXX"),),  # the middle, a blank line after it
        (Edit(5, 1, 6, 1, ""),),  # a line removed before a blank one
        (Edit(8, 1, 8, 1, "tail\n"),),  # after the last line (the file ends with a break)
        (Edit(7, 3, 7, 7, "z"), Edit(2, 1, 2, 1, "a\n")),  # two places
        (Edit(6, 1, 6, 1, "x\ny\n"),),  # an empty line in the middle
        (Edit(5, 1, 5, 2, "y"),),  # the context after it is an empty line, not the file's end
    ],
)
def test_fix_diff_of_the_window_is_the_diff_of_the_file(edits):
    from streamlint.output import full

    lines = ["import torch", "", "def f(t):", "    return t.cuda()", "x = 1", "", "last = 2", ""]
    diag = dataclasses.replace(D, fix=Fix("f", Applicability.SAFE, edits))
    shown = full.fix_diff(diag, lines).split("\n", 1)[1]
    assert shown == _whole_file_diff(lines, edits)


def test_fix_diff_reads_a_window_whatever_the_files_size(monkeypatch):
    import difflib

    from streamlint.output import full

    sizes = []
    real = difflib.unified_diff
    monkeypatch.setattr(difflib, "unified_diff", lambda a, b, **kw: (sizes.append(len(a)), real(a, b, **kw))[1])
    lines = [f"x{i} = {i}" for i in range(50_000)] + [""]
    diag = dataclasses.replace(D, fix=Fix("f", Applicability.SAFE, (Edit(25_000, 1, 25_000, 3, "y"),)))
    assert "@@ -24999,3 +24999,3 @@" in full.fix_diff(diag, lines)
    assert max(sizes) <= 3
