"""No import cycle anywhere in src/streamlint, counting imports inside functions.

An import inside a function is an edge like any other, unless it is marked lazy: a
comment on its line, or the comment block right above it, says `lazy` and why (e.g.
keeping libcst out of a run served from the cache). So no import can hide in a
function to dodge a cycle. Imports under `if TYPE_CHECKING:` never run and are skipped.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "streamlint"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _known(name: str) -> str | None:
    """The module of ours that importing `name` runs last (None: not ours)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> set[str]:
    if isinstance(node, ast.Import):
        return {t for alias in node.names if (t := _known(alias.name))}
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - node.level + 1]
        base = ".".join(package + ([base] if base else []))
    out = set()
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        target = sub if sub in MODULES else _known(base)
        if target:
            out.add(target)
    return out


def _lazy_reason(lines: list[str], row: int) -> str | None:
    """The text of a `lazy` comment on line `row` or in the comment block above it."""
    comments = [lines[row - 1].partition("#")[2]]
    above = row - 2
    while above >= 0 and lines[above].strip().startswith("#"):
        comments.append(lines[above].strip()[1:])
        above -= 1
    text = " ".join(comments)
    return text if "lazy" in text.lower() else None


class _Imports(ast.NodeVisitor):
    def __init__(self, module: str, path: Path) -> None:
        self.module, self.is_package = module, path.name == "__init__.py"
        self.lines = path.read_text(encoding="utf-8").splitlines()
        self.edges: dict[str, int] = {}  # target -> line of the first import of it
        self.lazy: list[tuple[int, str]] = []
        self.depth = 0  # inside how many functions

    def visit_FunctionDef(self, node) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
        if name == "TYPE_CHECKING":
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def _import(self, node) -> None:
        targets = _targets(node, self.module, self.is_package) - {self.module}
        if self.depth:
            reason = _lazy_reason(self.lines, node.lineno)
            if reason is not None:
                self.lazy.append((node.lineno, reason))
                return
        for target in targets:
            self.edges.setdefault(target, node.lineno)

    visit_Import = visit_ImportFrom = _import


@functools.cache  # (the four tests below read one graph: src is parsed once)
def _graph() -> tuple[dict[str, dict[str, int]], dict[str, list[tuple[int, str]]]]:
    edges, lazy = {}, {}
    for module, path in MODULES.items():
        visitor = _Imports(module, path)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        edges[module], lazy[module] = visitor.edges, visitor.lazy
    return edges, lazy


def _find_cycle(edges: dict[str, dict[str, int]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


@pytest.mark.slow  # parses every module of src/ (over a second)
def test_no_import_cycle_in_src():
    edges, _ = _graph()
    cycle = _find_cycle(edges)
    if cycle:
        steps = [f"{a} (line {edges[a][b]}) -> {b}" for a, b in zip(cycle, cycle[1:])]
        pytest.fail("import cycle:\n  " + "\n  ".join(steps))


@pytest.mark.slow  # reads the import graph of every src/ module (over a second, shared)
def test_lazy_imports_say_why():
    _, lazy = _graph()
    vague = [
        f"{module}:{row}" for module, marks in lazy.items() for row, reason in marks
        if len(reason.lower().partition("lazy")[2].split()) < 3
    ]  # fmt: skip
    assert not vague, f"a lazy import must say why it is lazy: {vague}"


@pytest.mark.slow  # reads the import graph of every src/ module (over a second, shared)
def test_the_checker_is_cut_off_from_the_warm_path_only_by_marked_imports():
    # The engine's way to libcst is through the checker, imported lazily; were that
    # import unmarked, this graph would show the engine depending on the model.
    edges, lazy = _graph()
    assert "streamlint.checker" not in edges["streamlint.engine.lint"]
    assert lazy["streamlint.engine.lint"], "engine/lint.py loads the checker lazily"


@pytest.mark.slow  # reads the import graph of every src/ module (over a second, shared)
def test_the_model_imports_no_engine_rule_fix_cache_output_or_cli():
    edges, _ = _graph()
    forbidden = ("streamlint.engine", "streamlint.rules", "streamlint.fixes", "streamlint.cache",
                 "streamlint.output", "streamlint.cli", "streamlint.commands")  # fmt: skip
    bad = [
        f"{module} -> {target}" for module, targets in edges.items()
        if module.startswith("streamlint.model") for target in targets
        if target.startswith(forbidden)
    ]  # fmt: skip
    assert not bad


def test_a_cycle_is_found():
    assert _find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b": 1}, "b": {}}) is None


def test_an_unmarked_import_in_a_function_counts(tmp_path):
    source = "def f():\n    import os\n\n\ndef g():\n    # lazy: os is slow to import, they say\n    import sys\n"
    path = tmp_path / "m.py"
    path.write_text(source)
    visitor = _Imports("streamlint.m", path)
    visitor.visit(ast.parse(source))
    assert [row for row, _ in visitor.lazy] == [7]


def test_the_hubs_are_small():
    assert not (PACKAGE / "engine.py").exists()
    assert len((PACKAGE / "cli.py").read_text(encoding="utf-8").splitlines()) < 250
