"""The project's callers of the checked module's functions (reverse edges over the package's
modules): what every call site passes, joined, is a context the function is walked in; the
stream every caller hands in for the work; methods inherited from project bases; exclusive
sides of one test never pair across a call."""

from __future__ import annotations

import functools
import re
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from streamlint import reads
from streamlint.model.domain.order import AccessEvent, ConflictKind, Order
from streamlint.model.domain.paths import Path as APath
from streamlint.model.domain.paths import Root
from streamlint.model.domain.streams import StreamRef
from streamlint.model.file_model import analyze_file

MEMORY = """
import cupy as cp


class DeviceMemory:
    def __init__(self):
        self.memory = None

    def assign(self, size):
        self.memory = cp.cuda.alloc(size)

    def raw(self):
        return self.memory
"""

# MPI reads what it is handed from the host side, waiting for no stream.
EXCHANGE = """
import mpi4py.MPI


def exchange(comm, buf):
    comm.Bcast([buf.raw(), mpi4py.MPI.FLOAT])
"""

CALLER = """
from . import exchange, memory


class Communicator:
    def __init__(self, comm):
        self.comm = comm
        self.buf = {made}

    def run(self, n):
        self.buf.assign(n)
        exchange.exchange(self.comm, self.buf)
"""


pytestmark = pytest.mark.usefixtures("fresh_project_state")


def _package(root: Path, files: dict[str, str]) -> Path:
    (root / "pyproject.toml").write_text("")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    for name, text in files.items():
        (root / "pkg" / f"{name}.py").write_text(textwrap.dedent(text))
    return root / "pkg"


def _kinds(path: Path) -> list[ConflictKind]:
    model = analyze_file(cst.parse_module(path.read_text()), str(path))
    return [h.kind for h in model.hazards]


def test_every_caller_in_the_package_passing_device_memory_types_the_parameter(tmp_path):
    pkg = _package(tmp_path, {"memory": MEMORY, "exchange": EXCHANGE,
                              "caller": CALLER.format(made="memory.DeviceMemory()")})
    # `buf` is device memory its callers made on their current stream: MPI does not wait for it
    assert _kinds(pkg / "exchange.py") == [ConflictKind.HOST_READ_BEFORE_SYNC]


def test_callers_that_disagree_say_nothing(tmp_path):
    other = CALLER.format(made="object()").replace("class Communicator", "class Other")
    pkg = _package(tmp_path, {"memory": MEMORY, "exchange": EXCHANGE,
                              "caller": CALLER.format(made="memory.DeviceMemory()"), "other": other})
    assert _kinds(pkg / "exchange.py") == []


def test_no_caller_no_context(tmp_path):
    pkg = _package(tmp_path, {"memory": MEMORY, "exchange": EXCHANGE})
    assert _kinds(pkg / "exchange.py") == []


def test_the_callers_modules_are_noted_for_the_cache(tmp_path):
    pkg = _package(tmp_path, {"memory": MEMORY, "exchange": EXCHANGE,
                              "caller": CALLER.format(made="memory.DeviceMemory()")})
    path = pkg / "exchange.py"
    with reads.recording() as notes:
        analyze_file(cst.parse_module(path.read_text()), str(path))
    assert str(pkg / "caller.py") in notes


BASE = """
import cupy

from . import kernels


class Base:
    def __init__(self, fused):
        self.fused = fused

    def _pack(self, buffer, stream=None):
        if self.fused:
            kernels.fill(buffer)  # on the current stream, though the callers hand `stream` for the work
        else:
            kernels.fill_on(buffer, stream)
"""

KERNELS = """
import cupy

_FILL = cupy.RawKernel("", "fill")


def fill(buffer):
    _FILL((1,), (1,), (buffer.memory,))


def fill_on(buffer, stream):
    _FILL((1,), (1,), (buffer.memory,), stream=stream)
"""

DERIVED = """
import cupy

from . import base, memory


class Derived(base.Base):
    def __init__(self, fused):
        super().__init__(fused)
        self.stream = cupy.cuda.Stream(non_blocking={non_blocking})
        self.buf = memory.DeviceMemory()

    def reduce(self, n):
        self.buf.assign(n)
        self._pack(self.buf, self.stream)
"""


