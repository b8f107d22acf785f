"""The v3 syntax index (src/streamlint/model/syntax/): what `build_index` records, the codec,
the content cache, the text prefilter, and the places against libcst's PositionProvider."""

from __future__ import annotations

import ast
import functools
import gc
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamlint.model.syntax import cache as cache_module
from streamlint.model.syntax.build import _index, _walked, build_index, digest_of
from streamlint.model.syntax.cache import IndexCache
from streamlint.model.syntax.codec import dumps, loads
from streamlint.model.syntax.positions import places_from_ast, places_from_libcst
from streamlint.model.syntax.prefilter import may_use_gpu
from streamlint.model.syntax.types import FunctionIndex, ModuleIndex, Nesting, Param, ParamKind, Site
from streamlint.model.syntax.walk import Walk

ROOT = Path(__file__).resolve().parents[2]
SYNTAX = ROOT / "src" / "streamlint" / "model" / "syntax"
PROJECT_FILES = sorted([*ROOT.glob("fixtures/**/*.py"), *ROOT.glob("tests/**/*.py")])
FIXTURES = sorted(ROOT.glob("fixtures/**/*.py"))


def index_of(code: str) -> ModuleIndex:
    source = textwrap.dedent(code)
    return build_index(cst.parse_module(source), source)


def function(index: ModuleIndex, qualname: str) -> FunctionIndex:
    (found,) = [f for f in index.functions if f.qualname == qualname]
    return found


@functools.cache
def parsed(path: Path) -> tuple[str, cst.Module] | None:
    try:
        source = path.read_text(encoding="utf-8")
        return source, cst.parse_module(source)
    except (UnicodeDecodeError, cst.ParserSyntaxError):
        return None  # the fixtures of bad input


@pytest.fixture(autouse=True, scope="module")
def _forget_parsed_trees():
    yield
    parsed.cache_clear()  # the trees of every project file are large: free them for the next modules


# ---- functions and classes ------------------------------------------------------------------


def test_qualnames_follow_python_for_methods_nested_functions_and_classes_not_lambdas():
    index = index_of("""
        def f():
            def inner():
                pass
            class Local:
                def m(self):
                    pass
            g = lambda: 1
        class C:
            def m(self):
                pass
            class D:
                def n(self):
                    pass
        async def h():
            yield 1
    """)
    assert [f.qualname for f in index.functions] == [
        "", "f", "f.<locals>.inner", "f.<locals>.Local.m", "C.m", "C.D.n", "h",
    ]
    assert [c.qualname for c in index.classes] == ["f.<locals>.Local", "C", "C.D"]
    assert function(index, "f").nested == ("f.<locals>.inner",)  # not the method of Local
    assert function(index, "").nested == ("f", "h")
    assert function(index, "C.D.n").class_qualname == "C.D"
    assert function(index, "f.<locals>.inner").class_qualname is None
    h = function(index, "h")
    assert h.is_async and h.is_generator and not function(index, "f").is_generator
    c = index.classes[1]
    assert c.methods == ("m",) and index.classes[2].methods == ("n",)


def test_parameters_keep_their_kinds_annotations_and_defaults_in_order():
    index = index_of("""
        def f(a, /, b: torch.Tensor, c: Optional[cp.ndarray] = None, *args: int, d=torch.device("cuda"),
              e: bool = True, **kw):
            pass
        def g(a, *, b=-1):
            pass
    """)
    assert function(index, "f").params == (
        Param("a", ParamKind.POSITIONAL_ONLY),
        Param("b", ParamKind.POSITIONAL, "torch.Tensor"),
        Param("c", ParamKind.POSITIONAL, "Optional[cp.ndarray]", "None"),
        Param("args", ParamKind.VAR_POSITIONAL, "int"),
        Param("d", ParamKind.KEYWORD_ONLY, None, 'torch.device("cuda")'),
        Param("e", ParamKind.KEYWORD_ONLY, "bool", "True"),
        Param("kw", ParamKind.VAR_KEYWORD),
    )
    g = function(index, "g")
    assert g.params == (Param("a", ParamKind.POSITIONAL), Param("b", ParamKind.KEYWORD_ONLY, None, "-1"))


