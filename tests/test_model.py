"""The stream model's record, checked directly: names, API facts, flow, helpers."""

from __future__ import annotations

import textwrap

import pytest

from streamlint.checker import analyze
from streamlint.model.ops import OpKind
from streamlint.model.values import Buffer, Mem, Stream, StreamKind


def record(source: str, name: str = "<module>"):
    analysis = analyze(textwrap.dedent(source))
    for rec in analysis.functions:
        if rec.name == name:
            return rec
    raise AssertionError(f"no record {name!r}: {[r.name for r in analysis.functions]}")


def ops(source: str, name: str = "<module>", kind: OpKind | None = None):
    return [op for op in record(source, name).ops if kind is None or op.kind is kind]


@pytest.mark.parametrize(
    "imports, create, framework, blocking",
    [
        ("import cupy as cp", "cp.cuda.Stream()", "cupy", True),
        ("import cupy as xp", "xp.cuda.Stream(non_blocking=True)", "cupy", False),
        ("from cupy.cuda import Stream", "Stream()", "cupy", True),
        ("from cupy.cuda import Stream", "Stream(non_blocking=flag)", "cupy", None),
        ("from numba import cuda", "cuda.stream()", "numba", True),
        ("from numba import cuda as nc", "nc.stream()", "numba", True),
        ("import numba.cuda", "numba.cuda.stream()", "numba", True),
        ("import torch", "torch.cuda.Stream()", "torch", False),
        ("import torch.cuda as tc", "tc.Stream(priority=-1)", "torch", False),
        ("from torch.cuda import Stream, stream", "Stream()", "torch", False),
        ("from cuda.bindings import runtime as cudart", "cudart.cudaStreamCreate()[1]", "cuda-python", True),
        ("from cuda import cudart", "cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)[1]", "cuda-python", False),
        ("from cuda.bindings import driver", "driver.cuStreamCreate(0)[1]", "cuda-python", True),
    ],
)
def test_import_forms_and_blocking_flags(imports, create, framework, blocking):
    created = ops(f"{imports}\ns = {create}\n", kind=OpKind.STREAM_CREATE)
    assert len(created) == 1
    stream = created[0].result
    assert isinstance(stream, Stream)
    assert stream.framework == framework
    assert stream.blocking is blocking
    assert stream.kind is StreamKind.EXPLICIT


def test_current_stream_follows_with_and_use():
    src = """
    import cupy as cp
    s1 = cp.cuda.Stream()
    a = cp.zeros(4)
    with s1:
        b = cp.sin(a)
    c = cp.cos(a)
    s1.use()
    d = cp.tan(a)
    """
    kernels = ops(src, kind=OpKind.KERNEL)
    labels = [op.stream.label for op in kernels]
    assert labels == ["the legacy default stream", "s1", "the legacy default stream", "s1"]


def test_torch_stream_context_and_pinned_copy():
    src = """
    import torch
    s = torch.cuda.Stream()
    x = torch.empty(8, pin_memory=True)
    with torch.cuda.stream(s):
        y = x.to("cuda", non_blocking=True)
    z = torch.rand(8).cuda()
    """
    copies = ops(src, kind=OpKind.COPY_H2D)
    assert [op.stream.label for op in copies] == ["s", "the legacy default stream"]
    assert copies[0].non_blocking is True and copies[0].host_blocking is False
    assert copies[0].host_buffer.mem is Mem.PINNED
    assert copies[1].non_blocking is False and copies[1].host_blocking is True
    assert copies[1].host_buffer.mem is Mem.PAGEABLE


def test_device_idiom_counts_as_cuda_and_unknown_stays_unknown():
    src = """
    import torch
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    a = torch.rand(4).to(device)
    def f(t, dev):
        return t.to(dev, non_blocking=True)
    """
    assert len(ops(src, kind=OpKind.COPY_H2D)) == 1
    assert ops(src, name="f") == []