def test_a_subclass_in_another_module_hands_the_inherited_method_its_stream(tmp_path):
    pkg = _package(tmp_path, {"memory": MEMORY, "kernels": KERNELS, "base": BASE,
                              "derived": DERIVED.format(non_blocking=True)})
    model = analyze_file(cst.parse_module((pkg / "base.py").read_text()), str(pkg / "base.py"))
    found = [(h.function.rsplit(".", 1)[-1], h.kind) for h in model.hazards]
    assert found == [("_pack", ConflictKind.READ_AFTER_WRITE)]


def test_a_blocking_stream_handed_in_is_ordered_by_the_default_stream(tmp_path):
    pkg = _package(tmp_path, {"memory": MEMORY, "kernels": KERNELS, "base": BASE,
                              "derived": DERIVED.format(non_blocking=False)})
    assert _kinds(pkg / "base.py") == []


def test_the_inherited_method_applies_in_the_subclass(tmp_path):
    pkg = _package(tmp_path, {"memory": MEMORY, "kernels": KERNELS, "base": BASE,
                              "derived": DERIVED.format(non_blocking=True)})
    path = pkg / "derived.py"
    model = analyze_file(cst.parse_module(path.read_text()), str(path))
    walked = {q for q, _ in model.solved.walks}
    assert "pkg.base.Base._pack" in walked and "pkg.derived.Derived._pack" not in walked


def test_two_sides_of_one_test_of_one_call_never_pair():
    x = APath(Root.local("x"))
    side, current = StreamRef.created("f#1", "torch"), StreamRef.ambient("torch")
    body = AccessEvent(x, True, side, "g#1", ("f#2",), branch=("f#2>g?0:1",))
    other = AccessEvent(x, True, current, "g#2", ("f#2",), branch=("f#2>g?0:0",))
    another_call = AccessEvent(x, True, current, "g#2", ("f#3",), branch=("f#3>g?0:0",))
    order = Order().add(body)
    assert order.conflicts(other) == []
    assert [c.kind for c in order.conflicts(another_call)] == [ConflictKind.WRITE_AFTER_WRITE]


DUCK = """
import mpi4py.MPI

from . import memory


def exchange(comm, buf, n):
    buf.assign(n)
    comm.Bcast([buf.raw(), mpi4py.MPI.FLOAT])
"""


def test_a_parameter_whose_methods_one_project_class_defines_is_of_that_class(tmp_path):
    pkg = _package(tmp_path, {"memory": MEMORY, "exchange": DUCK})
    # `assign` and `raw` are DeviceMemory's only: `buf.memory` is device memory, and MPI reads it
    # from the host side while the caller's stream may still write it (the entry assumption)
    model = analyze_file(cst.parse_module((pkg / "exchange.py").read_text()), str(pkg / "exchange.py"))
    assert [h.kind for h in model.hazards] == []  # assigned here, nothing queued on it yet
    walked = [c for (q, c) in model.solved.walks if q.endswith("DeviceMemory.raw")]
    assert walked, "the method of the class the parameter's use names is applied"


def test_methods_two_classes_define_name_no_class(tmp_path):
    twin = MEMORY.replace("class DeviceMemory", "class HostMemory")
    twin = twin.replace("cp.cuda.alloc", "cp.cuda.alloc_pinned_memory")
    pkg = _package(tmp_path, {"memory": MEMORY + twin, "exchange": DUCK})
    model = analyze_file(cst.parse_module((pkg / "exchange.py").read_text()), str(pkg / "exchange.py"))
    assert not [c for (q, c) in model.solved.walks if q.endswith("Memory.raw")]


def test_the_callers_of_a_method_ignoring_the_stream_they_hand_it_leave_the_problem_to_it(tmp_path):
    packed = "self._pack(self.buf, self.stream)"
    derived = DERIVED.format(non_blocking=True).replace(
        packed, packed + "\n        kernels.fill_on(self.buf, self.stream)")
    derived = derived.replace("from . import base, memory", "from . import base, kernels, memory")
    pkg = _package(tmp_path, {"memory": MEMORY, "kernels": KERNELS, "base": BASE, "derived": derived})
    # `_pack` (base.py) fills the buffer on the current stream, though it is handed `self.stream`:
    # reported in base.py, at the fill; the subclass's use of the stream after it is no second report
    assert _kinds(pkg / "derived.py") == []


