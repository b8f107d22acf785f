"""`--fix` lints and fixes each file in one pass (ruff's `lint_fix`): the file is read
once and linted once as it is (with every rule, selected or not), then once more per
round of fixes, to verify them."""

from __future__ import annotations

import pytest

from conftest import PINNED_SNIPPET, run_cli as run, write
from streamlint.engine import lint, run as engine_run


@pytest.fixture
def counted(monkeypatch):
    calls = {"lint": 0, "read": 0}
    load_checker, read_bytes = lint.load_checker, engine_run.read_bytes

    def counting_checker():
        check, error_type = load_checker()

        def counting_check(*args, **kwargs):
            calls["lint"] += 1
            return check(*args, **kwargs)

        return counting_check, error_type

    def counting_read(path):
        calls["read"] += 1
        return read_bytes(path)

    monkeypatch.setattr(lint, "load_checker", counting_checker)
    monkeypatch.setattr(engine_run, "read_bytes", counting_read)
    return calls


def test_a_fixed_file_is_read_once_and_linted_once_before_its_fixes(tmp_path, capsys, monkeypatch, counted):
    write(tmp_path / "copies.py", PINNED_SNIPPET)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "check", "--no-cache", "--fix", "--unsafe-fixes", "copies.py")
    assert code == 0 and "(1 fixed, 0 remaining)" in out
    # One lint of the file as read, one of the fixed text (the verification), which
    # also finds nothing left to fix.
    assert counted == {"lint": 2, "read": 1}


def test_a_file_without_fixes_is_linted_once(tmp_path, capsys, monkeypatch, counted):
    write(tmp_path / "copies.py", PINNED_SNIPPET)
    monkeypatch.chdir(tmp_path)
    code, _, _ = run(capsys, "check", "--no-cache", "--fix", "copies.py")  # its fix is unsafe
    assert code == 1 and counted == {"lint": 1, "read": 1}