def test_decorators_and_bases_are_dotted_names_as_written():
    index = index_of("""
        @functools.lru_cache(maxsize=None)
        @staticmethod
        @registry[0]
        def f():
            pass
        @dataclass
        class C(nn.Module, Generic[T], *extra, metaclass=Meta):
            pass
    """)
    assert function(index, "f").decorators == ("functools.lru_cache", "staticmethod", "")
    assert index.classes[0].decorators == ("dataclass",)
    assert index.classes[0].bases == ("nn.Module", "Generic", "")


def test_sites_count_definitions_per_enclosing_function_and_the_module_body_has_ordinal_minus_one():
    index = index_of("""
        def f():
            def a(): pass
            class B: pass
            def c(): pass
        class K:
            def m(self): pass
    """)
    assert function(index, "").site == Site("", -1, 1, 1)
    assert function(index, "f").site == Site("", 0, 2, 1)
    assert [function(index, q).site.ordinal for q in ("f.<locals>.a", "f.<locals>.c")] == [0, 2]
    assert index.classes[0].site == Site("f", 1, 4, 5)
    assert index.classes[1].site == Site("", 1, 6, 1)
    assert function(index, "K.m").site == Site("", 2, 7, 5)  # a class body runs in the enclosing function


# ---- calls and their nesting ----------------------------------------------------------------


def test_calls_are_in_source_order_with_arguments_counted():
    index = index_of("""
        x = torch.cuda.Stream(device, priority=-1)
        y = f(g(1), *rest, key=h(), **options)(2)
        z = a.b().c()
    """)
    calls = function(index, "").calls
    assert [c.callee for c in calls] == ["torch.cuda.Stream", "", "f", "g", "h", "", "a.b"]
    stream, outer, f = calls[0], calls[1], calls[2]
    assert (stream.receiver_root, stream.positional, stream.keywords) == ("torch", 1, ("priority",))
    assert (f.receiver_root, f.positional, f.keywords) == ("f", 2, ("key", "**"))
    assert outer.positional == 1 and outer.receiver_root == ""
    assert [c.site.ordinal for c in calls] == list(range(7))
    assert [(c.site.line, c.site.column) for c in calls[:3]] == [(2, 5), (3, 5), (3, 5)]


def test_nesting_of_a_call_in_a_loop_inside_an_if_inside_a_try():
    index = index_of("""
        def f(xs):
            before()
            try:
                if ready():
                    for x in items():
                        work(x)
                else:
                    other()
            except ValueError:
                recover()
            else:
                after()
            finally:
                cleanup()
    """)
    nesting = {c.callee: c.nesting for c in function(index, "f").calls}
    assert nesting["before"] == Nesting()
    assert nesting["ready"] == Nesting(in_try=True)
    assert nesting["items"] == Nesting(tests=(0,), in_try=True)  # a for loop's iterable runs once, outside it
    assert nesting["work"] == Nesting(loops=(0,), tests=(0,), in_try=True)
    assert nesting["other"] == Nesting(tests=(0,), in_try=True)
    assert nesting["recover"] == Nesting(in_except=True)
    assert nesting["after"] == Nesting() and nesting["cleanup"] == Nesting()


def test_nesting_of_while_elif_ternary_comprehension_and_lambda():
    index = index_of("""
        def f(xs):
            while more():
                step()
            else:
                done()
            if a():
                pass
            elif b():
                c()
            y = yes() if cond() else no()
            z = [elt(x) for x in source() if keep(x) for w in inner(x)]
            g = lambda: later()
            try:
                pass
            finally:
                never_guarded()
    """)
    nesting = {c.callee: c.nesting for c in function(index, "f").calls}
    assert nesting["more"] == Nesting(loops=(0,))  # the test runs on every iteration
    assert nesting["step"] == Nesting(loops=(0,), tests=(0,))
    assert nesting["done"] == Nesting(tests=(0,))
    assert nesting["b"] == Nesting(tests=(1,)) and nesting["c"] == Nesting(tests=(1, 2))
    assert nesting["yes"] == nesting["no"] == Nesting(tests=(3,)) and nesting["cond"] == Nesting()
    assert nesting["source"] == Nesting()
    assert nesting["keep"] == Nesting(loops=(1,))
    assert nesting["inner"] == Nesting(loops=(1,), tests=(4,))
    assert nesting["elt"] == Nesting(loops=(1, 2), tests=(4,))
    assert nesting["later"] == Nesting(in_lambda=True)
    assert nesting["never_guarded"] == Nesting()  # a try without a handler guards nothing