SPEC = """
import cffi
import cupy
import numpy
from mpi4py import MPI

_ffi = cffi.FFI()


def to_buffer(array):
    if cupy.get_array_module(array) is numpy:
        return array
    return (_ffi.buffer(_ffi.cast("void *", array.data.ptr), array.nbytes), MPI.FLOAT)
"""

SENDER = """
import cupy
import numpy

from . import spec


def send(comm, array):
    comm.Send(spec.to_buffer(array), dest=1)


def send_synced(comm, array):
    buf = spec.to_buffer(array)
    if cupy.get_array_module(array) is not numpy:
        cupy.cuda.Stream.null.synchronize()
    comm.Send(buf, dest=1)
"""


def test_a_helper_of_another_module_hands_mpi_the_device_side_of_a_type_test(tmp_path):
    pkg = _package(tmp_path, {"spec": SPEC, "sender": SENDER})
    model = analyze_file(cst.parse_module((pkg / "sender.py").read_text()), str(pkg / "sender.py"))
    # the module-level `cffi.FFI()` is a pointer library; the null stream's synchronize waits
    assert [(h.function.rsplit(".", 1)[-1], h.kind) for h in model.hazards] == [
        ("send", ConflictKind.HOST_READ_BEFORE_SYNC)]


ENGINE = """
import torch


class Engine:
    def __init__(self, model):
        self.model = model
        self.total = 0.0

    def backward(self, loss):
        self.total += loss.mean().item()
"""

PIPE = """
import torch

from pkg.engine import Engine


class PipeEngine(Engine):
    def train(self, batches):
        for batch in batches:
            loss = torch.ones(4, device="cuda").sum()
            super().backward(loss)
"""


def _contexts(path: Path, qualname: str) -> list:
    model = analyze_file(cst.parse_module(path.read_text()), str(path))
    return [context for (q, context) in model.solved.walks if q == qualname]


def test_a_super_call_in_a_subclass_of_another_module_is_a_caller_of_the_base_method(tmp_path):
    pkg = _package(tmp_path, {"engine": ENGINE, "pipe": PIPE})
    contexts = _contexts(pkg / "engine.py", "pkg.engine.Engine.backward")
    told = [c.arg("loss") for c in contexts if c.arg("loss") is not None]
    assert told and all(value.on_device for value in told)


def test_a_super_call_applies_the_base_method_to_the_receiver(tmp_path):
    pkg = _package(tmp_path, {"engine": ENGINE, "pipe": PIPE})
    path = pkg / "pipe.py"
    model = analyze_file(cst.parse_module(path.read_text()), str(path))
    assert "pkg.engine.Engine.backward" in {q for q, _ in model.solved.walks}


CACHE = """
import torch


class Cache:
    def __init__(self):
        self.rows = torch.zeros(8, device="cuda")

    def prepare(self, ids):
        return self.rows.index_select(0, ids)
"""

BASE_MODULE = """
from torch import nn


class BaseBag(nn.Module):
    pass
"""

BAG = """
from .base_bag import BaseBag
from .cache import Cache


class Bag(BaseBag):
    def __init__(self):
        super().__init__()
        self.cache = Cache()

    def forward(self, ids):
        return self.cache.prepare(ids)
"""


def test_a_forward_in_an_importing_module_makes_the_method_it_calls_hot(tmp_path):
    # `Bag` is an `nn.Module` through a project base: its `forward` runs on every step, and so
    # does the method of the object it holds that it calls every time
    pkg = _package(tmp_path, {"cache": CACHE, "base_bag": BASE_MODULE, "bag": BAG})
    contexts = _contexts(pkg / "cache.py", "pkg.cache.Cache.prepare")
    assert any(c.hot == "Bag.forward" for c in contexts)


