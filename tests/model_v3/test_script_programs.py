"""Programs made of scripts: the folders a script puts on `sys.path`, the modules a folder of scripts connects by
plain imports, a script's main guard, latches, omitted `None` defaults, teardown `del`, and callers several calls
away (docs/model-cases.md rows 6.59-6.63, 7.88-7.89)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from streamlint.model import resolve
from streamlint.model.file_model import analyze_file
from streamlint.model.readings.hot_paths import Work, calling_loops, own_operations
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.model.syntax.default_device import sets_cuda_default
from streamlint.model.syntax.import_roots import added_import_roots
from streamlint.model.syntax.latches import latches
from streamlint.model.syntax.names import kept_under
from streamlint.model.syntax.prefilter import may_add_import_roots
from streamlint.model.syntax.tests import latch_sides, rare_test, rare_unless_settled, script_entry


pytestmark = pytest.mark.usefixtures("fresh_project_state")


def _parse(text: str) -> cst.Module:
    return cst.parse_module(textwrap.dedent(text))


def _test(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


@pytest.mark.parametrize("line, steps", [
    ('sys.path.append("droid_slam")', ("droid_slam",)),
    ("sys.path.insert(0, 'lib/core')", ("lib", "core")),
    ("sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))", ("..",)),
    ("sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))", ("..", "lib")),
    ("sys.path.append(str(Path(__file__).resolve().parent.parent / 'lib'))", ("..", "lib")),
    ("sys.path.append(str(Path(__file__).parents[1]))", ("..",)),
    ("sys.path.extend(['a', 'b'])", ("a",)),
])
def test_a_script_adds_the_folder_its_path_expression_names(line, steps):
    module = _parse(f"import os, sys\nfrom pathlib import Path\n{line}\n")
    assert steps in added_import_roots(module)


@pytest.mark.parametrize("line", [
    "sys.path.append(os.environ['ROOT'])",  # (decided where it runs)
    "sys.path.append(args.root)",
    "sys.path.append('/opt/lib')",  # (absolute: outside the project)
    "paths.append('lib')",
])
def test_a_path_the_text_does_not_decide_adds_nothing(line):
    assert added_import_roots(_parse(f"import os, sys\n{line}\n")) == ()


def test_the_import_roots_prefilter_says_no_only_where_the_parse_finds_none():
    for text in ('import sys\nsys.path.append("x")\n', "import sys\nprint(sys.argv)\n", "x = 1\n"):
        if not may_add_import_roots(text.encode()):
            assert added_import_roots(_parse(text)) == ()


def test_a_script_import_is_found_in_the_folder_it_put_on_the_import_path(tmp_path):
    (tmp_path / "setup.cfg").write_text("")
    (tmp_path / "slam").mkdir()
    (tmp_path / "slam" / "frontend.py").write_text("class Frontend: pass\n")
    script = tmp_path / "run.py"
    script.write_text("import sys\nsys.path.append('slam')\nfrom frontend import Frontend\n")
    assert resolve.module_file(str(script), "frontend") == tmp_path / "slam" / "frontend.py"
    other = tmp_path / "other.py"
    other.write_text("from frontend import Frontend\n")
    assert resolve.module_file(str(other), "frontend") is None


def test_a_namespace_folder_is_imported_by_its_own_name_from_inside(tmp_path):
    # (`src/` without `__init__.py`, its subfolders packages, the program run from above it: `from src.utils.x import`)
    for package in ("entities", "utils"):
        (tmp_path / "src" / package).mkdir(parents=True)
        (tmp_path / "src" / package / "__init__.py").write_text("")
    (tmp_path / "src" / "utils" / "losses.py").write_text("def l1(a, b): return (a - b).abs().mean()\n")
    mapper = tmp_path / "src" / "entities" / "mapper.py"
    mapper.write_text("from src.utils.losses import l1\n")
    assert resolve.module_file(str(mapper), "src.utils.losses") == tmp_path / "src" / "utils" / "losses.py"
    assert resolve.module_file(str(mapper), "src.utils.missing") is None


def test_a_folder_of_scripts_is_one_program_by_its_plain_imports(tmp_path):
    (tmp_path / "setup.cfg").write_text("")
    scripts = tmp_path / "slam"
    scripts.mkdir()
    (scripts / "graph.py").write_text("class Graph: pass\n")
    (scripts / "video.py").write_text("class Video: pass\n")
    (scripts / "frontend.py").write_text("from graph import Graph\n")
    (scripts / "app.py").write_text("from frontend import Frontend\nfrom video import Video\n")
    (scripts / "unrelated.py").write_text("import torch\n")
    (tmp_path / "demo.py").write_text("import sys\nsys.path.append('slam')\nfrom app import App\n")
    found = {Path(f).name for f in resolve.enclosing_package_files(str(scripts / "graph.py"), 256, 64)}
    # its importers, theirs, and what they import beside it (the video object handed to the graph)
    assert found == {"graph.py", "frontend.py", "app.py", "video.py", "demo.py"}


def test_each_script_of_a_folder_gets_its_own_program_whatever_was_checked_before(tmp_path):
    # (a pool worker keeps per-run answers from file to file: one script's program must not stand for its neighbour's)
    (tmp_path / "setup.cfg").write_text("")
    scripts = tmp_path / "tools"
    scripts.mkdir()
    (scripts / "train.py").write_text("import torch\n")
    (scripts / "evaluate.py").write_text("import torch\n")
    resolve.forget()
    first = resolve.enclosing_package_files(str(scripts / "train.py"), 256, 64)
    second = resolve.enclosing_package_files(str(scripts / "evaluate.py"), 256, 64)
    assert [Path(f).name for f in first] == ["train.py"]
    assert [Path(f).name for f in second] == ["evaluate.py"]


def test_the_main_guard_is_no_now_and_then_test():
    assert script_entry(_test('__name__ == "__main__"')) and script_entry(_test("'__main__' == __name__"))
    assert not rare_test(_test('__name__ == "__main__"'))
    assert not script_entry(_test('mode == "__main__"')) and rare_test(_test('mode == "train"'))


LATCHED = """
class Frontend:
    def __init__(self):
        self.is_initialized = False
        self.debug = False
        self.ready = False

    def _initialize(self):
        self.is_initialized = True

    def enable_debug(self):
        self.debug = True

    def __call__(self):
        if not self.is_initialized and self.count == 8:
            self._initialize()
        if not self.ready:
            self.ready = True
        if self.debug:
            print("frame")

    def reset(self):
        self.ready = False
