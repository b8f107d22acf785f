"""The pre-commit hook, run by pre-commit itself (`pre-commit try-repo`) in a
throw-away repository: pre-commit builds a virtualenv, pip-installs this repository
into it (from the package registry, as CI can) and runs the hook as a user's would.

try-repo takes this repository at HEAD plus its uncommitted changes to tracked files.
Each call installs afresh (about half a minute), hence one test for the three runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SL501_SNIPPET, write

pytestmark = pytest.mark.slow  # pre-commit builds a virtualenv and installs this repository

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 600  # seconds per run: the first install downloads libcst

NOTEBOOK = {
    "cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {},
               "outputs": [], "source": SL501_SNIPPET.splitlines(keepends=True)}],
    "metadata": {"language_info": {"name": "python"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}  # fmt: skip


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def try_repo(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    # try-repo installs into a temporary store; PRE_COMMIT_HOME keeps its log out of ~.
    env = dict(os.environ, PRE_COMMIT_HOME=str(cwd.parent / "pre-commit-home"))
    env.pop("PYTHONPATH", None)  # the hook must run the copy pre-commit installed
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "streamlint", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT,
    )  # fmt: skip


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="try-repo needs this repository's git history")
def test_hook_fails_on_findings_passes_clean_files_and_skips_no_files(tmp_path):
    work = tmp_path / "work"
    write(work / "bad.py", SL501_SNIPPET)
    write(work / "good.py", "import torch\nx = torch.ones(3)\n")
    write(work / "vendored" / "bad.py", SL501_SNIPPET)  # excluded by the config below
    write(work / "nb.ipynb", json.dumps(NOTEBOOK, indent=1) + "\n")
    write(work / "README.md", "# not python\n")
    write(work / "pyproject.toml", '[tool.streamlint]\nextend-exclude = ["vendored"]\n')
    git(work, "init", "-q")
    git(work, "add", ".")

    failed = try_repo(work, "--all-files")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "bad.py:3:9: SL501 " in failed.stdout
    assert "nb.ipynb:cell 1:3:9: SL501 " in failed.stdout  # types_or covers jupyter
    assert "good.py" not in failed.stdout
    assert "vendored" not in failed.stdout  # --force-exclude applies the config's excludes

    # pre-commit names the excluded file explicitly: --force-exclude still leaves it out.
    passed = try_repo(work, "--files", "good.py", "vendored/bad.py", "README.md")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "streamlint" in passed.stdout and "Passed" in passed.stdout

    # A commit with no Python or notebook files: nothing to check, and it passes.
    skipped = try_repo(work, "--files", "README.md")
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "(no files to check)Skipped" in skipped.stdout