def test_callers_are_read_in_the_largest_package_within_the_bound(tmp_path, monkeypatch):
    from streamlint.model.interproc import solver
    pkg = _package(tmp_path, {})
    sub = pkg / "sub"
    sub.mkdir()
    (sub / "__init__.py").write_text("")
    for name, text in {"memory": MEMORY, "exchange": EXCHANGE,
                       "caller": CALLER.format(made="memory.DeviceMemory()")}.items():
        (sub / f"{name}.py").write_text(textwrap.dedent(text))
    for i in range(6):  # the top package is larger than the bound; `pkg.sub` is within it
        (pkg / f"filler{i}.py").write_text("import torch\n")
    monkeypatch.setattr(solver, "MAX_PACKAGE_FILES", 5)
    assert _kinds(sub / "exchange.py") == [ConflictKind.HOST_READ_BEFORE_SYNC]


def test_a_module_that_calls_a_name_spells_it():
    from streamlint.model.interproc.program import unit_of
    from streamlint.model.syntax.prefilter import may_call, may_call_by_name, spelled_words
    for text in (CALLER.format(made="memory.DeviceMemory()"), PIPE, BAG, DERIVED.format(non_blocking=True)):
        source = textwrap.dedent(text)
        unit = unit_of("pkg.m", cst.parse_module(source))
        for names in unit.called_names().values():
            for name in names:
                assert may_call(source.encode(), frozenset({name}))
                assert may_call_by_name(source.encode(), frozenset({name}))
    # a call by name: the name, then only blanks, continuations or comments before the parenthesis
    for call in (b"x.prepare(a)", b"prepare (a)", b"y = (x.prepare  # why\n     (a))", b"x.prepare\\\n(a)",
                 b"@prepare(1)\ndef f(): pass"):
        assert may_call_by_name(call, frozenset({"prepare"})), call
        assert "prepare" in set().union(*unit_of("m", cst.parse_module(call.decode())).called_names().values())
    for no_call in (b"def prepare(a): pass", b"x.prepared(a)", b"x.prepare = 1", b"f(prepare)",
                    b"y = x.prepare  " + b"# " * 40 + b"\nz = 1\n"):  # (a long comment: no exponential backtracking)
        assert not may_call_by_name(no_call, frozenset({"prepare"})), no_call
        assert not any("prepare" in n for n in unit_of("m", cst.parse_module(no_call.decode())).called_names().values())
    assert may_call_by_name(b"class B(Engine): pass", frozenset({"prepare"}), frozenset({"Engine"}))  # (a base)
    assert not may_call(b"import torch\n", frozenset({"prepare"}))
    # over the words a module spells, the same answers as over its bytes, for every ASCII name
    for data in (textwrap.dedent(PIPE).encode(), b"x.prepared() # \xc3\xa9t\xc3\xa9 2prepare\n"):
        words = spelled_words(data)
        names = {n.decode() for n in re.findall(rb"[A-Za-z0-9_]+", data)}
        for name in names | {n[1:] for n in names} | {n[:-1] for n in names} | {"absent", "pre"}:
            assert may_call(words, frozenset({name})) == may_call(data, frozenset({name})), name


def test_a_super_call_to_a_base_named_through_a_reexport(tmp_path):
    pkg = _package(tmp_path, {"engine": ENGINE, "pipe": PIPE.replace("from pkg.engine import", "from pkg import")})
    (pkg / "__init__.py").write_text("from pkg.engine import Engine\n")
    contexts = _contexts(pkg / "engine.py", "pkg.engine.Engine.backward")
    assert any(c.arg("loss") is not None and c.arg("loss").on_device for c in contexts)


EXCHANGERS = """
import torch


class Exchanger:
    def __init__(self):
        self.stream1 = torch.cuda.Stream()
        self.stream2 = torch.cuda.Stream()


class Copying(Exchanger):
    def exchange(self, out, into):
        into.copy_(out)


class Zeroing(Exchanger):
    def exchange(self, out, into):
        into.zero_()
"""

HALO = """
import torch


def halo(ex, x, flag):
    stream1 = ex.stream1
    stream2 = ex.stream2
    pad = torch.empty([8, 10], device="cuda")
    stream1.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream1):
        if flag:
            edge = pad[:, 9:10]
            ex.exchange(x[:, :1], edge)
        else:
            edge = pad[9:10, :]
            ex.exchange(x[:1, :], edge)
    stream2.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream2):
        y = edge.clone()
    {after}
"""