"""


def test_a_latch_is_set_on_the_side_of_its_own_test_that_found_it_unset():
    # `debug` is turned on by a caller's method (a flag), `ready` is reset (a switch): neither is a latch
    assert latches(_parse(LATCHED)) == {"Frontend": frozenset({"is_initialized"})}


def test_a_latch_test_runs_its_unset_side_once_and_leaves_the_rest_to_its_other_parts():
    latched = frozenset({"self.is_initialized"})
    assert latch_sides(_test("not self.is_initialized and n == warmup"), latched) == (True, False)
    assert latch_sides(_test("self.is_initialized"), latched) == (False, True)
    assert latch_sides(_test("self.is_initialized and t1 < n"), latched) == (False, False)
    assert not rare_unless_settled(_test("self.is_initialized and t1 < n"), latched)
    assert rare_unless_settled(_test("self.debug and t1 < n"), latched)


def test_instances_are_kept_under_the_attributes_and_names_they_are_assigned_to():
    module = _parse("""
    class Tracker:
        def __init__(self):
            self.frontend = frontend.Frontend(8)
    f = Frontend()
    g = Other()
    """)
    assert kept_under(module, "Frontend") == frozenset({"frontend", "f"})


TRACKER = {
    "graph.py": """
        import torch


        class Graph:
            def __init__(self):
                self.ii = torch.zeros(4, dtype=torch.long, device="cuda")

            def update(self, t0=None):
                if t0 is None:
                    t0 = self.ii.min().item()
                self.ii = self.ii * (self.ii >= t0)
    """,
    "frontend.py": """
        from graph import Graph


        class Frontend:
            def __init__(self):
                self.graph = Graph()
                self.is_initialized = False

            def _initialize(self):
                self.graph.update(t0=0)
                self.is_initialized = True

            def __call__(self):
                if not self.is_initialized:
                    self._initialize()
                else:
                    self.graph.update()
    """,
    "tracker.py": """
        from frontend import Frontend


        class Tracker:
            def __init__(self):
                self.frontend = Frontend()

            def track(self):
                self.frontend()

            def terminate(self):
                del self.frontend
    """,
}

SCRIPT = """
import sys
sys.path.append("slam")
from tracker import Tracker