def test_calls_of_nested_functions_belong_to_them_and_decorators_and_defaults_to_the_definer():
    index = index_of("""
        def outer():
            @deco()
            def inner(x=default()):
                body()
            return inner
    """)
    assert [c.callee for c in function(index, "outer").calls] == ["deco", "default"]
    assert [c.callee for c in function(index, "outer.<locals>.inner").calls] == ["body"]
    assert function(index, "outer").returns == 1 and function(index, "outer.<locals>.inner").returns == 0


# ---- self reads and stores ------------------------------------------------------------------


def test_self_stores_and_reads_use_the_methods_first_parameter_whatever_its_name():
    index = index_of("""
        class Prefetcher:
            def __init__(me, stream):
                me.stream = stream
                me.count += 1
                me.pair, (me.left, *me.rest) = 1, (2, 3)
                me.buffer[0] = me.source.next()
                me.declared: int
                me.typed: int = 0
                self.not_mine = 1
                with open(me.path) as me.handle:
                    pass
                for me.i in me.range:
                    pass
            @staticmethod
            def make(self):
                self.never = 1
            def run(this):
                def callback():
                    this.done = True
                def shadow(this):
                    this.other = True
                return lambda this: this.hidden
    """)
    init = function(index, "Prefetcher.__init__")
    assert init.self_stores == ("count", "handle", "i", "left", "pair", "rest", "stream", "typed")
    assert init.self_reads == ("buffer", "count", "path", "range", "source")
    assert function(index, "Prefetcher.make").self_stores == ()
    assert function(index, "Prefetcher.run.<locals>.callback").self_stores == ("done",)
    assert function(index, "Prefetcher.run.<locals>.shadow").self_stores == ()
    assert function(index, "Prefetcher.run").self_reads == ()
    assert index.classes[0].self_stores == (("__init__", init.self_stores),)


# ---- imports and frameworks -----------------------------------------------------------------


def test_imports_record_relative_levels_aliases_and_the_bound_name():
    index = index_of("""
        import torch.cuda
        import cupy as cp, os
        from numba import cuda as nbcuda
        from . import sibling
        from ..pkg.mod import thing as alias
        from m import *
        def f():
            import late
    """)
    rows = [(i.module, i.name, i.alias, i.level, i.site.function) for i in index.imports]
    assert rows == [
        ("torch.cuda", None, "torch", 0, ""),
        ("cupy", None, "cp", 0, ""),
        ("os", None, "os", 0, ""),
        ("numba", "cuda", "nbcuda", 0, ""),
        ("", "sibling", "sibling", 1, ""),
        ("pkg.mod", "thing", "alias", 2, ""),
        ("m", "*", "*", 0, ""),
        ("late", None, "late", 0, "f"),
    ]
    assert [(i.site.line, i.site.column) for i in index.imports[:3]] == [(2, 8), (3, 8), (3, 20)]


@pytest.mark.parametrize(
    "code, frameworks",
    [
        ("import torch as t", {"torch"}),
        ("import cupyx.scipy.ndimage", {"cupy"}),
        ("import numba\n" "@" "numba.jit\ndef f(): pass", set()),  # CPU numba is no GPU framework
        ("import numba as nb\n" "@" "nb.cuda.jit\ndef f(): pass", {"numba"}),
        ("from numba import cuda\ncuda.synchronize()", {"numba"}),  # numba's cuda, not cuda-python
        ("from cuda.bindings import runtime", {"cuda"}),
        ("import cuda.core.experimental as cx", {"cuda"}),
        ("def f(x):\n    return torch.cuda.current_stream()", {"torch"}),  # a dotted name, no import
        ("def f(x):\n    return cuda.to_device(x)", set()),  # an unbound `cuda` is too often numba's
        ("from . import torch\ntorch.cuda.synchronize()", set()),  # a sibling module called torch
        ("import torchvision\nimport os.path", set()),
    ],
)
def test_frameworks_come_from_imports_and_dotted_names_through_aliases(code, frameworks):
    assert index_of(code).frameworks == frozenset(frameworks)


# ---- places against libcst's PositionProvider -----------------------------------------------