def test_a_method_of_a_receiver_of_unknown_class_is_each_class_of_its_hierarchy(tmp_path):
    # only the subclasses of `Exchanger` define `exchange`: `ex` is one of them (class-hierarchy
    # analysis); each writes `edge` on stream1, which stream2 then reads unordered
    pkg = _package(tmp_path, {"exchangers": EXCHANGERS, "halo": HALO.format(after="return y")})
    (pkg / "__init__.py").write_text("from .exchangers import Copying, Zeroing\n")
    model = analyze_file(cst.parse_module((pkg / "halo.py").read_text()), str(pkg / "halo.py"))
    assert ConflictKind.READ_AFTER_WRITE in [h.kind for h in model.hazards]


def test_a_wait_for_the_exchange_orders_it(tmp_path):
    waited = HALO.format(after="return y").replace(
        "    stream2.wait_stream(torch.cuda.current_stream())\n",
        "    stream2.wait_stream(torch.cuda.current_stream())\n    stream2.wait_stream(stream1)\n")
    pkg = _package(tmp_path, {"exchangers": EXCHANGERS, "halo": waited})
    (pkg / "__init__.py").write_text("from .exchangers import Copying, Zeroing\n")
    model = analyze_file(cst.parse_module((pkg / "halo.py").read_text()), str(pkg / "halo.py"))
    assert all("edge" not in repr(h) or h.kind is not ConflictKind.READ_AFTER_WRITE for h in model.hazards)


def test_classes_of_two_hierarchies_defining_the_method_leave_the_call_opaque(tmp_path):
    other = EXCHANGERS + "\n\nclass Unrelated:\n    def exchange(self, out, into):\n        into.zero_()\n"
    pkg = _package(tmp_path, {"exchangers": other, "halo": HALO.format(after="return y")})
    (pkg / "__init__.py").write_text("from .exchangers import Copying, Zeroing, Unrelated\n")
    model = analyze_file(cst.parse_module((pkg / "halo.py").read_text()), str(pkg / "halo.py"))
    assert "pkg.exchangers.Copying.exchange" not in {q for q, _ in model.solved.walks}


def test_a_class_whose_method_cannot_take_the_calls_arguments_is_no_candidate(tmp_path):
    # `Unrelated.exchange` takes one argument, the call hands two: only `Exchanger`'s hierarchy
    # is left (arity), so `ex` is one of its classes and the exchange writes `edge` on stream1
    other = EXCHANGERS + "\n\nclass Unrelated:\n    def exchange(self, out, *, into=None):\n        out.zero_()\n"
    pkg = _package(tmp_path, {"exchangers": other, "halo": HALO.format(after="return y")})
    (pkg / "__init__.py").write_text("from .exchangers import Copying, Zeroing, Unrelated\n")
    model = analyze_file(cst.parse_module((pkg / "halo.py").read_text()), str(pkg / "halo.py"))
    walked = {q for q, _ in model.solved.walks}
    assert "pkg.exchangers.Copying.exchange" in walked and "pkg.exchangers.Unrelated.exchange" not in walked
    assert ConflictKind.READ_AFTER_WRITE in [h.kind for h in model.hazards]


@pytest.mark.parametrize("call, accepted", [
    ("x.m(1, 2, 3, 4)", True), ("x.m(1)", False), ("x.m(1, 2, 3, 4, 5)", False), ("x.m(1, b=2)", True),
    ("x.m(1, e=2)", False), ("x.m(1, a=2)", False), ("x.m(*args)", True), ("x.m(**kw)", True)])
def test_a_defs_arity_decides_whether_it_takes_a_call(call, accepted):
    from streamlint.model.syntax.arity import accepts
    method = cst.parse_module("def m(self, a, b, c=None, d=None):\n    pass\n").body[0]
    assert accepts(method.params, cst.parse_expression(call), bound=True) is accepted
    starred = cst.parse_module("def m(self, *xs, k, **kw):\n    pass\n").body[0]
    assert accepts(starred.params, cst.parse_expression("x.m(1, 2, k=3, z=4)"), bound=True)
    assert not accepts(starred.params, cst.parse_expression("x.m(1, 2)"), bound=True)


