"""The project lints itself: `ruff check src/` with the configuration in
pyproject.toml ([tool.ruff]) reports nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    # `python -m ruff`: the ruff of the test extra, in this environment.
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, input=stdin, capture_output=True,
                          text=True, timeout=600)  # fmt: skip


def test_ruff_check_src_is_clean():
    done = ruff("check", "--no-cache", "--output-format", "concise", "src/")
    assert done.returncode == 0, f"`ruff check src/` reports:\n{done.stdout}{done.stderr}"


def test_ruff_uses_the_projects_configuration():
    # pyproject.toml's settings, not ruff's defaults...
    assert "line_length = 120" in ruff("check", "--show-settings", "src/streamlint/__init__.py").stdout
    # ...which catch real mistakes in a module of the package.
    bad = ruff("check", "--no-cache", "--stdin-filename", "src/streamlint/x.py", "-",
               stdin="import os\n\ntry:\n    pass\nexcept:\n    pass\n")  # fmt: skip
    assert bad.returncode == 1
    assert "F401" in bad.stdout and "E722" in bad.stdout
