"""Fixes: before/after fixture pairs, idempotence, the revert path, and the CLI flags.

Pairs live in fixtures/<CODE>/fixes/<case>_before.py and <case>_after.py; the after
file is what `--fix --unsafe-fixes` must produce from the before file, exactly.
"""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from streamlint import cli
from streamlint.config import Settings
from streamlint.diagnostics import Diagnostic
from streamlint.fixes import Applicability, Edit, Fix
from streamlint.fixes import apply as fix_apply
from streamlint.engine.lint import lint_fix as fix_source
from streamlint.fixes.apply import apply_edits, choose, map_position
from streamlint.fixes.runner import write_atomic
from streamlint.rules import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BEFORES = sorted(FIXTURES.glob("SL*/fixes/*_before.py"))


def _after(before: Path) -> Path:
    return before.with_name(before.name.replace("_before.py", "_after.py"))


def _code(before: Path) -> str:
    return before.relative_to(FIXTURES).parts[0]


def _codes(diagnostics) -> list[str]:
    return [d.code for d in diagnostics]


def test_every_fixable_rule_has_a_pair_and_only_those():
    with_pairs = {_code(b) for b in BEFORES}
    fixable = {r.code for r in all_rules() if r.fix_availability != "none"}
    assert fixable, "no rule declares a fix"
    assert fixable == with_pairs
    for before in BEFORES:
        assert _after(before).is_file(), f"{before.name} has no _after.py"


@pytest.mark.parametrize("before", BEFORES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_pair(before: Path):
    code = _code(before)
    source = before.read_text()
    expected = _after(before).read_text()
    outcome = fix_source(source, str(before), Settings(), unsafe=True)
    assert outcome.error is None
    assert code in _codes(outcome.applied)
    assert outcome.source == expected
    # The fixed file is clean for the fixed rule.
    assert code not in _codes(outcome.remaining)
    # Idempotent: nothing left to apply, nothing changes.
    again = fix_source(outcome.source, str(before), Settings(), unsafe=True)
    assert again.applied == [] and again.source == outcome.source
    # --fix alone applies only safe fixes: a pair whose fixes are all unsafe stays as it is.
    safe_only = fix_source(source, str(before), Settings(), unsafe=False)
    levels = {d.fix.applicability for d in outcome.applied}
    if levels == {Applicability.UNSAFE}:
        assert safe_only.applied == [] and safe_only.source == source
    else:
        assert levels == {Applicability.SAFE}, "a pair mixes safe and unsafe fixes"
        assert safe_only.source == expected


@pytest.mark.parametrize("before", BEFORES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
@pytest.mark.parametrize(
    "breakage, reason",
    [
        (lambda text: text + "# edited\n", "did not remove the finding"),  # edits that miss the point
        (lambda text: text + "\ndef broken(:\n", "unparsable"),  # the edits break the syntax
    ],
    ids=["no-effect", "syntax-error"],
)
def test_revert_path(before: Path, breakage, reason, monkeypatch):
    """A fix that does not do what it claims is refused, and named with why."""
    monkeypatch.setattr(fix_apply, "apply_edits", lambda text, edits: breakage(text))
    source = before.read_text()
    outcome = fix_source(source, str(before), Settings(), unsafe=True)
    assert outcome.source == source
    assert outcome.applied == []
    assert outcome.error is None and outcome.refused
    assert all(reason in why and why.startswith(f"the fix for {_code(before)} at ") for why in outcome.refused)
    assert _code(before) in _codes(outcome.remaining)


def _run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_fix_writes_and_is_idempotent(tmp_path, capsys):
    before = FIXTURES / "SL201" / "fixes" / "pinned_and_side_stream_before.py"
    target = tmp_path / "train.py"
    target.write_text(before.read_text())
    os.chmod(target, 0o640)
    code, out, _ = _run(["check", "--fix", "--unsafe-fixes", "--show-fixes", "--select", "SL201", str(target)], capsys)
    assert code == 0, out
    assert target.read_text() == _after(before).read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # permissions kept
    assert "Fixed 4 errors:" in out and "[unsafe] Pass `non_blocking=True`" in out
    assert not list(tmp_path.glob(".*streamlint-tmp"))  # no temporary file left
    first = target.read_bytes()
    code, out, _ = _run(["check", "--fix", "--unsafe-fixes", "--select", "SL201", str(target)], capsys)
    assert code == 0 and target.read_bytes() == first


def test_cli_fix_without_unsafe_changes_nothing(tmp_path, capsys):
    before = FIXTURES / "SL201" / "fixes" / "pinned_and_side_stream_before.py"
    target = tmp_path / "train.py"
    target.write_text(before.read_text())
    code, out, _ = _run(["check", "--fix", "--select", "SL201", str(target)], capsys)
    assert code == 1
    assert target.read_text() == before.read_text()
    assert "4 unsafe fixes available with `--fix --unsafe-fixes`." in out


def test_cli_failed_fix_leaves_file_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(fix_apply, "apply_edits", lambda text, edits: text + "# edited\n")
    before = FIXTURES / "SL404" / "fixes" / "record_stream_before.py"
    target = tmp_path / "prefetch.py"
    target.write_text(before.read_text())
    code, out, err = _run(["check", "--fix", "--unsafe-fixes", str(target)], capsys)
    assert code == 1
    assert target.read_text() == before.read_text()
    assert f"{target}: the fix for SL404" in err and "that fix was not applied" in err
    assert "SL404" in out


def test_cli_diff_does_not_write(tmp_path, capsys):
    before = FIXTURES / "SL501" / "fixes" / "create_once_before.py"
    target = tmp_path / "loop.py"
    target.write_text(before.read_text())
    code, out, err = _run(["check", "--diff", "--unsafe-fixes", str(target)], capsys)
    assert code == 1
    assert target.read_text() == before.read_text()
    assert out.startswith(f"--- {target}\n+++ {target}\n")
    assert "+        self._side = torch.cuda.Stream(priority=-1)" in out
    assert out.endswith("\nWould fix 2 errors.\n")  # after the diff, on stdout, as ruff
    code, out, _ = _run(["check", "--diff", str(target)], capsys)  # safe fixes only: none
    assert code == 0 and out == "No errors would be fixed (2 fixes available with `--unsafe-fixes`).\n"


def test_cli_fix_keeps_bom_and_crlf(tmp_path, capsys):
    before = FIXTURES / "SL201" / "fixes" / "pinned_and_side_stream_before.py"
    target = tmp_path / "crlf.py"
    target.write_bytes(b"\xef\xbb\xbf" + before.read_text().replace("\n", "\r\n").encode())
    code, _, _ = _run(["check", "--fix", "--unsafe-fixes", "--select", "SL201", str(target)], capsys)
    assert code == 0
    data = target.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b"\n" not in data.replace(b"\r\n", b"")  # every line break still CRLF
    assert data[3:].decode().replace("\r\n", "\n") == _after(before).read_text()


def test_cli_stdin_fix_prints_fixed_source(monkeypatch, capsys):
    before = FIXTURES / "SL404" / "fixes" / "record_stream_before.py"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(before.read_bytes())))
    code, out, _ = _run(["check", "--fix", "--unsafe-fixes", "--stdin-filename", "x.py", "-"], capsys)
    assert code == 0
    assert out == _after(before).read_text()


