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


def test_every_pass_of_a_loop_runs_a_test_but_not_its_branches():
    import libcst as cst

    from streamlint.model.syntax.ancestry import Ancestry

    module = cst.parse_module(
        "for _ in range(9):\n"
        "    a()\n"
        "    if b() and c():\n"
        "        d()\n"
        "    e() if f() else g()\n"
        "    for _ in x:\n"
        "        h()\n"
        "    try:\n"
        "        i()\n"
        "    except E:\n"
        "        j()\n"
    )
    ancestry = Ancestry(module)
    loop = module.body[0]
    calls = {}

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            calls[node.func.value] = node

    module.visit(Calls())
    runs = {name: ancestry.every_pass(node, loop) for name, node in calls.items()}
    assert runs == {"range": False, "a": True, "b": True, "c": False, "d": False, "e": False, "f": True,
                    "g": False, "h": False, "i": True, "j": False}


def test_a_pass_that_leaves_its_loop_after_a_statement_runs_it_once():
    import libcst as cst

    from streamlint.model.syntax.ancestry import Ancestry

    module = cst.parse_module(
        "def f(items):\n"
        "    for item in items:\n"
        "        if item.busy:\n"
        "            continue\n"
        "        try:\n"
        "            a()\n"
        "            return True\n"
        "        except E:\n"
        "            b()\n"
        "        c()\n"
        "        if item.last:\n"
        "            break\n"
        "        for x in item:\n"
        "            d()\n"
        "            break\n"
    )
    ancestry = Ancestry(module)
    loop = module.body[0].body.body[0]
    calls = {}

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            calls[node.func.value] = node

    module.visit(Calls())
    leaves = {name: ancestry.leaves_after(node, loop) for name, node in calls.items()}
    assert leaves == {"a": True, "b": False, "c": False, "d": False}


def test_two_statements_are_exclusive_only_on_different_sides_of_one_test():
    import libcst as cst

    from streamlint.model.syntax.ancestry import Ancestry

    module = cst.parse_module(
        "for _ in range(9):\n"
        "    if k() > 1:\n"
        "        for _ in y:\n"
        "            a()\n"
        "        b()\n"
        "    elif m():\n"
        "        c()\n"
        "    else:\n"
        "        d()\n"
        "    e()\n"
    )
    ancestry = Ancestry(module)
    calls = {}

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            calls[node.func.value] = node

    module.visit(Calls())
    pairs = {(x, y): ancestry.exclusive(calls[x], calls[y]) for x, y in
             [("a", "b"), ("a", "c"), ("a", "d"), ("c", "d"), ("d", "a"), ("a", "e"), ("k", "a"), ("a", "k"),
              ("m", "c"), ("m", "d"), ("m", "a")]}
    assert pairs == {("a", "b"): False, ("a", "c"): True, ("a", "d"): True, ("c", "d"): True, ("d", "a"): True,
                     ("a", "e"): False, ("k", "a"): False, ("a", "k"): False, ("m", "c"): False,
                     ("m", "d"): False, ("m", "a"): True}


def test_a_name_handed_on_as_a_value_is_not_only_called():
    import libcst as cst

    from streamlint.model.syntax.names import names_only_called

    module = cst.parse_module(
        "class Trainer:\n"
        "    def __init__(self):\n"
        "        self._a()\n"
        "        register(self._b)\n"
        "    def _a(self):\n"
        "        pass\n"
        "    def _b(self):\n"
        "        pass\n"
        "def _c():\n"
        "    Trainer()._a()\n"
        "threading.Thread(target=_c)\n"
    )
    # `_b` and `_c` are handed on (a hook, a thread's target): called from out of sight, so not only called
    assert sorted(names_only_called(module)) == ["Thread", "__init__", "_a", "register"]
