"""`streamlint --baseline FILE`: record findings once, then report only new ones."""

from __future__ import annotations

import io
import json
import sys
from collections import Counter

import pytest
from conftest import LOOP_SNIPPET as LOOP
from conftest import PINNED_SNIPPET as PINNED
from conftest import run_cli as run
from conftest import write

from streamlint import baseline
from streamlint.diagnostics import Diagnostic

NEW_COPY = """

def upload_more(rows):
    extra = torch.zeros(rows, pin_memory=True)
    return extra.to("cuda")
"""


@pytest.fixture
def tree(tmp_path, monkeypatch):
    write(tmp_path / "pkg" / "copies.py", PINNED)
    write(tmp_path / "pkg" / "train.py", LOOP)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def record(capsys, *extra) -> tuple[int, str, str]:
    return run(capsys, "--baseline", "baseline.json", "--output-format", "concise", *extra, ".")


def entries(path) -> list[dict]:
    return json.loads(path.read_text())["findings"]


def test_records_when_missing(tree, capsys):
    code, out, err = record(capsys)
    assert (code, out) == (0, "All checks passed!\n")
    assert "recorded 2 findings in the baseline baseline.json" in err
    data = json.loads((tree / "baseline.json").read_text())
    assert data["version"] == 1
    assert [(e["path"], e["code"], e["count"]) for e in data["findings"]] == [
        ("pkg/copies.py", "SL201", 1),
        ("pkg/train.py", "SL103", 1),
    ]
    assert all(len(e["fingerprint"]) == 16 for e in data["findings"])


def test_recording_is_stable(tree, capsys):
    record(capsys)
    first = (tree / "baseline.json").read_bytes()
    run(capsys, "--baseline", "baseline.json", "--update-baseline", ".")
    assert (tree / "baseline.json").read_bytes() == first
    assert first.count(b"\n") == 5 + 2  # braces, version, brackets, one line per finding


def test_line_shifts_still_match(tree, capsys):
    record(capsys)
    for path in (tree / "pkg").iterdir():
        text = path.read_text().replace("import torch\n", "import torch\nimport os\n\n# moved\n", 1)
        path.write_text(text.replace("\n    ", "\n\n    ", 1))
    assert run(capsys, ".")[0] == 1  # the findings are still there...
    code, out, err = record(capsys)
    assert (code, out) == (0, "All checks passed!\n")  # ...and still in the baseline
    assert "2 findings in the baseline not shown" in err
    assert "no longer match" not in err


