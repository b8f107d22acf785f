"""Row 6.65: what an owner hands the constructors of the objects it builds (its receiver, its attributes) is what
the constructor's parameters hold, where every construction in sight agrees."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from streamlint.model.file_model import analyze_file
from streamlint.model.syntax.constructions import Construction, constructions

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "crossmodule"


pytestmark = pytest.mark.usefixtures("fresh_project_state")


def test_a_call_of_the_class_records_what_the_method_hands_of_its_own_receiver():
    tree = cst.parse_module(textwrap.dedent("""
        class System:
            def __init__(me, cfg):
                me.tracker = slam.Tracker(cfg, me, video=me.video, rate=2)

        def build(cfg, owner):
            return Tracker(cfg, owner)

        Trackers = [Tracker(c, None) for c in range(2)]
    """))
    assert constructions(tree, "Tracker") == (
        Construction("slam.Tracker", "System", (("0", None), ("1", ""), ("video", "video"), ("rate", None)), False),
        Construction("Tracker", "", (("0", None), ("1", None)), False),
        Construction("Tracker", "", (("0", None), ("1", None)), False),
    )
    assert constructions(tree, "Frontend") == ()


def test_a_starred_call_is_marked():
    tree = cst.parse_module("class A:\n    def f(self, *rest):\n        return Tracker(self, *rest)\n")
    assert constructions(tree, "Tracker")[0].starred


def _init_contexts(project: str, tmp_path: Path) -> list[str]:
    root = tmp_path / project
    shutil.copytree(FIXTURES / project, root)
    path = root / "scene" / "renderer.py"
    model = analyze_file(cst.parse_module(path.read_text()), str(path))
    return [str(context.arg("slam")) for context, _ in model.solved.summaries_of("scene.renderer.Renderer.__init__")]


def test_the_owner_handing_itself_is_what_the_constructor_reads(tmp_path):
    told = _init_contexts("owner_handed_project", tmp_path)
    assert any("scene.system.SLAM" in t for t in told)


def test_a_construction_that_hands_something_else_leaves_the_parameter_not_told(tmp_path):
    told = _init_contexts("owner_handed_negative_project", tmp_path)
    assert not any("scene.system.SLAM" in t for t in told)


def test_in_place_writes_of_the_receivers_attributes_are_found_outside_the_constructor():
    from streamlint.model.syntax.in_place import written_in_place

    cls = cst.parse_module(textwrap.dedent("""
        class Tracker:
            def __init__(self):
                self.kept.zero_()
                self.made = torch.zeros(3)

            def step(me, p, x):
                me.pose.copy_(p)
                me.rows[0] = x
                me.total += x
                torch.add(x, x, out=me.out)
                me.read = me.kept.to("cuda")
                me.made._private_helper()
    """)).body[0]
    assert written_in_place(cls) == {"pose", "rows", "total", "out"}


def _analyzed(tmp_path: Path, text: str):
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent(text))
    return analyze_file(cst.parse_module(path.read_text()), str(path))


def test_a_stack_of_a_meshgrid_is_where_its_inputs_are(tmp_path):
    model = _analyzed(tmp_path, """
        import torch

        def grid(h, w):
            a = torch.linspace(0, h - 1, h, device="cuda")
            b = torch.linspace(0, w - 1, w, device="cuda")
            return torch.stack(torch.meshgrid(a, b), -1)
    """)
    returned = [summary.returns for _, summary in model.solved.summaries_of("m.grid")]
    assert returned and all(r is not None and r.on_device for r in returned)


def test_a_settled_local_compared_with_a_constant_is_no_now_and_then_test(tmp_path):
    text = """
        import numpy as np
        import torch

        def train(model, opt, coords, n, cfg):
            coords = coords.cuda()
            n_rand = cfg.n_rand
            for i in range(n):
                if n_rand is not None:
                    sel = np.random.choice(coords.shape[0], size=[n_rand], replace=False)
                    model(coords[sel]).sum().backward()
                    opt.step()
    """
    model = _analyzed(tmp_path, text)
    from streamlint.model.readings.hot_paths import own_operations
    uploads = [own for own in own_operations(model) if own.operation.api == "an index on the host"]
    assert uploads and not any(own.operation.conditional for own in uploads)


def test_a_static_methods_first_parameter_is_no_receiver():
    tree = cst.parse_module(textwrap.dedent("""
        class Factory:
            @staticmethod
            def make(ckpt_list, version):
                return Loader(ckpt_list, version)
    """))
    assert constructions(tree, "Loader")[0].handed == (("0", None), ("1", None))