def test_numba_launch_streams_and_bound_arrays():
    src = """
    from numba import cuda
    import numpy as np

    @cuda.jit
    def kern(a):
        pass

    s = cuda.stream()
    h = np.zeros(16)
    d = cuda.to_device(h, stream=s)
    kern[1, 16](d)
    kern[1, 16, s](d)
    back = d.copy_to_host()
    """
    launches = ops(src, kind=OpKind.KERNEL)
    assert [op.stream.kind for op in launches] == [StreamKind.LEGACY, StreamKind.EXPLICIT]
    (h2d,) = ops(src, kind=OpKind.COPY_H2D)
    assert h2d.stream.label == "s" and h2d.host_blocking is False
    (d2h,) = ops(src, kind=OpKind.COPY_D2H)
    # d is bound to s, so the bare copy_to_host is asynchronous on s.
    assert d2h.stream.label == "s" and d2h.host_blocking is False


def test_cuda_python_copy_direction_and_pinned_pointer():
    src = """
    from cuda.bindings import runtime as cudart
    import numpy as np
    err, s = cudart.cudaStreamCreate()
    err, pinned = cudart.cudaMallocHost(1024)
    host = np.zeros(256, dtype=np.float32)
    cudart.cudaMemcpyAsync(0, pinned, 1024, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice, s)
    cudart.cudaMemcpyAsync(host.ctypes.data, 0, 1024, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost, s)
    cudart.cudaMemcpy(0, host.ctypes.data, 1024, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice)
    """
    h2d = ops(src, kind=OpKind.COPY_H2D)
    d2h = ops(src, kind=OpKind.COPY_D2H)
    assert h2d[0].host_buffer.mem is Mem.PINNED and h2d[0].stream.label == "s"
    assert d2h[0].host_buffer.mem is Mem.PAGEABLE
    assert h2d[1].stream.kind is StreamKind.LEGACY and h2d[1].sync_api


def test_self_attributes_from_init_are_known_in_methods():
    src = """
    import torch
    class Prefetcher:
        def __init__(self):
            self.stream = torch.cuda.Stream()
            self.buf = torch.empty(64, pin_memory=True)
        def step(self):
            with torch.cuda.stream(self.stream):
                return self.buf.cuda(non_blocking=True)
    """
    (copy,) = ops(src, name="Prefetcher.step", kind=OpKind.COPY_H2D)
    assert copy.stream.label == "self.stream"
    assert copy.host_buffer.mem is Mem.PINNED


def test_helper_default_stream_work_is_seen_at_the_call_site():
    src = """
    import cupy as cp
    def prepare(x):
        return cp.sqrt(x)
    s1 = cp.cuda.Stream()
    a = cp.ones(4)
    prepare(a)
    """
    (via,) = [op for op in ops(src, kind=OpKind.KERNEL) if op.helper is not None]
    assert via.helper.name == "prepare"
    assert via.stream.kind is StreamKind.LEGACY  # the caller's current stream


def test_loops_comprehensions_and_forward():
    src = """
    import torch
    import torch.nn as nn
    streams = [torch.cuda.Stream() for _ in range(4)]
    for i in range(3):
        e = torch.cuda.Event()
    class M(nn.Module):
        def forward(self, x):
            return x
    """
    creations = ops(src)
    assert creations[0].in_comprehension and not creations[0].hot
    assert creations[1].hot and creations[1].loops
    assert record(src, "M.forward").is_forward


def test_dataloader_batches_carry_pinnedness():
    src = """
    import torch
    from torch.utils.data import DataLoader
    loader = DataLoader(ds, batch_size=4, pin_memory=True)
    for (x, lengths), y in loader:
        x.cuda(non_blocking=True)
    other = DataLoader(ds, pin_memory=some_flag)
    for z in other:
        z.cuda(non_blocking=True)
    """
    copies = ops(src, kind=OpKind.COPY_H2D)
    assert len(copies) == 1
    buffer = copies[0].host_buffer
    assert isinstance(buffer, Buffer) and buffer.mem is Mem.PINNED and buffer.loader_site