def same_index_both_ways(source: str, module: cst.Module):
    """The fast index equals the walk over PositionProvider's places; returns (index, places),
    so that a caller checks more against them without resolving the (slow) positions again."""
    fast = build_index(module, source)
    places = places_from_libcst(module)
    walk = _walked(module, places)
    assert walk is not None
    assert fast == _index(walk, digest_of(source))
    return fast, places


def check_sites_against_position_provider(source: str, module: cst.Module) -> None:
    """Every call's and definition's site is where PositionProvider puts it, and the calls of
    each function are numbered in source order."""
    # The index and the places of the first check, not built again: both are functions of the
    # tree alone (PositionProvider's pass is most of this check's time on the project files).
    index, places = same_index_both_ways(source, module)
    sites = [c.site for f in index.functions for c in f.calls]
    assert sorted((s.line, s.column) for s in sites) == sorted(places.calls)
    defs = [f.site for f in index.functions[1:]] + [c.site for c in index.classes]
    assert sorted((s.line, s.column) for s in defs) == places.defs
    for f in index.functions:
        assert [(c.site.line, c.site.column) for c in f.calls] == sorted((c.site.line, c.site.column) for c in f.calls)
        assert [c.site.ordinal for c in f.calls] == list(range(len(f.calls)))


def test_sites_agree_with_position_provider_on_tricky_code():
    source = textwrap.dedent("""\
        s = "é€"; f(é(1))  # columns are characters, not UTF-8 bytes
        (g)(h)(i(2))
        @d(  x()  )
        class C(B(), m=k()):
            async def m(self, a=[j() for _ in r()]):
                return {k(): v() for k in w() if z()}, (lambda: y())(), await q(), p() if t() else u()
        x = f"{fmt(1)!r:{width()}}" + ''.join(map(str, q()))
        match value():
            case [1, *_] if guard():
                hit()
    """)
    check_sites_against_position_provider(source, cst.parse_module(source))


@pytest.mark.parametrize(
    "source",
    ["s = 'é'\r\nf(é())\r\n", "s = 'é'\rf(é())\rg()\r", "\x0cs = 'é'; f()\n\x0cdef g():\n    h('é', k())\n",
     "a = '\u2028'; f()  # é\u2028\n", "if x: f(\t'é',\tg())\n"],
)
def test_sites_agree_with_position_provider_whatever_the_line_ends_and_whitespace(source):
    check_sites_against_position_provider(source, cst.parse_module(source))


def test_code_newer_than_pythons_own_parser_falls_back_to_position_provider(monkeypatch):
    source = "x = f()\ndef g():\n    return h(1)\n"
    module = cst.parse_module(source)
    expected = build_index(module, source)
    monkeypatch.setattr("streamlint.model.syntax.build.places_from_ast", lambda text: None)
    assert build_index(module, source) == expected
    mismatched = places_from_ast(source + "k()\n")  # one call too many: the counts tell
    monkeypatch.setattr("streamlint.model.syntax.build.places_from_ast", lambda text: mismatched)
    assert build_index(module, source) == expected


def test_sites_agree_with_position_provider_on_some_fixtures():
    for path in FIXTURES[::40]:
        found = parsed(path)
        if found is not None:
            check_sites_against_position_provider(*found)


@pytest.mark.slow
@pytest.mark.parametrize("root", ["fixtures", "tests"])  # two tests, so that xdist runs them side by side
def test_sites_agree_with_position_provider_on_every_fixture_and_test_file(root):
    files = [path for path in PROJECT_FILES if path.relative_to(ROOT).parts[0] == root]
    assert files
    for path in files:
        found = parsed(path)
        if found is not None:
            check_sites_against_position_provider(*found)


def test_the_walk_visits_each_node_at_most_once(monkeypatch):
    seen: list[int] = []
    visit = Walk.visit

    def counting(self, node):
        seen.append(id(node))
        visit(self, node)

    monkeypatch.setattr(Walk, "visit", counting)
    for path in FIXTURES[::25]:
        found = parsed(path)
        if found is not None:
            seen.clear()
            build_index(found[1], found[0])
            assert len(seen) == len(set(seen)), path


# ---- codec and cache ------------------------------------------------------------------------


def test_codec_round_trip_is_exact_on_some_fixtures():
    for path in FIXTURES[::30]:
        found = parsed(path)
        if found is not None:
            index = build_index(found[1], found[0])
            assert loads(dumps(index)) == index, path