def test_only_new_findings_are_reported(tree, capsys):
    record(capsys)
    copies = tree / "pkg" / "copies.py"
    copies.write_text(PINNED + NEW_COPY)
    code, out, _ = record(capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("pkg/copies.py:11:12: SL201 `extra.to`")
    assert lines[1] == "Found 1 error."


def test_a_comment_on_the_line_keeps_the_match_but_an_edit_does_not(tree, capsys):
    record(capsys)
    copies = tree / "pkg" / "copies.py"
    copies.write_text(PINNED.replace('to("cuda")', 'to("cuda")  # TODO: non_blocking'))
    assert record(capsys)[0] == 0
    copies.write_text(PINNED.replace('to("cuda")', 'to(device="cuda")'))
    code, out, err = record(capsys)
    assert code == 1 and "pkg/copies.py:6:12: SL201" in out
    assert "1 baseline entry no longer matches a finding" in err


def test_fixed_finding_leaves_a_stale_entry(tree, capsys):
    record(capsys)
    # Fixed: the current stream waits for the side stream on the device, no device-wide sync.
    fixed = LOOP.replace("        torch.cuda.synchronize()\n", "        torch.cuda.current_stream().wait_stream(side)\n")
    (tree / "pkg" / "train.py").write_text(fixed)
    code, out, err = record(capsys)
    assert (code, out) == (0, "All checks passed!\n")
    assert "1 baseline entry no longer matches a finding (fixed or changed)" in err
    assert "--update-baseline" in err
    code, _, err = run(capsys, "--baseline", "baseline.json", "--update-baseline", ".")
    assert code == 0 and "1 finding (0 added, 1 dropped)" in err
    assert [e["path"] for e in entries(tree / "baseline.json")] == ["pkg/copies.py"]
    assert "no longer match" not in record(capsys)[2]


def test_identical_findings_are_counted(tree, capsys):
    twice = PINNED + PINNED.replace("import torch\n", "").replace("upload", "upload2")
    (tree / "pkg" / "copies.py").write_text(twice)
    record(capsys)
    assert [e["count"] for e in entries(tree / "baseline.json")] == [2, 1]
    thrice = twice + PINNED.replace("import torch\n", "").replace("upload", "upload3")
    (tree / "pkg" / "copies.py").write_text(thrice)
    code, out, _ = record(capsys)
    assert code == 1 and out.count("SL201") == 1


def test_update_keeps_entries_of_files_not_checked(tree, capsys):
    record(capsys)
    (tree / "pkg" / "copies.py").write_text(PINNED + NEW_COPY)
    code, _, err = run(capsys, "--baseline", "baseline.json", "--update-baseline", "pkg/copies.py")
    assert code == 0 and "3 findings (1 added, 0 dropped)" in err
    assert [e["path"] for e in entries(tree / "baseline.json")] == [
        "pkg/copies.py", "pkg/copies.py", "pkg/train.py",
    ]  # fmt: skip
    # Checking one file does not call the other file's entries stale.
    assert "no longer match" not in run(capsys, "--baseline", "baseline.json", "pkg/copies.py")[2]
    # A file that is gone takes its entries with it.
    (tree / "pkg" / "train.py").unlink()
    assert "1 baseline entry no longer matches" in record(capsys)[2]
    run(capsys, "--baseline", "baseline.json", "--update-baseline", "pkg/copies.py")
    assert {e["path"] for e in entries(tree / "baseline.json")} == {"pkg/copies.py"}


def test_paths_are_relative_to_the_baseline_file(tree, capsys, monkeypatch):
    record(capsys)
    monkeypatch.chdir(tree / "pkg")
    code, out, _ = run(capsys, "--baseline", "../baseline.json", ".")
    assert (code, out) == (0, "All checks passed!\n")
    code, _, _ = run(capsys, "--baseline", str(tree / "baseline.json"), str(tree / "pkg"))
    assert code == 0


def test_source_errors_are_never_baselined(tree, capsys):
    write(tree / "broken.py", "import torch.cuda\ndef f(:\n")
    code, out, err = record(capsys)
    assert code == 1 and "broken.py:2:" in out and "SL000" in out
    assert "recorded 2 findings" in err
    assert all(e["code"] != "SL000" for e in entries(tree / "baseline.json"))
    assert record(capsys)[0] == 1


def test_json_output_stays_json(tree, capsys):
    record(capsys)
    (tree / "pkg" / "copies.py").write_text(PINNED + NEW_COPY)
    code, out, err = record(capsys, "--format", "json")
    assert code == 1 and [d["code"] for d in json.loads(out)] == ["SL201"]
    assert "in the baseline not shown" in err
    assert record(capsys, "-q")[2] == ""


class TestStdin:
    def feed(self, monkeypatch, text: str) -> None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))

    def test_filtered_by_its_name(self, tree, capsys, monkeypatch):
        record(capsys)
        self.feed(monkeypatch, "# edited in an editor\n" + PINNED)
        argv = ("--baseline", "baseline.json", "-", "--stdin-filename", "pkg/copies.py", "--output-format", "concise")
        assert run(capsys, *argv)[:2] == (0, "All checks passed!\n")
        self.feed(monkeypatch, PINNED + NEW_COPY)
        code, out, _ = run(capsys, *argv)
        assert code == 1 and out.count("SL201") == 1 and "pkg/copies.py:11:" in out

    def test_never_writes_the_baseline(self, tree, capsys, monkeypatch):
        self.feed(monkeypatch, PINNED)
        code, _, err = run(capsys, "--baseline", "b.json", "-", "--stdin-filename", "x.py")
        assert code == 2 and "cannot record the baseline b.json from stdin" in err
        assert not (tree / "b.json").exists()
        record(capsys)
        before = (tree / "baseline.json").read_bytes()
        self.feed(monkeypatch, PINNED)
        code, _, _ = run(capsys, "--baseline", "baseline.json", "--update-baseline", "-")
        assert code == 2 and (tree / "baseline.json").read_bytes() == before


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("{not json", "is not valid JSON"),
        ('{"version": 7, "findings": []}', "found version 7"),
        ('{"version": 1, "findings": [{"path": "a.py"}]}', "malformed entry"),
        ("[]", "expected a streamlint baseline"),
    ],
)
def test_bad_baseline_is_a_clear_error(tree, capsys, content, fragment):
    write(tree / "baseline.json", content)
    code, out, err = record(capsys)
    assert code == 2 and out == ""
    assert fragment in err and err.startswith("streamlint: error: baseline baseline.json")