def test_other_modules_of_the_project_are_read_for_summaries(tmp_path):
    from streamlint.checker import check_source
    from streamlint.model import project
    from streamlint.rules import all_rules

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(
        "import torch\n\ndef make_host(n):\n    return torch.zeros(n)\n\n"
        "def make_pinned(n):\n    return torch.zeros(n, pin_memory=True)\n"
    )
    main = pkg / "main.py"
    main.write_text(
        "import torch\nfrom .helpers import make_host, make_pinned\nfrom pkg.helpers import make_host as mh\n\n"
        "def up(n):\n    a = make_host(n).to('cuda', non_blocking=True)\n"
        "    b = make_pinned(n).to('cuda', non_blocking=True)\n"
        "    c = mh(n).to('cuda', non_blocking=True)\n    return a, b, c\n"
    )
    assert project.module_file(str(main), ".helpers") == pkg / "helpers.py"
    assert project.module_file(str(main), "pkg.helpers") == pkg / "helpers.py"
    assert project.module_file(str(main), "os.path") is None  # the standard library is never read
    found = [(d.row, d.code) for d in check_source(main.read_text(), str(main), all_rules())]
    assert found == [(6, "SL301"), (8, "SL301")]  # make_pinned's result is pinned: no finding
    # Without a path (stdin, no project) the imported helpers stay unknown.
    assert check_source(main.read_text(), "-", all_rules()) == []


@pytest.mark.parametrize("fixture", ["SL401/positive_interprocedural.py", "seeds/seed002_ping_pong.py", "SL404/negative_apex_data_prefetcher.py"])
def test_statement_local_positions_match_whole_module_positions(fixture):
    """Positions come from generating only the top-level statement that holds a node;
    they must equal libcst's positions computed over the whole module."""
    from pathlib import Path

    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    path = Path(__file__).resolve().parent.parent / "fixtures" / fixture
    analysis = analyze(path.read_text(), str(path))
    nodes = [op.node for rec in analysis.functions for op in rec.ops]
    assert nodes
    local = {id(n): analysis.position(n) for n in nodes}
    whole = MetadataWrapper(analysis.module, unsafe_skip_copy=True).resolve(PositionProvider)
    for n in nodes:
        assert local[id(n)] == whole[n], analysis.code(n)


_CLASS_METHODS = '''import torch


@some.decorator(
    1)
class Pipeline(Base):
    """Docs.
    More."""

    def __init__(self):
        self.side = torch.cuda.Stream()

    @torch.no_grad()
    def same(self, x):
        return x.to("cuda", non_blocking=True)

    def prefetch(self, host):
        def inner(h):
            with torch.cuda.stream(self.side):
                return h.to("cuda", non_blocking=True)
        \'\'\'a string
        with odd indentation\'\'\'
        return inner(host) + torch.ones(3, device="cuda")


class Other:
    @torch.no_grad()
    def same(self, x):
        return x.to("cuda", non_blocking=True)
'''