@pytest.mark.slow
def test_codec_round_trip_is_exact_on_every_fixture_and_test_file():
    for path in PROJECT_FILES:
        found = parsed(path)
        if found is not None:
            index = build_index(found[1], found[0])
            assert loads(dumps(index)) == index, path


def test_codec_keeps_odd_text_and_refuses_another_format():
    index = index_of("def f(a='\\udc80 é', b: 'x' = None):\n    return g(a)\n")
    assert loads(dumps(index)) == index
    with pytest.raises(ValueError):
        loads(dumps(index).replace(b"[1,", b"[0,", 1))
    with pytest.raises(ValueError):
        loads(b"\xff not json")
    with pytest.raises(ValueError):
        loads(b'[1, "digest", [[1, 2]], [], [], []]')  # the right format, damaged


def test_cache_hit_needs_no_parse(monkeypatch, tmp_path):
    source = "import torch\ntorch.cuda.synchronize()\n"
    cache = IndexCache(directory=tmp_path)
    first = cache.index_for(source)
    assert first.digest == digest_of(source)

    def no_parse(text):
        raise AssertionError("parsed although cached")

    monkeypatch.setattr(cache_module, "parse_module", no_parse)
    assert cache.index_for(source) is first  # from memory
    assert IndexCache(directory=tmp_path).index_for(source) == first  # from disk, in a new process' cache
    assert (tmp_path / f"{first.digest}.json").is_file()


def test_cache_forgets_the_least_recently_used_and_ignores_a_damaged_file(tmp_path):
    cache = IndexCache(capacity=2)
    a, b, c = "a = 1\n", "b = 2\n", "c = 3\n"
    index_a = cache.index_for(a)
    cache.index_for(b)
    cache.index_for(a)  # a is now the most recently used
    cache.index_for(c)
    assert list(cache.memory) == [digest_of(a), digest_of(c)]
    assert cache.index_for(a) is index_a
    on_disk = IndexCache(directory=tmp_path)
    (tmp_path / f"{digest_of(b)}.json").write_bytes(b"[1, broken")
    assert on_disk.index_for(b).digest == digest_of(b)
    assert loads((tmp_path / f"{digest_of(b)}.json").read_bytes()).digest == digest_of(b)  # rewritten


def test_given_tree_is_used_instead_of_a_parse(monkeypatch):
    source = "x = f()\n"
    module = cst.parse_module(source)
    monkeypatch.setattr(cache_module, "parse_module", lambda text: pytest.fail("parsed"))
    assert IndexCache().index_for(source, module).functions[0].calls[0].callee == "f"


# ---- the prefilter --------------------------------------------------------------------------


@pytest.mark.slow
def test_prefilter_says_yes_whenever_the_index_finds_a_framework_in_project_files():
    checked = 0
    for path in PROJECT_FILES:
        found = parsed(path)
        if found is not None and build_index(found[1], found[0]).frameworks:
            assert may_use_gpu(found[0]), path
            checked += 1
    assert checked > 100
    assert not may_use_gpu("import numpy as np\nnp.zeros(3)\n")


_ROOTS = st.sampled_from(["torch", "cupy", "cupyx", "numba", "cuda", "np", "torchvision", "Torch", "nb", "cp", "t"])
_ATTRS = st.sampled_from(["cuda", "core", "bindings", "Stream", "jit", "x"])


@st.composite
def small_modules(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 4))):
        root, attr, alias = draw(_ROOTS), draw(_ATTRS), draw(_ROOTS)
        form = draw(st.integers(0, 4))
        lines.append([
            f"import {root}", f"import {root}.{attr} as {alias}", f"from {root} import {attr}",
            f"from {root} import {attr} as {alias}", f"y = {root}.{attr}.z()",
        ][form])
    return "\n".join(lines) + "\n"


@settings(max_examples=200, deadline=None)
@given(small_modules())
def test_prefilter_never_says_no_where_the_index_finds_a_framework(source):
    if build_index(cst.parse_module(source), source).frameworks:
        assert may_use_gpu(source)


# ---- the layer's own rules ------------------------------------------------------------------


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


def test_build_pauses_the_collector_and_restores_its_state():
    assert gc.isenabled()
    index_of("x = f()\n")
    assert gc.isenabled()
    gc.disable()
    try:
        index_of("x = f()\n")
        assert not gc.isenabled()
    finally:
        gc.enable()
