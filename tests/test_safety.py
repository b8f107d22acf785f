"""streamlint never runs the code it checks, and no configuration can make it run code.

The project below would leave a `PWNED_<name>` file beside any of its modules that were
imported or run: package `__init__`, a helper that the cross-module resolution reads, a
conftest, a setup.py, modules named like streamlint's own dependencies (for `python -m
streamlint`, which puts the working directory on sys.path), and a pyproject.toml with
build hooks and values that look like shell or Python code.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import write

import streamlint
from streamlint.cli import main
from streamlint.config import ConfigError, SettingsResolver
from streamlint.engine import run as engine

SRC = Path(streamlint.__file__).parent
# Creates PWNED_<module name> beside the module when it is run.
PAYLOAD = "import pathlib; pathlib.Path(__file__).with_name('PWNED_' + pathlib.Path(__file__).stem).write_text('ran')\n"
# Modules that streamlint (or Python on its behalf) imports by name.
SHADOWS = ("libcst", "pathspec", "tomllib", "tomli", "argparse", "json", "dataclasses", "typing_extensions")


def make_project(root: Path) -> Path:
    pkg = root / "pkg"
    write(pkg / "__init__.py", PAYLOAD)
    # Only the helper's summary makes `h` pageable, so the SL301 below proves that the
    # cross-module resolution read this file (and it still did not run it).
    write(pkg / "staging.py", PAYLOAD + "import torch\n\ndef make_host_buffer(n):\n    return torch.zeros(n)\n")
    write(pkg / "train.py", textwrap.dedent("""\
        import torch
        from .staging import make_host_buffer


        def upload(n, steps):
            for _ in range(steps):
                h = make_host_buffer(n)
                yield h.to("cuda", non_blocking=True)
        """))  # fmt: skip
    for name in ("conftest", "setup", "sitecustomize", "usercustomize", "__main__", *SHADOWS):
        write(root / f"{name}.py", PAYLOAD + "import torch\ns = torch.cuda.Stream()\n")
    # A notebook is checked cell by cell; its cells must not run either.
    cell = f"open({str(root / 'PWNED_notebook')!r}, 'w')\nimport torch\ns = torch.cuda.Stream()\n"
    notebook = {"cells": [{"cell_type": "code", "source": cell, "metadata": {}, "outputs": [],
                           "execution_count": None}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    write(root / "analysis.ipynb", json.dumps(notebook))
    write(root / "pyproject.toml", textwrap.dedent("""\
        [build-system]
        requires = ["setuptools"]
        build-backend = "setup"

        [tool.streamlint]
        exclude = ["$(python setup.py)", "`python conftest.py`", "__import__('os').system('x')"]
        per-file-ignores = { "; python -c 'import pkg'" = ["SL1"] }
        """))  # fmt: skip
    return root


def pwned(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("PWNED_*"))


def test_linting_never_imports_or_runs_the_checked_code(tmp_path):
    root = make_project(tmp_path)
    for jobs in (1, 2):  # serially and in worker processes
        results = engine.lint_paths([root], jobs=jobs)
        found = {(Path(r.path).name, d.code) for r in results for d in r.diagnostics}
        assert ("train.py", "SL301") in found  # staging.py was read and summarised
        assert "analysis.ipynb" in {Path(r.path).name for r in results if r.analysed}
        assert pwned(root) == []


@pytest.mark.slow
def test_python_dash_m_in_the_checked_directory_runs_none_of_it(tmp_path):
    root = make_project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "streamlint", "."],
        cwd=root, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "pkg/train.py:8:15: SL301 " in done.stdout
    assert pwned(root) == []


AUDIT = """\
import json, os, sys
root = os.path.realpath(sys.argv[1])
events = []

def inside(path):
    try:
        return os.path.realpath(os.fsdecode(path)).startswith(root)
    except (TypeError, ValueError):
        return False

def hook(event, args):
    if event == "exec" and inside(getattr(args[0], "co_filename", "")):
        events.append([event, args[0].co_filename])
    elif event == "compile" and args[1] is not None and inside(args[1]):
        events.append([event, os.fsdecode(args[1])])
    elif event == "open" and inside(args[0]):
        mode, flags = args[1] or "", args[2] or 0
        if any(c in mode for c in "wax+") or flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            events.append([event, os.fsdecode(args[0]), mode, flags])
    elif event.startswith(("subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.spawn")):
        events.append([event])

sys.addaudithook(hook)
from streamlint.engine.run import lint_paths
lint_paths([root], jobs=1)
if sys.argv[2:] == ["control"]:  # the hook sees what it looks for
    exec(compile("x = 1", os.path.join(root, "probe.py"), "exec"))
    open(os.path.join(root, "probe.txt"), "w").close()
