"""File discovery: suffixes, default excludes, .gitignore, config excludes, symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import needs_fork, write
from streamlint.config import SettingsResolver
from streamlint.discovery import discover
from streamlint.engine.run import lint_paths


def rel(tmp_path: Path, paths=None, **kwargs) -> list[str]:
    found = discover([tmp_path] if paths is None else paths, SettingsResolver(), **kwargs)
    return [Path(p).resolve().relative_to(tmp_path.resolve()).as_posix() for p, _ in found.files]


def test_finds_py_and_pyi_sorted(tmp_path):
    for name in ("b.py", "a.pyi", "z/c.py", "notes.txt", "d.pyc", "e.py.bak"):
        write(tmp_path / name, "")
    assert rel(tmp_path) == ["a.pyi", "b.py", "z/c.py"]


def test_display_paths_follow_the_argument(tmp_path, monkeypatch):
    write(tmp_path / "pkg" / "m.py", "")
    monkeypatch.chdir(tmp_path)
    assert [str(p) for p, _ in discover(["."]).files] == ["pkg/m.py"]
    assert [str(p) for p, _ in discover(["pkg/"]).files] == ["pkg/m.py"]


@pytest.mark.parametrize(
    "folder", [".git", ".venv", "venv", "build", "dist", "node_modules", "__pycache__",
               "site-packages", ".tox", ".streamlint_cache", ".mypy_cache"],
)  # fmt: skip
def test_default_excludes(tmp_path, folder):
    write(tmp_path / folder / "x.py", "")
    write(tmp_path / "sub" / folder / "y.py", "")
    write(tmp_path / "keep.py", "")
    assert rel(tmp_path) == ["keep.py"]


def test_gitignore_in_tree_with_negation_and_nesting(tmp_path):
    write(tmp_path / ".gitignore", "gen_*.py\n!gen_keep.py\nout/\n")
    write(tmp_path / "gen_a.py", "")
    write(tmp_path / "gen_keep.py", "")
    write(tmp_path / "out" / "o.py", "")
    write(tmp_path / "pkg" / ".gitignore", "local.py\n")
    write(tmp_path / "pkg" / "local.py", "")
    write(tmp_path / "pkg" / "gen_b.py", "")  # the parent's pattern applies below it too
    write(tmp_path / "pkg" / "ok.py", "")
    write(tmp_path / "local.py", "")  # pkg/.gitignore does not apply above pkg
    assert rel(tmp_path) == ["gen_keep.py", "local.py", "pkg/ok.py"]


def test_gitignore_of_the_repository_root_applies_to_a_subtree(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".gitignore", "skip_me.py\n")
    write(tmp_path / "sub" / "skip_me.py", "")
    write(tmp_path / "sub" / "keep.py", "")
    assert rel(tmp_path, [tmp_path / "sub"]) == ["sub/keep.py"]


def test_gitignore_outside_a_repository_is_not_used_for_a_subtree(tmp_path):
    write(tmp_path / ".gitignore", "skip_me.py\n")
    write(tmp_path / "sub" / "skip_me.py", "")
    assert rel(tmp_path, [tmp_path / "sub"]) == ["sub/skip_me.py"]


def test_respect_gitignore_can_be_turned_off(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.streamlint]\nrespect-gitignore = false\n")
    write(tmp_path / ".gitignore", "a.py\n")
    write(tmp_path / "a.py", "")
    assert rel(tmp_path) == ["a.py"]


def test_config_exclude_and_extend_exclude(tmp_path):
    config = '[tool.streamlint]\nextend-exclude = ["gen", "legacy/*.py"]\n'
    write(tmp_path / "pyproject.toml", config)
    write(tmp_path / "gen" / "a.py", "")
    write(tmp_path / "legacy" / "b.py", "")
    write(tmp_path / "legacy" / "deep" / "c.py", "")
    write(tmp_path / "build" / "d.py", "")  # default excludes still apply
    write(tmp_path / "e.py", "")
    assert rel(tmp_path) == ["e.py", "legacy/deep/c.py"]
    # `exclude` replaces the defaults, as in ruff.
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nexclude = ["gen"]\n')
    assert rel(tmp_path) == ["build/d.py", "e.py", "legacy/b.py", "legacy/deep/c.py"]


def test_explicit_files_are_checked_unless_force_exclude(tmp_path):
    (tmp_path / ".git").mkdir()  # pre-commit runs inside a repository
    target = write(tmp_path / "build" / "x.py", "")
    ignored = write(tmp_path / "ignored.py", "")
    write(tmp_path / ".gitignore", "ignored.py\n")
    assert rel(tmp_path, [target, ignored]) == ["build/x.py", "ignored.py"]
    assert rel(tmp_path, [target, ignored], force_exclude=True) == []
    # An explicitly named excluded directory is walked, unless force_exclude.
    assert rel(tmp_path, [tmp_path / "build"]) == ["build/x.py"]
    assert rel(tmp_path, [tmp_path / "build"], force_exclude=True) == []


def test_named_directory_inside_excluded_or_ignored_directories_is_walked(tmp_path, monkeypatch):
    # Like linting an installed package: site-packages is excluded by default, and the
    # interpreter may live in a git checkout that ignores it (pyenv's does).
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".gitignore", "/versions/\n")
    pkg = tmp_path / "versions" / "lib" / "site-packages" / "torch"
    write(pkg / "a.py", "")
    write(pkg / "sub" / "b.py", "")
    write(pkg / "build" / "c.py", "")  # excluded below the named directory all the same
    monkeypatch.chdir(tmp_path)
    assert rel(tmp_path, [pkg]) == [
        "versions/lib/site-packages/torch/a.py",
        "versions/lib/site-packages/torch/sub/b.py",
    ]
    assert rel(tmp_path, [pkg], force_exclude=True) == []


@pytest.mark.parametrize(
    "pattern, path, excluded",
    [
        ("gen", "a/gen/x.py", True),
        ("*_pb2.py", "a/b/m_pb2.py", True),
        ("[ab].py", "pkg/a.py", True),
        ("[!ab].py", "pkg/a.py", False),
        ("pkg/*.py", "pkg/sub/x.py", False),
        ("pkg/**/*.py", "pkg/sub/x.py", True),
        ("**/fixtures/*.py", "a/b/fixtures/x.py", True),
        ("/pkg/x.py", "pkg/x.py", True),
        ("x.py/", "x.py", False),  # a trailing slash matches directories only
    ],
)
def test_exclude_glob_semantics(tmp_path, pattern, path, excluded):
    write(tmp_path / "pyproject.toml", f'[tool.streamlint]\nextend-exclude = ["{pattern}"]\n')
    write(tmp_path / path, "")
    assert rel(tmp_path) == ([] if excluded else [path])


def test_explicit_file_with_any_suffix_is_checked(tmp_path):
    script = write(tmp_path / "tool", "")
    assert rel(tmp_path, [script]) == ["tool"]


def test_duplicates_are_checked_once(tmp_path):
    write(tmp_path / "a.py", "")
    assert rel(tmp_path, [tmp_path, tmp_path / "a.py", tmp_path]) == ["a.py"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_loop_does_not_hang(tmp_path):
    write(tmp_path / "pkg" / "m.py", "")
    os.symlink(tmp_path, tmp_path / "pkg" / "loop")  # points back up the tree
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "self")
    os.symlink(tmp_path / "missing", tmp_path / "dangling.py")
    found = rel(tmp_path)
    assert found.count("pkg/m.py") == 1 and len(found) == 2  # m.py and the dangling link
    results = lint_paths([tmp_path], jobs=1)
    dangling = [r for r in results if r.path.endswith("dangling.py")][0]
    assert [d.code for d in dangling.diagnostics] == ["SL000"]
    assert "cannot read file" in dangling.diagnostics[0].message


@needs_fork
@pytest.mark.usefixtures("fake_engine")
def test_parallel_and_serial_give_the_same_sorted_results(tmp_path):
    for i in range(30):
        body = "import torch.cuda\nhit(SL101)\n" if i % 3 else "x = 1\n"
        write(tmp_path / f"d{i % 4}" / f"f{i:02}.py", body)
    write(tmp_path / "bad.py", b"cuda\xff\n")
    serial = lint_paths([tmp_path], jobs=1)
    parallel = lint_paths([tmp_path], jobs=4)
    assert serial == parallel
    assert [r.path for r in parallel] == sorted(r.path for r in parallel)
    assert sum(r.analysed for r in parallel) == 20
    assert sum(len(r.diagnostics) for r in parallel) == 21
