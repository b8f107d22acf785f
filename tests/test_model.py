"""The checked file as the checker builds it: the project modules it reads and the positions
it gives the nodes rules point at. (The v2 record's tests went with the v2 model; the v3
model's own tests are under tests/model_v3/.)"""

from __future__ import annotations

import libcst as cst
import pytest

from streamlint.checker import analyze
from streamlint.model import resolve
from streamlint.model.interproc import modules as project_modules


def _forget() -> None:
    project_modules.forget()
    resolve.forget()


def _calls(module: cst.Module) -> list[cst.CSTNode]:
    """The call nodes of a module, in order: what findings point at."""
    found: list[cst.CSTNode] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    module.visit(Calls())
    return found


def test_other_modules_of_the_project_are_read_for_summaries(tmp_path):
    from streamlint.checker import check_source
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
        "def up(n, steps):\n    for _ in range(steps):\n        a = make_host(n).to('cuda', non_blocking=True)\n"
        "        b = make_pinned(n).to('cuda', non_blocking=True)\n"
        "        c = mh(n).to('cuda', non_blocking=True)\n        yield a, b, c\n"
    )
    assert resolve.module_file(str(main), ".helpers") == pkg / "helpers.py"
    assert resolve.module_file(str(main), "pkg.helpers") == pkg / "helpers.py"
    assert resolve.module_file(str(main), "os.path") is None  # the standard library is never read
    found = [(d.row, d.code) for d in check_source(main.read_text(), str(main), all_rules())]
    assert found == [(7, "SL301"), (9, "SL301")]  # make_pinned's result is pinned: no finding
    # Without a path (stdin, no project) the imported helpers stay unknown.
    assert check_source(main.read_text(), "-", all_rules()) == []


@pytest.mark.parametrize("fixture", ["SL401/positive_interprocedural.py", "seeds/seed002_ping_pong.py", "SL404/negative_apex_data_prefetcher.py"])
def test_statement_local_positions_match_whole_module_positions(fixture):
    """Positions come from generating only the top-level statement that holds a node;
    they must equal libcst's positions computed over the whole module."""
    from pathlib import Path

    from libcst.metadata import MetadataWrapper, PositionProvider

    path = Path(__file__).resolve().parent.parent / "fixtures" / fixture
    analysis = analyze(path.read_text(), str(path))
    nodes = _calls(analysis.module)
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
    nodes = _calls(analysis.module)
    assert len(nodes) >= 4
    local = {id(n): analysis.position(n) for n in nodes}
    whole = MetadataWrapper(analysis.module, unsafe_skip_copy=True).resolve(PositionProvider)
    for n in nodes:
        assert local[id(n)] == whole[n], analysis.code(n)


def _absolute_project(tmp_path):
    _forget()
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
    return main, lib


def test_absolute_imports_resolve_from_the_project_root_and_through_reexports(tmp_path):
    from streamlint.checker import check_source
    from streamlint.rules import all_rules

    main, lib = _absolute_project(tmp_path)
    assert resolve.module_file(str(main), "lib.utils") == lib / "__init__.py"
    (tmp_path / "setup.cfg").unlink()  # no marker: nothing above `scripts/` is the project
    _forget()
    assert resolve.module_file(str(main), "lib.utils") is None
    assert check_source(main.read_text(), str(main), all_rules()) == []


def test_a_script_imports_from_the_folders_between_it_and_the_package_top(tmp_path):
    """`examples/ppo/train.py`, run from `examples/`, imports `utils.initializers` from `examples/utils/`: a folder
    between the script and the top of its package, tried after the script's own folder."""
    examples = tmp_path / "examples"
    (examples / "ppo").mkdir(parents=True)
    (examples / "utils").mkdir()
    for folder in (examples, examples / "ppo", examples / "utils"):
        (folder / "__init__.py").write_text("")
    (examples / "utils" / "initializers.py").write_text("def args_initialize(args):\n    return args\n")
    script = examples / "ppo" / "train.py"
    script.write_text("from utils.initializers import args_initialize\n")
    _forget()
    assert resolve.module_file(str(script), "utils.initializers") == examples / "utils" / "initializers.py"
    assert resolve.module_file(str(script), "missing.initializers") is None


def test_a_device_picked_in_a_reexported_helper_makes_the_loop_sync_a_finding(tmp_path):
    from streamlint.checker import check_source
    from streamlint.rules import all_rules

    main, _ = _absolute_project(tmp_path)
    found = [(d.row, d.code) for d in check_source(main.read_text(), str(main), all_rules())]
    assert found == [(10, "SL502")]
