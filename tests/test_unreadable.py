"""Discovery that survives what it cannot read: a directory that cannot be read or
searched is skipped with a warning and the rest is checked; a path named on the
command line that cannot be read is one SL000; a file named on the command line is
analysed even without CUDA words, so a syntax error there is an SL000.

The tests run as root, where chmod stops nothing: the real-permission tests run the
command without the capabilities that let root read anything (setpriv), and are
skipped, saying so, where that cannot be done. The in-process tests make the
operating system's answer up with monkeypatch and always run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LOOP_SNIPPET, write
from conftest import run_cli as run

SRC = str(Path(__file__).resolve().parents[1] / "src")
FLAGGED = LOOP_SNIPPET  # SL103 at 9:9


def _without_root_powers() -> list[str] | None:
    """A command prefix under which chmod 000 stops this process's reads, or None."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "pass"], capture_output=True)
    return prefix if probe.returncode == 0 else None


@pytest.fixture
def locked_tree(tmp_path):
    prefix = _without_root_powers()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be taken away here")
    write(tmp_path / "ok" / "a.py", "import torch\n")
    write(tmp_path / "locked" / "b.py", "import torch\n")
    write(tmp_path / "unsearchable" / "c.py", "import torch\n")
    write(tmp_path / "unreadable.py", "import torch\n")
    write(tmp_path / "broken.py", "def f(:\n")
    (tmp_path / "locked").chmod(0)
    (tmp_path / "unsearchable").chmod(0o644)  # names can be listed, files not reached
    (tmp_path / "unreadable.py").chmod(0)
    yield tmp_path, prefix
    for name in ("locked", "unsearchable"):
        (tmp_path / name).chmod(0o755)


def _check(tree: Path, prefix: list[str], *paths: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC, "STREAMLINT_NO_CACHE": "1"}
    argv = [*prefix, sys.executable, "-m", "streamlint", "check", "--no-cache", *paths]
    return subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True)


@pytest.mark.slow  # a subprocess without root's read powers
def test_permissions_really_are_taken_away(locked_tree):
    tree, prefix = locked_tree
    done = subprocess.run([*prefix, sys.executable, "-c", "open('unreadable.py')"], cwd=tree, capture_output=True)
    assert done.returncode != 0 and b"PermissionError" in done.stderr


@pytest.mark.slow  # a subprocess without root's read powers
def test_unreadable_directories_are_skipped_with_a_warning(locked_tree):
    tree, prefix = locked_tree
    done = _check(tree, prefix, ".")
    assert "internal error" not in done.stderr
    assert "warning: cannot read directory locked: Permission denied; skipped" in done.stderr
    assert "warning: cannot read directory unsearchable: Permission denied; skipped" in done.stderr
    # The rest is checked: the unreadable file found by the walk is its own SL000.
    assert done.stdout.splitlines()[0] == "unreadable.py:1:1: SL000 cannot read file: Permission denied"
    assert done.returncode == 1


@pytest.mark.slow  # a subprocess without root's read powers
def test_unreadable_paths_named_explicitly_are_one_sl000_each(locked_tree):
    tree, prefix = locked_tree
    done = _check(tree, prefix, "locked", "unsearchable/c.py", "unreadable.py", "ok", "broken.py")
    lines = [line for line in done.stdout.splitlines() if ": SL" in line]
    assert lines == [
        "broken.py:1:7: SL000 SyntaxError: invalid syntax",
        "locked:1:1: SL000 cannot read directory: Permission denied",
        "unreadable.py:1:1: SL000 cannot read file: Permission denied",
        "unsearchable/c.py:1:1: SL000 cannot read file: Permission denied",
    ]
    assert done.returncode == 1 and "internal error" not in done.stderr


# ---- the same, in process: the operating system's answer is made up ----


@pytest.fixture
def refused(monkeypatch, tmp_path):
    """os.scandir refuses `tmp_path/locked`, as it does for a directory mode 000."""
    real = os.scandir
    locked = str(tmp_path / "locked")

    def scandir(path="."):
        if os.path.abspath(path) == locked:
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "locked" / "x.py", FLAGGED)
    write(tmp_path / "open" / "y.py", FLAGGED)
    return tmp_path


def test_a_refused_directory_is_skipped_and_the_rest_checked(refused, capsys):
    code, out, err = run(capsys, "check", "--no-cache", ".")
    assert "cannot read directory locked: Permission denied; skipped" in err
    assert "open/y.py" in out and "locked/x.py" not in out and "internal error" not in err


def test_a_refused_directory_named_explicitly_is_an_sl000(refused, capsys):
    code, out, _ = run(capsys, "check", "--no-cache", "--select", "SL000", "locked")
    assert code == 1 and out.splitlines()[0] == "locked:1:1: SL000 cannot read directory: Permission denied"


def test_a_syntax_error_in_a_named_file_without_cuda_words_is_sl000(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "plain.py", "def f(:\n    pass\n")
    code, out, _ = run(capsys, "check", "--no-cache", "plain.py")
    assert code == 1 and out.startswith("plain.py:1:7: SL000 SyntaxError")
