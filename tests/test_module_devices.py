"""Where a project's own `nn.Module` lives (docs/model-cases.md 10.87-10.88): a project module class moved with
`.to(device)` or `.cuda()` keeps its parameters there, `parameters()` lists tensors there, calling it computes
there; a `@property` read runs its method (`model.device`); and the files without CUDA words that pass such
values to or from a module with them are checked (discovery, 10.89)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import write

from streamlint.cli import main
from streamlint.config import Settings, SettingsResolver
from streamlint.discovery import discover
from streamlint.engine.lint import lint_text

MODEL = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)

        @property
        def device(self):
            return next(self.parameters()).device

        def forward(self, x):
            return self.lin(x)


    def decode(x, steps):
        model = Net().{move}
        x = x.to(model.device)
        for _ in range(steps):
            x = model(x)
            print(x.sum().item())
"""


def _rows(source: str) -> list[tuple[int, str]]:
    text = textwrap.dedent(source)
    return [(d.row, d.code) for d in lint_text(text, "prog.py", Settings.default())]


@pytest.mark.parametrize("move", ['to("cuda")', "cuda()", 'to(torch.device("cuda", 0))',
                                  'to("cuda" if torch.cuda.is_available() else "cpu")'])
def test_a_project_module_moved_to_cuda_computes_there(move):
    assert _rows(MODEL.format(move=move)) == [(24, "SL502")]


@pytest.mark.parametrize("move", ['to("cpu")', "float()"])
def test_a_project_module_on_the_host_or_not_told_stays_silent(move):
    assert _rows(MODEL.format(move=move)) == []


def test_a_property_read_runs_its_method():
    # `self.scale.device` through the property: a tensor made on CUDA in `__init__`
    kept = "self.lin = nn.Linear(8, 8)\n            self.scale = torch.ones(8, device=\"cuda\")"
    source = MODEL.replace("return next(self.parameters()).device", "return self.scale.device").replace(
        "self.lin = nn.Linear(8, 8)", kept)
    assert _rows(source.replace("Net().{move}", "Net()")) == [(25, "SL502")]


PACKAGE = {
    "__init__.py": "",
    "model.py": "import torch\n\n\ndef load(net):\n    return net.to('cuda' if torch.cuda.is_available() else 'cpu')\n",
    "decoding.py": "from .model import load\n\n\ndef decode(net, x, steps):\n    model = load(net)\n"
                   "    for _ in range(steps):\n        x = model(x)\n        print(x.sum().item())\n"
                   "    return x.device\n",
    "helpers.py": "def total(values, device=None):\n    return sum(values)\n",
    "names.py": "from .model import load\n\nNAMES = [load.__name__]\n",
    "uses_package.py": "import pkg\n\n\ndef run(x):\n    return pkg.helpers.total(x)\n",
}


def test_discovery_marks_the_files_that_import_a_module_with_cuda_words_or_that_one_imports(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, text in PACKAGE.items():
        write(tmp_path / "pkg" / name, text)
    write(tmp_path / "pkg" / "model.py", PACKAGE["model.py"] + "from .helpers import total\n")
    marked = {Path(p).name for p, s in discover(["pkg"], SettingsResolver()).files if s.imports_gpu_module}
    # decoding imports model (cuda words); model imports helpers; a package's `__init__` carries no evidence; a
    # file that never spells `device` is not worth the analysis (names.py)
    assert marked == {"decoding.py", "helpers.py"}


def test_a_decoder_in_a_file_without_cuda_words_is_checked(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / ".git" / "HEAD", "")
    for name, text in PACKAGE.items():
        write(tmp_path / "pkg" / name, text)
    assert main(["check", "--no-cache", "--format", "json", "pkg"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert [(Path(d["filename"]).name, d["location"]["row"], d["code"]) for d in found] == [("decoding.py", 8, "SL502")]


def _parsed_imports(module) -> set[tuple[int, str]]:
    import libcst as cst

    found: set[tuple[int, str]] = set()

    def dotted(node) -> str:
        return cst.Module([]).code_for_node(node) if node is not None else ""

    class Imports(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            found.update((0, dotted(a.name)) for a in node.names)

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            level, base = len(node.relative), dotted(node.module)
            if base:
                found.add((level, base))
            if not isinstance(node.names, cst.ImportStar):
                found.update((level, f"{base}.{dotted(a.name)}" if base else dotted(a.name)) for a in node.names)

    module.visit(Imports())
    return found


def test_the_import_text_finds_every_import_the_parse_finds():
    import libcst as cst

    from streamlint.model.syntax.prefilter import imported_modules

    root = Path(__file__).resolve().parent.parent
    checked = 0
    for path in sorted((root / "fixtures").rglob("*.py")) + sorted((root / "src").rglob("*.py")):
        data = path.read_bytes()
        try:
            module = cst.parse_module(data)
        except cst.ParserSyntaxError:
            continue
        assert _parsed_imports(module) <= imported_modules(data), path
        checked += 1
    assert checked > 500


HANDED_BY_PROPERTY = """
    import torch


    class Reducer:
        def __init__(self):
            self.side = torch.cuda.Stream()
            self._norm = torch.zeros([], device="cuda")

        def reduce(self, grads):
            self.side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.side):
                self._norm = grads.norm()

        @property
        def norm(self):
            return self._norm

        def clipped(self, limit):
            return min(1.0, limit / (self.norm.item() + 1e-6))
"""


def test_a_property_read_inside_its_class_leaves_it_the_class_interface():
    # the property hands out a side-stream result to its users out of sight; the class's own read of it does not
    # stand in for them (row 10.88)
    assert _rows(HANDED_BY_PROPERTY) == [(17, "SL401")]