def test_a_view_taken_on_either_of_two_paths_meets_each():
    from streamlint.model.domain.paths import Index
    a, b = Index.view("f#1"), Index.view("f#2")
    joined = Index.view("f#1|f#2")
    assert joined.may_alias(a) and a.may_alias(joined) and joined.may_alias(b)
    assert not a.may_alias(b)


@functools.cache
def _fixture_trees() -> tuple[tuple[Path, bytes, cst.Module | None], ...]:
    """(path, bytes, libcst tree or None where it does not parse) of every fixture: parsed
    once for the two tests below, which read the trees and change none."""
    out = []
    for file in sorted((Path(__file__).resolve().parents[2] / "fixtures").rglob("*.py")):
        data = file.read_bytes()
        try:
            tree = cst.parse_module(data.decode("utf-8"))
        except (UnicodeDecodeError, cst.ParserSyntaxError):
            tree = None
        out.append((file, data, tree))
    return tuple(out)


@pytest.fixture(autouse=True, scope="module")
def _forget_fixture_trees():
    yield
    _fixture_trees.cache_clear()  # the trees of every fixture are large: free them for the next modules


@pytest.mark.slow  # (parses every fixture)
def test_a_module_that_registers_a_hook_spells_the_registration():
    """The text prefilter before the hook query (Program.hot_entry): a module whose bytes spell
    no registration method registers no hook, as the full query says, on every fixture."""

    from streamlint.model.api.torch_modules import HOOK_REGISTRATIONS
    from streamlint.model.syntax.hooks import registered_hooks
    from streamlint.model.syntax.prefilter import may_call
    fixtures = _fixture_trees()
    assert fixtures
    registering = 0
    for file, data, tree in fixtures:
        if tree is None:
            continue
        hooks = registered_hooks(tree, HOOK_REGISTRATIONS)
        registering += bool(hooks)
        assert may_call(data, HOOK_REGISTRATIONS) or not hooks, file
    assert registering  # (the fixtures do register hooks: the test is not vacuous)


def test_the_checked_modules_bytes_spare_it_the_hook_query(monkeypatch):
    """The checked module gets its bytes (CheckedFile.v3): one that spells no registration
    method is not walked for hooks, as a module read from the project is not."""
    from streamlint.model.interproc import program

    asked: list = []
    real = program.registered_hooks
    monkeypatch.setattr(program, "registered_hooks", lambda tree, *names: asked.append(tree) or real(tree, *names))
    source = "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x.cuda()\n"
    analyze_file(cst.parse_module(source), "net.py", text=source.encode())
    assert asked == []
    hooked = source + "\n\nNet().register_forward_hook(print)\n"
    analyze_file(cst.parse_module(hooked), "net.py", text=hooked.encode())
    assert len(asked) == 1
    # a function stored as a module's forward is installed there: the module is walked for it too
    patched = source + "\n\ndef fast_forward(self, x):\n    return x\n\n\nNet.forward = fast_forward\n"
    analyze_file(cst.parse_module(patched), "net.py", text=patched.encode())
    assert len(asked) == 2


@pytest.mark.slow  # (parses every fixture)
def test_a_module_that_defines_a_method_spells_its_name():
    """The text prefilter before reading a module for the classes that define a method
    (Program._defining): every function a module defines is spelled in its bytes."""

    from streamlint.model.interproc.program import unit_of
    from streamlint.model.syntax.prefilter import may_call
    for file, data, tree in _fixture_trees():
        if tree is None:
            continue
        unit = unit_of("pkg.m", tree)
        for qualname in unit.functions:
            last = qualname.rsplit(".", 1)[-1]
            assert last == "<module>" or may_call(data, frozenset({last})), (file, qualname)


def test_callers_that_are_all_hot_join_to_a_named_hot_entry():
    """`hot` names the entry a function is reached from on every call; joining the callers'
    contexts keeps a name (the first in order) when every caller is hot, and none otherwise."""
    from streamlint.model.interproc.solver import _joined
    from streamlint.model.transfer.frame import CallContext

    both = _joined([CallContext(hot="B.forward"), CallContext(hot="A.forward")])
    assert both is not None and both.hot == "A.forward"
    one = _joined([CallContext(hot="A.forward"), CallContext()])
    assert one is not None and one.hot == ""


