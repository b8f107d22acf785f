"""`streamlint --add-noqa`: suppress every current finding in place."""

from __future__ import annotations

import io
import os
import stat
import sys

import pytest

from conftest import LOOP_SNIPPET as LOOP
from conftest import PINNED_SNIPPET as PINNED
from conftest import run_cli as run
from conftest import write
from streamlint.suppression.add_noqa import add_noqa
from streamlint.diagnostics import Diagnostic


@pytest.fixture
def tree(tmp_path, monkeypatch):
    write(tmp_path / "pkg" / "copies.py", PINNED)
    write(tmp_path / "pkg" / "train.py", LOOP)
    write(tmp_path / "clean.py", "import torch\nx = 1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_adds_comments_then_the_tree_is_clean(tree, capsys):
    assert run(capsys, ".")[0] == 1
    code, out, err = run(capsys, "--add-noqa", ".")
    assert code == 0
    assert "added 2 noqa codes in 2 files" in err
    assert out == "All checks passed!\n"
    assert (tree / "pkg" / "copies.py").read_text().splitlines()[5] == (
        '    return host.to("cuda")  # noqa: SL201'
    )
    assert (tree / "pkg" / "train.py").read_text().splitlines()[8] == (
        "        torch.cuda.synchronize()  # noqa: SL103"
    )
    assert (tree / "clean.py").read_text() == "import torch\nx = 1\n"
    assert run(capsys, ".")[:2] == (0, "All checks passed!\n")


def test_second_run_adds_nothing(tree, capsys):
    run(capsys, "--add-noqa", ".")
    before = {p: p.read_bytes() for p in tree.rglob("*.py")}
    code, _, err = run(capsys, "--add-noqa", ".")
    assert code == 0 and "added 0 noqa codes in 0 files" in err
    assert {p: p.read_bytes() for p in tree.rglob("*.py")} == before


def test_merges_with_an_existing_noqa_of_another_tool(tree, capsys):
    path = tree / "pkg" / "copies.py"
    path.write_text(PINNED.replace('to("cuda")', 'to("cuda")  # noqa: E501'))
    run(capsys, "--add-noqa", str(path))
    assert '    return host.to("cuda")  # noqa: E501, SL201\n' in path.read_text()
    assert run(capsys, str(path))[0] == 0


def test_keeps_crlf_bom_and_permissions(tree, capsys):
    path = tree / "pkg" / "copies.py"
    path.write_bytes(b"\xef\xbb\xbf" + PINNED.replace("\n", "\r\n").encode())
    os.chmod(path, 0o640)
    run(capsys, "--add-noqa", str(path))
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\r\n") == data.count(b"\n") == PINNED.count("\n")
    assert b'to("cuda")  # noqa: SL201\r\n' in data
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert not list(path.parent.glob(".*streamlint-tmp"))  # no temporary file left
    assert run(capsys, str(path))[0] == 0


def test_honours_selection_and_existing_suppressions(tree, capsys):
    train = tree / "pkg" / "train.py"
    train.write_text(LOOP.replace("synchronize()", "synchronize()  # streamlint: ignore[SL103]"))
    code, _, err = run(capsys, "--add-noqa", "--select", "SL2", ".")
    assert code == 0 and "added 1 noqa code in 1 file" in err
    assert "noqa" not in train.read_text()
    assert "# noqa: SL201" in (tree / "pkg" / "copies.py").read_text()


def test_unparsable_file_is_reported_and_left_alone(tree, capsys):
    broken = write(tree / "broken.py", "import torch.cuda\ndef f(:\n")
    code, out, err = run(capsys, "--add-noqa", ".")
    assert code == 1
    assert "broken.py:2:" in out and "SL000" in out
    assert broken.read_text() == "import torch.cuda\ndef f(:\n"
    assert "added 2 noqa codes" in err


def test_stale_suppressions_are_reported_not_suppressed(tree, capsys):
    stale = "import torch.cuda\nx = 1  # noqa: SL103\n"
    write(tree / "stale.py", stale)
    code, out, _ = run(capsys, "--add-noqa", "stale.py")
    assert code == 1 and "stale.py:2:8: SL900" in out
    assert (tree / "stale.py").read_text() == stale


def test_stdin_and_baseline_are_usage_errors(tree, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(PINNED.encode())))
    code, _, err = run(capsys, "--add-noqa", "-")
    assert code == 2 and "cannot edit stdin" in err
    code, _, err = run(capsys, "--add-noqa", "--baseline", "b.json", ".")
    assert code == 2 and "cannot be used together" in err
    assert not (tree / "b.json").exists()


def test_a_file_that_cannot_be_written_is_an_error(tree, capsys, monkeypatch):
    import streamlint.suppression.add_noqa

    def refuse(path, data):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(streamlint.suppression.add_noqa, "write_atomic", refuse)
    code, _, err = run(capsys, "--add-noqa", ".")
    assert code == 2
    assert "cannot edit pkg/copies.py: Permission denied" in err
    assert "noqa" not in (tree / "pkg" / "copies.py").read_text()


def _diag(row: int, code: str, end_row: int | None = None) -> Diagnostic:
    return Diagnostic("t.py", row, 1, code, "m", end_row or row, 2, row)


@pytest.mark.parametrize(
    "text, diags, expected",
    [
        # The first row ends inside a string: the comment goes on the statement's last row.
        ('x = f("""\nabc""", y)\n', [_diag(1, "SL101")], 'x = f("""\nabc""", y)  # noqa: SL101\n'),
        # ...and after a backslash it cannot go either.
        ("z = a + \\\n    b\n", [_diag(1, "SL102")], "z = a + \\\n    b  # noqa: SL102\n"),
        # Inside brackets a comment may end the first row.
        ("y = g(a,\n      b)\n", [_diag(1, "SL101")], "y = g(a,  # noqa: SL101\n      b)\n"),
        # Several findings on one row: one comment, codes sorted; trailing blanks dropped.
        ("w = 1   \n", [_diag(1, "SL502"), _diag(1, "SL101"), _diag(1, "SL502")],
         "w = 1  # noqa: SL101, SL502\n"),
        # After another comment; no final newline.
        ("v = 2  # type: ignore", [_diag(1, "SL101")], "v = 2  # type: ignore  # noqa: SL101"),
        # A noqa whose prefix already covers the code is left as it is.
        ("u = 3  # noqa: E501, SL1\n", [_diag(1, "SL101")], "u = 3  # noqa: E501, SL1\n"),
        # SL000 and SL900 are never suppressed this way.
        ("t = 4\n", [_diag(1, "SL000"), _diag(1, "SL900")], "t = 4\n"),
    ],
)  # fmt: skip
def test_where_the_comment_goes(text, diags, expected):
    assert add_noqa(text, diags)[0] == expected


def test_multiline_string_finding_is_suppressed_where_it_was_put(fake_engine, tmp_path, capsys):
    path = write(tmp_path / "m.py", 'import torch.cuda\nx = hit(SL101) + f("""\nabc""")\n')
    assert run(capsys, "--add-noqa", str(path))[0] == 0
    assert path.read_text().endswith('abc""")  # noqa: SL101\n')
    assert run(capsys, str(path))[0] == 0


def test_atomic_write_goes_through_symlinks(tmp_path):
    from streamlint.atomic_write import write_atomic

    target = write(tmp_path / "real.py", "old\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_atomic(link, b"new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.py", "real.py"]