def test_json_output_carries_the_fix(tmp_path, capsys):
    target = tmp_path / "loop.py"
    target.write_text((FIXTURES / "SL501" / "fixes" / "create_once_before.py").read_text())
    code, out, _ = _run(["check", "--format", "json", str(target)], capsys)
    data = json.loads(out)
    fixes = [d["fix"] for d in data if d["code"] == "SL501"]
    assert code == 1 and len(fixes) == 2 and all(f is not None for f in fixes)
    assert {f["applicability"] for f in fixes} == {"unsafe"}
    edit = fixes[0]["edits"][0]
    assert set(edit) == {"content", "location", "end_location"}
    assert set(edit["location"]) == {"row", "column"}


def test_text_marks_safe_fixes():
    from streamlint.output import text

    safe = Fix("Remove it", Applicability.SAFE, (Edit(1, 1, 1, 2, ""),))
    unsafe = Fix("Change it", Applicability.UNSAFE, (Edit(2, 1, 2, 2, ""),))
    diags = [
        Diagnostic("a.py", 1, 1, "SL101", "m", 1, 2, 1, fix=safe),
        Diagnostic("a.py", 2, 1, "SL102", "m", 2, 2, 2, fix=unsafe),
    ]
    out = io.StringIO()
    text.write(diags, out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "a.py:1:1: SL101 [*] m"
    assert lines[1] == "a.py:2:1: SL102 m"
    assert lines[-1] == "[*] 1 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`)."
    # With --unsafe-fixes, unsafe fixes are applicable too: marked, none hidden.
    out = io.StringIO()
    text.write(diags, out, unsafe_fixes=True)
    lines = out.getvalue().splitlines()
    assert lines[1] == "a.py:2:1: SL102 [*] m"
    assert lines[-1] == "[*] 2 fixable with `--fix`."


# -- the edit machinery ------------------------------------------------------------


def test_apply_edits_and_positions():
    old = "a = 1\nb = 2\nccc\n"
    edits = [Edit(2, 1, 2, 1, "x = 0\n"), Edit(3, 2, 3, 3, "YY")]
    new = apply_edits(old, edits)
    assert new == "a = 1\nx = 0\nb = 2\ncYYc\n"
    assert map_position(old, new, edits, 1, 1) == (1, 1)
    assert map_position(old, new, edits, 2, 1) == (3, 1)  # pushed down by the insertion
    assert map_position(old, new, edits, 3, 3) == (4, 4)  # after a replacement that grew
    with pytest.raises(ValueError):
        apply_edits(old, [Edit(1, 1, 1, 4, ""), Edit(1, 2, 1, 3, "z")])


def test_choose_skips_overlaps_and_merges_identical_edits():
    def diag(row, edit):
        return Diagnostic("a.py", row, 1, "SL401", "m", row, 2, row,
                          fix=Fix("f", Applicability.UNSAFE, (edit,)))

    same = Edit(3, 1, 3, 1, "s.wait_stream(t)\n")
    overlapping = [diag(1, Edit(1, 1, 1, 5, "x")), diag(1, Edit(1, 3, 1, 4, "y"))]
    chosen, edits = choose(overlapping + [diag(3, same), diag(4, same)], unsafe=True)
    assert [d.row for d in chosen] == [1, 3, 4]
    assert edits == [Edit(1, 1, 1, 5, "x"), same]
    assert choose(overlapping, unsafe=False) == ([], [])  # unsafe fixes need --unsafe-fixes


def test_write_atomic_refuses_a_file_changed_meanwhile(tmp_path):
    target = tmp_path / "m.py"
    target.write_bytes(b"old\n")
    assert write_atomic(target, b"new\n", expected=b"something else\n") is not None
    assert target.read_bytes() == b"old\n"
    assert write_atomic(target, b"new\n", expected=b"old\n") is None
    assert target.read_bytes() == b"new\n"
