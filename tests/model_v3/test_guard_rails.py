"""Guard rails of the v3 model (issue 27), as tests.

They cover all of model/ since the switch deleted the v2 modules.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

MODEL = Path(__file__).resolve().parents[2] / "src" / "streamlint" / "model"
V3 = [MODEL / "domain", MODEL / "summary", MODEL / "transfer", MODEL / "interproc", MODEL / "syntax",
      MODEL / "readings", MODEL / "api", MODEL / "findings.py", MODEL / "file_model.py", MODEL / "explain.py",
      MODEL / "checked_file.py", MODEL / "declared.py", MODEL / "positions.py", MODEL / "prefilter.py",
      MODEL / "reads.py", MODEL / "resolve.py"]
# The layers whose classes hold analysis state: at most 15 fields each.
STATEFUL = [MODEL / "domain", MODEL / "summary", MODEL / "transfer"]
MAX_FIELDS = 15


def _files(parts: list[Path]) -> list[Path]:
    found = []
    for part in parts:
        found.extend(sorted(part.rglob("*.py")) if part.is_dir() else [part] if part.exists() else [])
    return found


def test_complexity_at_most_15():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "C901", "--config", "lint.mccabe.max-complexity=15",
         "--output-format", "concise", *map(str, V3)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _fields(cls: ast.ClassDef) -> int:
    annotated = [s for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    assigned = set()
    if init is not None:
        for node in ast.walk(init):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                    and isinstance(node.ctx, ast.Store):
                assigned.add(node.attr)
    return len(annotated) + len(assigned)


@pytest.mark.parametrize("path", _files(STATEFUL), ids=lambda p: p.name)
def test_no_class_with_more_than_15_fields(path: Path):
    tree = ast.parse(path.read_text())
    wide = [(c.name, _fields(c)) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and _fields(c) > MAX_FIELDS]
    assert not wide, f"{path.name}: {wide}"


# Reading source text: regular expressions, substring tests on text, generating code from nodes.
_TEXT_NAMES = {"source", "text", "code"}


def _is_str(annotation) -> bool:
    return annotation is None or (isinstance(annotation, ast.Name) and annotation.id == "str")


def _reads_text(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            if "re" in names or "regex" in names:
                found.append(f"line {node.lineno}: imports re")
        elif isinstance(node, ast.Attribute) and node.attr in ("code", "code_for_node"):
            found.append(f"line {node.lineno}: .{node.attr} (generates source text)")
        elif isinstance(node, ast.arg) and node.arg in _TEXT_NAMES and _is_str(node.annotation):
            found.append(f"line {node.lineno}: takes source text ({node.arg})")
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            if any(isinstance(c, ast.Name) and c.id in _TEXT_NAMES for c in node.comparators):
                found.append(f"line {node.lineno}: substring test on text")
    return found


# The checked file's services spell nodes and place them for messages and edits (never to decide
# a finding): they read the source text by design.
_SPELLING = {"checked_file.py", "positions.py"}


@pytest.mark.parametrize("path", [p for p in _files(V3) if "syntax" not in p.parts and p.name not in _SPELLING],
                         ids=lambda p: p.name)
def test_no_source_text_outside_the_syntax_layer(path: Path):
    assert _reads_text(ast.parse(path.read_text())) == []


def test_the_text_check_catches_what_it_forbids():
    bad = ast.parse("import re\ndef f(source):\n    return 'cuda' in text or node.code\n")
    assert len(_reads_text(bad)) == 4


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.mark.slow
def test_each_function_walked_once_per_context_on_every_fixture():
    """On every fixture: those with a `.summary` snapshot are checked as their snapshot's
    analysis runs (tests/model_v3/test_summary_snapshots.py, one analysis of each, not two);
    here the rest, the fix pairs under `fixes/` that have no snapshot."""
    import libcst as cst

    from streamlint.model.file_model import analyze_file
    from streamlint.model.transfer import interpret

    sys.path.insert(0, str(FIXTURES.parent / "tests"))
    import summary_output

    worst = {}
    fixtures = sorted(FIXTURES.rglob("*.py"))
    snapshots = set(summary_output.fixture_files())
    assert fixtures and snapshots
    for fixture in fixtures:
        if fixture in snapshots:
            continue
        try:
            module = cst.parse_module(fixture.read_text())
        except cst.ParserSyntaxError:
            continue
        interpret.WALKS.clear()
        analyze_file(module, str(fixture))
        for key, count in interpret.WALKS.items():
            if count > 1:
                worst[f"{fixture.name}:{key[0]}"] = count
    assert worst == {}