if __name__ == "__main__":
    tracker = Tracker()
    for frame in range(1000):
        tracker.track()
    tracker.terminate()
"""


def _tracker_project(root: Path, script: str = SCRIPT) -> Path:
    (root / "setup.cfg").write_text("")
    (root / "slam").mkdir()
    for name, text in TRACKER.items():
        (root / "slam" / name).write_text(textwrap.dedent(text))
    (root / "run.py").write_text(textwrap.dedent(script))
    return root / "slam" / "graph.py"


def _read_in_loops(path: Path) -> list:
    model = analyze_file(cst.parse_module(path.read_text()), str(path))
    ancestry = Ancestry(model.solver.program.main.tree)
    return [loop for own in own_operations(model) if own.operation.api == "torch.Tensor.item"
            for loop in calling_loops(model, own, ancestry, Work.QUEUED)]


def test_a_read_three_calls_below_a_scripts_frame_loop_is_placed_at_that_loop(tmp_path):
    loops = _read_in_loops(_tracker_project(tmp_path))
    assert [(loop.module, loop.top_level) for loop in loops] == [("run", True)]


def test_a_loop_that_runs_the_tracker_a_few_times_is_no_frame_loop(tmp_path):
    few = SCRIPT.replace("range(1000)", "range(3)")
    assert _read_in_loops(_tracker_project(tmp_path, few)) == []


@pytest.mark.parametrize("line, cuda", [
    ("torch.set_default_tensor_type('torch.cuda.FloatTensor')", True),
    ("torch.set_default_tensor_type(torch.cuda.FloatTensor)", True),
    ("torch.set_default_device('cuda:0')", True),
    ("torch.set_default_device(torch.device('cuda'))", True),
    ("torch.set_default_tensor_type('torch.DoubleTensor')", False),
    ("torch.set_default_device('cpu')", False),
])
def test_a_program_makes_cuda_the_default_device_only_with_a_cuda_type_or_device(line, cuda):
    assert sets_cuda_default(_parse(f"import torch\n{line}\n")) is cuda


def test_a_helper_without_cuda_words_is_checked_in_a_run_that_makes_cuda_the_default(tmp_path):
    from streamlint.discovery import discover
    (tmp_path / "setup.cfg").write_text("")
    (tmp_path / "helpers.py").write_text("import torch\n\n\ndef far():\n    return torch.Tensor([1e10])\n")
    (tmp_path / "run.py").write_text("import torch\nfrom helpers import far\n\nif __name__ == '__main__':\n"
                                     "    torch.set_default_tensor_type('torch.cuda.FloatTensor')\n")
    marked = {path.name: settings.imports_gpu_module for path, settings in
              discover([tmp_path]).files}
    assert marked["helpers.py"]
    (tmp_path / "run.py").write_text("import torch\nfrom helpers import far\n")
    marked = {path.name: settings.imports_gpu_module for path, settings in
              discover([tmp_path]).files}
    assert not marked["helpers.py"]