def test_methods_of_top_level_classes_are_placed_alone_and_right(tmp_path):
    """A method of a top-level class is generated alone (with its class's header); a
    method whose text is not unique falls back to its class: positions as libcst's."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    path = tmp_path / "pipeline.py"
    path.write_text(_CLASS_METHODS)
    analysis = analyze(path.read_text(), str(path))
    assert analysis.member_of  # the methods are placement units
    nodes = [op.node for rec in analysis.functions for op in rec.ops]
    assert len(nodes) >= 4
    local = {id(n): analysis.position(n) for n in nodes}
    whole = MetadataWrapper(analysis.module, unsafe_skip_copy=True).resolve(PositionProvider)
    for n in nodes:
        assert local[id(n)] == whole[n], analysis.code(n)


def test_a_device_that_is_cuda_on_one_path_is_the_codes_gpu_path():
    from streamlint.model.values import UNKNOWN, Const, Device, join

    assert join(Const("cuda"), Const("cpu")) == Const("cuda")
    assert join(Const("cpu"), Device(cuda=True)) == Device(cuda=True)
    assert join(Device(cuda=True), UNKNOWN) == Device(cuda=True)  # `device = param` on the other path
    assert join(Const("cpu"), UNKNOWN) is UNKNOWN
    assert join(Const("cuda:0"), Const(3)) is UNKNOWN  # not a device on the other path


def test_absolute_imports_resolve_from_the_project_root_and_through_reexports(tmp_path):
    from streamlint.checker import check_source
    from streamlint.model import project
    from streamlint.rules import all_rules

    project.clear()
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = p\n")
    lib = tmp_path / "lib" / "utils"
    lib.mkdir(parents=True)
    (tmp_path / "lib" / "__init__.py").write_text("")
    (lib / "__init__.py").write_text("from .device import pick_device\n")  # no framework word
    (lib / "device.py").write_text(
        "import torch\n\ndef pick_device(name=None):\n    if name is None:\n"
        "        name = 'cuda' if torch.cuda.is_available() else 'cpu'\n    return torch.device(name)\n"
    )
    scripts = tmp_path / "scripts"
    scripts.mkdir()  # no package: absolute imports resolve from the marked root
    main = scripts / "run.py"
    main.write_text(
        "import torch\nfrom lib import utils\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n\n"
        "def run(model, batches, cfg):\n    device = utils.pick_device(cfg.device)\n"
        "    for x in batches:\n        loss = model(x.to(device))\n        print(loss.item())\n"
    )
    assert project.module_file(str(main), "lib.utils") == lib / "__init__.py"
    found = [(d.row, d.code) for d in check_source(main.read_text(), str(main), all_rules())]
    assert found == [(10, "SL502")]
    (tmp_path / "setup.cfg").unlink()  # no marker: nothing above `scripts/` is the project
    project.clear()
    assert project.module_file(str(main), "lib.utils") is None
    assert check_source(main.read_text(), str(main), all_rules()) == []


def test_python_values_built_on_the_device_are_an_upload_and_parameters_keep_their_memory():
    src = """
    import torch
    from torch import nn
    w = nn.Parameter(torch.zeros(4, device="cuda"))
    idx = torch.tensor([0, 1], device=w.device)
    one = torch.tensor(1.0, device="cuda")
    host = torch.tensor([0, 1])
    """
    uploads = ops(src, kind=OpKind.COPY_H2D)
    assert [op.api for op in uploads] == ["torch.tensor"]  # the list: built on the host, copied
    assert uploads[0].host_blocking is True and uploads[0].host_buffer.literal


def test_a_helper_forward_calls_each_time_is_hot_there():
    src = """
    import torch
    from torch import nn

    def helper(x):
        return torch.tensor([0, 1], device=x.device)

    def rarely(x):
        return torch.tensor([0, 1], device=x.device)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.zeros(4, device="cuda")

        def forward(self, n):
            x = self.w * n
            for _ in range(n):
                rarely(x)
            return helper(x)
    """
    assert record(src, "helper").hot_via == "M.forward"
    assert record(src, "rarely").hot_via == ""  # called in a loop: the loop's replay shows it
    assert [op.in_forward for op in ops(src, "helper", OpKind.COPY_H2D)] == [True]


@pytest.mark.parametrize("code, once", [
    ("if self.buf is None:\n    self.buf = make()", True),
    ("if key not in totals:\n    totals[key] = make()", True),
    ("if 'step' in group:\n    group['step'] += 1\nelse:\n    group['step'] = make()", True),
    ("if not hasattr(self, 'idx'):\n    self.idx = make()", True),
    ("if self.bias is not None:\n    x = x + self.bias", False),  # a switch, not an initialisation
    ("if x > 0:\n    x = x - 1", False),  # data-dependent
    ("if val is not None:\n    val = val.view(2, -1)", False),  # uses what is there, every time
    ("if self.buf is not None:\n    pass\nelse:\n    self.buf = make()", True),
])
def test_branches_that_set_what_they_test_run_once(code, once):
    import libcst as cst

    from streamlint.model.flow import initialises

    node = cst.parse_module(code + "\n").body[0]
    assert initialises(node) is once


def test_dicts_of_tensors_keep_the_kind_of_their_values():
    from streamlint.model.values import UNKNOWN, Buffer, DictOf, Mem, join

    cuda = Buffer("torch", Mem.DEVICE)
    assert DictOf(empty=True).stored(cuda) == DictOf(cuda)
    assert DictOf(cuda).stored(Buffer("torch", Mem.PAGEABLE)) is UNKNOWN  # mixed: unknown
    assert join(DictOf(empty=True), DictOf(cuda)) == DictOf(cuda)  # filled in a loop
    src = """
    import torch

    def fill(keys):
        flat = torch.empty(8, device="cuda")
        out = {}
        for key in keys:
            out[key] = flat.narrow(0, 0, 2)
        return out

    def use(keys, host):
        batch = fill(keys)
        a = batch["x"]
        b = batch.get("y")
        c = {k: v.cpu() for k, v in batch.items()}["x"]
        d = {"x": a, **batch}["x"]
        mixed = {"x": a}
        mixed.update({"y": host})
        e = mixed["x"]
        return a, b, c, d, e
    """
    analysis = analyze(textwrap.dedent(src))
    use = next(r for r in analysis.functions if r.name == "use")
    copies = [op for op in use.ops if op.kind is OpKind.COPY_D2H]
    assert len(copies) == 1 and copies[0].api == "v.cpu"  # `.items()` gives CUDA values


def test_an_attribute_set_to_an_empty_dict_is_filled_elsewhere():
    src = """
    import torch

    class Cache:
        def __init__(self):
            self.side = torch.cuda.Stream()
            self.saved = {}

        def restore(self, tag, weight):
            with torch.cuda.stream(self.side):
                state = self.saved.pop(tag)
                out = state.to("cuda", non_blocking=True)
            return out @ weight
    """
    analysis = analyze(textwrap.dedent(src))
    restore = next(r for r in analysis.functions if r.name.endswith("restore"))
    # Read from another method, the dict holds what other methods put there (unknown), as
    # before dicts were tracked: not "empty", which would make `state` nothing at all.
    # (`pop` itself is bookkeeping, no GPU work even under a side stream)
    assert [op.api for op in restore.ops][:1] == ["state.to"]


def test_a_presence_test_of_the_loop_element_is_no_rare_branch():
    src = """
    import torch

    def slice_batch(batch, cp_size, cp_rank, writer):
        for key, val in batch.items():
            if val is not None:
                index = torch.tensor([cp_rank, 2 * cp_size - cp_rank - 1], device=val.device)
                batch[key] = val.index_select(1, index)
            if writer is not None:
                writer.add(torch.tensor([cp_rank], device=val.device))
        return batch

    def get_batch(data):
        batch = {"tokens": data["tokens"].cuda(non_blocking=True)}
        return slice_batch(batch, 2, 0, None)
    """
    uploads = ops(src, "slice_batch", OpKind.COPY_H2D)
    assert [op.conditional for op in uploads] == [False, True]  # the element's presence; a switch


def test_record_stream_on_an_unknown_receiver_is_an_allocator_fact_not_a_kernel():
    source = textwrap.dedent("""
        import torch

        def free_all(params, side):
            current = torch.cuda.current_stream()
            with torch.cuda.stream(side):
                for p in params:
                    p.full.record_stream(current)
    """)
    kinds = [op.kind for op in ops(source, "free_all")]
    assert kinds == [OpKind.RECORD_STREAM]