print(json.dumps(events))
"""


@pytest.mark.slow
def test_audit_hooks_see_no_execution_compilation_or_write_in_the_tree(tmp_path):
    # Python's audit events: running or compiling a code object from the tree, opening
    # one of its files for writing, starting a process.
    root = make_project(tmp_path / "project")
    done = subprocess.run(
        [sys.executable, "-c", AUDIT, str(root)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    assert pwned(root) == []
    control = subprocess.run(
        [sys.executable, "-c", AUDIT, str(root), "control"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert [event[0] for event in json.loads(control.stdout)] == ["compile", "exec", "open"]


# ---- configuration ----


@pytest.mark.parametrize(
    "table, error",
    [
        ('plugins = ["pkg"]', "unknown key 'plugins'"),
        ('init = "import pkg"', "unknown key 'init'"),
        ('select = ["__import__(\'pkg\')"]', "select"),
        ("select = [\"$(python setup.py)\"]", "select"),
        ('timeout = "__import__(\'pkg\') or 30"', "timeout: expected a positive number"),
        ('respect-gitignore = "exec(open(\'setup.py\').read())"', "respect-gitignore must be true or false"),
        ('per-file-ignores = { "x.py" = ["eval(1)"] }', "per-file-ignores"),
    ],
)  # fmt: skip
def test_configuration_that_looks_like_code_is_rejected(tmp_path, table, error):
    root = make_project(tmp_path)
    write(root / "pyproject.toml", f"[tool.streamlint]\n{table}\n")
    with pytest.raises(ConfigError, match=error.replace("(", r"\(").replace(")", r"\)")):
        SettingsResolver().for_path(root / "pkg" / "train.py")
    assert main(["check", str(root), "-q"]) == 2
    assert pwned(root) == []


def test_code_like_patterns_are_inert_globs(tmp_path):
    # make_project's own pyproject.toml: accepted, and its patterns only ever match names.
    root = make_project(tmp_path)
    settings = SettingsResolver().for_path(root / "pkg" / "train.py")
    assert "$(python setup.py)" in settings.exclude
    assert main(["check", str(root), "-q"]) == 1
    assert pwned(root) == []


# ---- the source: nothing on the checking path can run code ----

# Calls that run or load code, and the one place allowed each: the rule registry imports
# its own modules by name. `streamlint verify` (runtime/) runs fixtures on a GPU by design.
BUILTINS_THAT_RUN = {"eval", "exec", "compile", "__import__"}
LOADERS = {"import_module", "run_path", "run_module", "exec_module", "load_module"}
MODULES_THAT_RUN = {"subprocess", "runpy", "pickle", "marshal", "shelve"}  # any call on them
OS_RUNS = ("system", "popen", "startfile", "fork", "exec", "spawn", "posix_spawn")  # name prefixes
# The registries import modules of their own package, by names they list or find.
ALLOWED = {("rules/__init__.py", "import_module"), ("output/__init__.py", "import_module")}


def code_running_calls(path: Path) -> list[tuple[str, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            name, owner = func.id, None
        elif isinstance(func, ast.Attribute):
            name = func.attr
            owner = func.value.id if isinstance(func.value, ast.Name) else None
        else:
            continue
        runs = (
            (owner is None and name in BUILTINS_THAT_RUN)
            or name in LOADERS
            or owner in MODULES_THAT_RUN
            or (owner == "os" and name.startswith(OS_RUNS))
        )
        if runs:
            found.append((str(path.relative_to(SRC)), name))
    return found


@pytest.mark.slow  # scans every module of src/ (over a second)
def test_the_checking_code_runs_nothing():
    files = [p for p in SRC.rglob("*.py") if "runtime" not in p.relative_to(SRC).parts]
    assert len(files) > 20
    calls = [call for path in files for call in code_running_calls(path)]
    assert set(calls) <= ALLOWED, calls
    # The registry imports only modules of its own package.
    for package in ("rules",):
        registry = (SRC / package / "__init__.py").read_text(encoding="utf-8")
        assert 'importlib.import_module(f"{__name__}.{info.name}")' in registry
        assert "pkgutil.iter_modules(__path__)" in registry
    # The output registry imports only the modules of its fixed table.
    formats = (SRC / "output" / "__init__.py").read_text(encoding="utf-8")
    assert 'importlib.import_module(f"streamlint.output.{_MODULES[fmt]}")' in formats
    assert "if fmt not in _MODULES:" in formats


def test_the_scan_would_see_an_eval(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    write(tmp_path / "plugin.py", "importlib.import_module(name)\nsubprocess.run(['x'])\neval(text)\n"
                                  "os.system(cmd)\njson.load(f)\nos.path.join(a, b)\nrun(x)\n")
    assert sorted(code_running_calls(tmp_path / "plugin.py")) == [
        ("plugin.py", "eval"), ("plugin.py", "import_module"), ("plugin.py", "run"), ("plugin.py", "system"),
    ]  # fmt: skip
