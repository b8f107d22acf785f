"""Lazily parsed function bodies (model/lazy_parse.py): the tree equals libcst's own
parse node for node once its bodies are read, and a body is parsed only when read."""

from __future__ import annotations

import dataclasses
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import libcst as cst
import pytest

from streamlint.model import lazy_parse

REPO = Path(__file__).resolve().parent.parent


def shape(node: cst.CSTNode, out: list) -> list:
    """Every node's class name and fields, in order (reading a lazy body parses it)."""
    tp = type(node)
    out.append(tp.__name__)
    names = _FIELDS.get(tp)
    if names is None:
        names = _FIELDS[tp] = tuple(f.name for f in dataclasses.fields(tp))
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            out.append(name)
            shape(value, out)
        elif isinstance(value, (tuple, list)):
            out.append(name)
            for item in value:
                shape(item, out) if isinstance(item, cst.CSTNode) else out.append(repr(item))
            out.append("]")
        else:
            out.append(f"{name}={value!r}")
    return out


_FIELDS: dict[type, tuple[str, ...]] = {}


def assert_same_tree(text: str) -> None:
    lazy = lazy_parse.parse_lazily(text)
    assert lazy is not None, "nothing was left for later"
    full = cst.parse_module(text)
    assert lazy.code == full.code  # (libcst itself does not round-trip every file)
    assert shape(lazy, []) == shape(full, [])


TRICKY = {
    "methods and comments": (
        "import torch\n\n\nclass A:\n    # about f\n    def f(self, x):  # header comment\n"
        "        # first\n        y = x\n\n        return y\n    # after f, at method level\n\n"
        "    @property\n    def g(self):\n        if self.x:\n            return 1\n        # body level\n"
        "        return 2\n\n\ndef h():\n    pass\n# module level\nx = 1\n"
    ),
    "deeper comment after a compound statement": (
        "def f():\n    if x:\n        y = 1\n        # belongs to the if\n    # belongs to f\n\n\ndef g():\n    return 2\n"
    ),
    "whitespace-only line deeper than the body": "def f():\n    if x:\n        y = 1\n        \nz = 2\n",
    "body on the header's line": "def f(): return 1\n\n\ndef g():\n    return 2\n",
    "backslash after the colon": "def f(): \\\n    return 1\n\n\ndef g():\n    return 2\n",
    "decorated first statement": "def f():\n    @dec\n    def g():\n        pass\n    return g\n\n\nx = 1\n",
    "multi-line header and strings": (
        'def f(\n    a,  # a\n    # inside the brackets\n    b="""\n# not a comment\n""",\n):\n'
        '    """Doc\n\n    more\n    """\n    return a\n\n\nclass B(\n    Base,\n):\n    def m(self): ...\n'
        "    def n(self):\n        return '''\nx\n'''\n\n\nz = 3\n"
    ),
    "tabs": "class A:\n\tdef f(self):\n\t\tif x:\n\t\t\treturn 1\n\t\treturn 2\n\n\ny = 1\n",
    "defs under if, try, with, match": (
        "try:\n    def a():\n        return 1\nexcept E:\n    def a():\n        return 2\nelse:\n    pass\n"
        "finally:\n    pass\nif x:\n    def b():\n        return 1\nelif y:\n    def b():\n        return 2\n"
        "with c:\n    def d():\n        return 1\nmatch v:\n    case 1:\n        def e():\n            return 1\n"
        "for i in r:\n    def f():\n        return i\nwhile w:\n    def g():\n        return 1\n"
    ),
    "async and nested": "async def f():\n    def inner():\n        return 1\n    await g(inner)\n\n\nx = 1\n",
    "body ends the file": "x = 1\n\n\ndef f():\n    return 1\n",
    "two-space indentation": "class A:\n  def f(self):\n    if x:\n      return 1\n    return 2\n\n\ny = 1\n",
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_the_tree_is_libcsts_own(name):
    text = TRICKY[name]
    if lazy_parse.parse_lazily(text) is None:
        return  # nothing could be cut: the caller parses it whole, as before
    assert_same_tree(text)


def _same_tree_in(path: Path) -> bool:
    """Is the lazy tree of `path` libcst's own (False: nothing was left for later)?"""
    text = path.read_text(encoding="utf-8")
    if lazy_parse.parse_lazily(text) is None:
        return False
    assert_same_tree(text)
    return True


def _same_trees_under(*roots: Path) -> int:
    """How many files under `roots` have lazy trees, each checked to be libcst's own;
    on every core (each file is parsed twice: seconds per hundred files)."""
    files = [path for root in roots for path in sorted(root.rglob("*.py"))]
    workers = 1 if os.environ.get("PYTEST_XDIST_WORKER") else min(len(files), os.cpu_count() or 1)
    if workers < 2:  # (under pytest-xdist the other cores run other tests)
        return sum(map(_same_tree_in, files))
    with ProcessPoolExecutor(workers) as pool:  # an AssertionError in a worker fails the test here
        return sum(pool.map(_same_tree_in, files, chunksize=4))


@pytest.mark.slow  # every fixture parsed twice with libcst and walked (about 9 s)
def test_the_fixtures_parse_to_the_same_trees():
    assert _same_trees_under(REPO / "fixtures") > 100


@pytest.mark.slow
@pytest.mark.parametrize("root", ["src", "tests"])  # two tests, so that xdist runs them side by side
def test_streamlints_own_sources_parse_to_the_same_trees(root):
    assert _same_trees_under(REPO / root) > 50


def test_a_body_is_parsed_when_read(monkeypatch):
    text = "import torch\n\n\ndef used(x):\n    return x.cuda()\n\n\ndef unused(y):\n    return y\n"
    module = lazy_parse.parse_lazily(text)
    parsed: list[str] = []
    real = cst.parse_module
    monkeypatch.setattr(cst, "parse_module", lambda source, *a, **k: parsed.append(source) or real(source, *a, **k))
    used = module.body[1]
    assert isinstance(used, cst.FunctionDef) and parsed == []
    statement = used.body.body[0]
    assert isinstance(statement, cst.SimpleStatementLine) and len(parsed) == 1
    assert used.body.body[0] is statement  # parsed once, the same nodes from then on
    assert len(parsed) == 1


def test_nothing_to_leave_for_later():
    assert lazy_parse.parse_lazily("import torch\nx = torch.zeros(3)\n") is None
    assert lazy_parse.parse_lazily("def f(): return 1\n") is None  # body on the header's line
    assert lazy_parse.parse_lazily("def f():\r\n    return 1\r\n\r\nx = 1\r\n") is None
    assert lazy_parse.parse_lazily("def f(:\n    pass\n") is None  # Python refuses it too