def test_unwritable_baseline_is_a_clear_error(tree, capsys):
    code, _, err = run(capsys, "--baseline", "missing/dir/b.json", ".")
    assert code == 2 and "cannot write baseline missing/dir/b.json" in err


def test_option_errors(tree, capsys):
    code, _, err = run(capsys, "--update-baseline", ".")
    assert code == 2 and "--update-baseline needs --baseline FILE" in err
    code, _, err = run(capsys, "--baseline", "pkg", ".")
    assert code == 2 and "is a directory" in err


def test_line_numbers_in_messages_do_not_count(tmp_path):
    lines = ["x = a", "y = b"]
    first = Diagnostic("f.py", 1, 1, "SL401", "written at line 3, read before line 12", 1, 2, 1)
    moved = Diagnostic("f.py", 2, 1, "SL401", "written at line 9, read before line 18", 2, 2, 2)
    same_line = ["", "x = a"]
    assert baseline.key_of(first, tmp_path, lines) == baseline.key_of(moved, tmp_path, same_line)
    other = Diagnostic("f.py", 1, 1, "SL401", "written at line 3 by `y`", 1, 2, 1)
    assert baseline.key_of(first, tmp_path, lines) != baseline.key_of(other, tmp_path, lines)


def test_fingerprint_ignores_whitespace_only():
    assert baseline.fingerprint("  x  =\tf(a,  b)\r") == baseline.fingerprint("x = f(a, b)")
    assert baseline.fingerprint("x = f(a, b)") != baseline.fingerprint("x = f(a,b)")


def test_dumps_round_trips(tmp_path):
    counts = Counter({baseline.Key("b.py", "SL103", "ab", "m"): 2, baseline.Key("a.py", "SL201", "cd", "é"): 1})
    path = tmp_path / "b.json"
    baseline.save(path, counts)
    assert baseline.load(path) == counts
    assert path.read_text(encoding="utf-8").index("a.py") < path.read_text(encoding="utf-8").index("b.py")
    assert baseline.dumps(Counter()) == '{\n  "version": 1,\n  "findings": []\n}\n'


def test_fix_reports_only_new_remaining_findings(tree, capsys):
    record(capsys)
    train = tree / "pkg" / "train.py"
    train.write_text(LOOP.replace("side = torch.cuda.Stream()", "side = torch.cuda.Stream()  # noqa: SL501"))
    code, out, _ = run(capsys, "--fix", "--baseline", "baseline.json", ".")
    assert code == 0 and "(1 fixed, 0 remaining)" in out  # the stale noqa (SL900, a safe fix)
    assert train.read_text() == LOOP
    code, _, err = run(capsys, "--diff", "--baseline", "baseline.json", ".")
    assert code == 2 and "not with --diff" in err
    code, _, err = run(capsys, "--add-noqa", "--fix", ".")
    assert code == 2 and "cannot be combined with --fix" in err
