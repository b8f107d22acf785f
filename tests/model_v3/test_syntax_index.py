"""The syntax layer's own rule (src/streamlint/model/syntax/): it imports nothing of the model
but itself."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SYNTAX = ROOT / "src" / "streamlint" / "model" / "syntax"


def test_the_syntax_layer_imports_nothing_of_the_model_but_itself():
    for path in SYNTAX.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("streamlint"):
                assert node.module.startswith("streamlint.model.syntax"), (path.name, node.module)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith("streamlint") or alias.name.startswith(
                        "streamlint.model.syntax"
                    ), (path.name, alias.name)