HANDS_ON = """
from . import kernels, memory


class Comm:
    def __init__(self):
        self.buf = memory.DeviceMemory()

    def run_async(self, n, stream):
        self.buf.assign(n)
        self._unpack(stream)

    def _unpack(self, stream):
        kernels.fill_on(self.buf, stream)
        kernels.fill(self.buf)  # on the current stream, after work queued on the stream handed in
"""

USER = """
import cupy

from . import comm


class Optimizer:
    def __init__(self):
        self.comm = comm.Comm()
        self.stream = cupy.cuda.Stream(non_blocking=True)

    def update(self, n):
        self.comm.run_async(n, self.stream)
"""


def test_the_stream_handed_in_for_the_work_is_handed_on_to_a_helper(tmp_path):
    # `run_async`'s callers hand `stream` for the work; it hands it on to `_unpack`, whose
    # walk in that context is reported (also when a caller's walk made it before)
    pkg = _package(tmp_path, {"memory": MEMORY, "kernels": KERNELS, "comm": HANDS_ON, "user": USER})
    model = analyze_file(cst.parse_module((pkg / "comm.py").read_text()), str(pkg / "comm.py"))
    found = {(h.function.rsplit(".", 1)[-1], h.kind) for h in model.hazards}
    assert ("_unpack", ConflictKind.WRITE_AFTER_WRITE) in found or ("_unpack", ConflictKind.READ_AFTER_WRITE) in found


def test_one_caller_handing_a_side_stream_makes_it_the_works_though_another_hands_the_null_stream(tmp_path):
    # D-14 for the work stream: on the optimizer's path `stream` is its side stream; the
    # communicator's own `run` hands the null stream (no race on that path, none removed on the other)
    comm = HANDS_ON.replace("from . import kernels, memory", "import cupy\n\nfrom . import kernels, memory").replace(
        "    def run_async(", "    def run(self, n):\n        self.run_async(n, cupy.cuda.Stream.null)\n\n    def run_async(")
    pkg = _package(tmp_path, {"memory": MEMORY, "kernels": KERNELS, "comm": comm, "user": USER})
    model = analyze_file(cst.parse_module((pkg / "comm.py").read_text()), str(pkg / "comm.py"))
    assert "_unpack" in {h.function.rsplit(".", 1)[-1] for h in model.hazards}
    (tmp_path / "alone").mkdir()
    alone = _package(tmp_path / "alone", {"memory": MEMORY, "kernels": KERNELS, "comm": comm})
    assert _kinds(alone / "comm.py") == []


PLAIN = """
from . import base, memory


class Plain(base.Base):
    def __init__(self):
        super().__init__(True)
        self.buf = memory.DeviceMemory()

    def reduce(self, n):
        self.buf.assign(n)
        self._pack(self.buf)  # the default: no stream for the work
"""


def test_a_caller_that_leaves_the_stream_to_its_default_removes_no_other_callers_stream(tmp_path):
    pkg = _package(tmp_path, {"memory": MEMORY, "kernels": KERNELS, "base": BASE,
                              "derived": DERIVED.format(non_blocking=True), "plain": PLAIN})
    model = analyze_file(cst.parse_module((pkg / "base.py").read_text()), str(pkg / "base.py"))
    assert "_pack" in {h.function.rsplit(".", 1)[-1] for h in model.hazards}


def test_a_helper_of_this_module_ignoring_the_stream_it_is_handed_races_at_the_callers_next_call():
    # `_unpack(…, stream)` reads the held buffer on the current stream (through another module's
    # helper) though handed `stream`; the next call overwrites it on `stream`: the helper is of
    # this module, so the race is reported at that call too, not left to another module
    path = Path(__file__).parents[2] / "fixtures" / "crossmodule" / "packed_allreduce_pkg" / "mixed_precision.py"
    model = analyze_file(cst.parse_module(path.read_text()), str(path))
    found = {(h.function.rsplit(".", 1)[-1], h.kind) for h in model.hazards}
    assert ("allreduce_async", ConflictKind.WRITE_AFTER_READ) in found
