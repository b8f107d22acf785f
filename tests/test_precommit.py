"""The pre-commit hook, run by pre-commit itself in a throw-away repository, as a
user's configuration runs it: pre-commit clones this repository (at HEAD plus its
uncommitted changes to tracked files, as `pre-commit try-repo` takes it), builds a
virtualenv, pip-installs it into it (from the package registry, as CI can) and runs
the hook.

The three runs share one pre-commit store, so the hook is installed once (about half
a minute) rather than once per run as `try-repo` does (a new store each time).
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


def snapshot_of_this_repository(where: Path) -> tuple[Path, str]:
    """A clone of this repository whose HEAD commits the uncommitted changes to its
    tracked files (what `pre-commit try-repo` installs), and that commit."""
    subprocess.run(["git", "clone", "-q", str(REPO), str(where)], check=True, capture_output=True)
    diff = subprocess.run(["git", "diff", "HEAD", "--binary"], cwd=REPO, check=True, capture_output=True).stdout
    if diff:
        subprocess.run(["git", "apply", "--index"], cwd=where, input=diff, check=True, capture_output=True)
        git(where, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--no-verify", "-m", "uncommitted")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, check=True, capture_output=True, text=True)
    return where, head.stdout.strip()


def pre_commit_runner(tmp: Path):
    """`pre-commit run ARGS` in a repository, with a configuration (outside it) that
    names this repository's hook, and one store for every run."""
    repo, rev = snapshot_of_this_repository(tmp / "streamlint-repo")
    config = tmp / "pre-commit-config.yaml"
    config.write_text(f"repos:\n- repo: {json.dumps(str(repo))}\n  rev: {rev}\n  hooks:\n  - id: streamlint\n")
    # PRE_COMMIT_HOME: the store (the hook's virtualenv, kept between the runs) and its log, out of ~.
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp / "pre-commit-home"))
    env.pop("PYTHONPATH", None)  # the hook must run the copy pre-commit installed

    def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--config", str(config), *args],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT,
        )  # fmt: skip

    return run


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="pre-commit clones this repository: it needs its git history")
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

    pre_commit = pre_commit_runner(tmp_path)
    failed = pre_commit(work, "--all-files")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "bad.py:3:9: SL501 " in failed.stdout
    assert "nb.ipynb:cell 1:3:9: SL501 " in failed.stdout  # types_or covers jupyter
    assert "good.py" not in failed.stdout
    assert "vendored" not in failed.stdout  # --force-exclude applies the config's excludes

    # pre-commit names the excluded file explicitly: --force-exclude still leaves it out.
    passed = pre_commit(work, "--files", "good.py", "vendored/bad.py", "README.md")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "streamlint" in passed.stdout and "Passed" in passed.stdout

    # A commit with no Python or notebook files: nothing to check, and it passes.
    skipped = pre_commit(work, "--files", "README.md")
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "(no files to check)Skipped" in skipped.stdout
