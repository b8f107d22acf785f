"""The syntax layer's `rebound_globals` (row 6.44) walks statements only: it must find every `global` a full walk of
the tree finds, in every statement form that can hold one."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from streamlint.model.syntax.names import rebound_globals
from streamlint.model.syntax.prefilter import may_rebind_globals

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _every_global(module: cst.Module) -> frozenset[str]:
    found: set[str] = set()

    class Visitor(cst.CSTVisitor):
        def visit_Global(self, node: cst.Global) -> None:
            found.update(item.name.value for item in node.names)

    module.visit(Visitor())
    return frozenset(found)


def test_every_statement_form_that_holds_a_global():
    source = textwrap.dedent("""
        def f():
            global a, b
        def g(): global c
        class C:
            def m(self):
                if x:
                    global d
                elif y:
                    global e
                else:
                    global f
                for i in r:
                    global g
                else:
                    global h
                while w:
                    global i
                try:
                    global j
                except E:
                    global k
                else:
                    global l
                finally:
                    global m
                with q: global n
                match v:
                    case 1:
                        global o
        async def h():
            async with q:
                global p
    """)
    module = cst.parse_module(source)
    assert rebound_globals(module) == _every_global(module) == frozenset("abcdefghijklmnop")


_WITH_GLOBALS = sorted(p for p in FIXTURES.rglob("*.py") if b"global " in p.read_bytes())


@pytest.mark.parametrize("path", _WITH_GLOBALS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_statement_walk_agrees_with_a_full_walk_on_the_fixtures(path):
    # (the fixtures that spell `global`: every other one has none either way)
    module = cst.parse_module(path.read_bytes())
    assert rebound_globals(module) == _every_global(module)


@pytest.mark.parametrize("spelled", ["global x", "global\tx", "global(x)" , "def f():\n    global \\\n        x\n"])
def test_the_prefilter_passes_every_spelling_of_a_global_statement(spelled):
    assert may_rebind_globals(spelled.encode())


def test_the_prefilter_says_the_same_as_the_parse_on_the_fixtures():
    # a module the prefilter rejects has no `global` statement (the solver skips the walk on its word)
    for path in FIXTURES.rglob("*.py"):
        data = path.read_bytes()
        if not may_rebind_globals(data):
            assert not rebound_globals(cst.parse_module(data)), path
