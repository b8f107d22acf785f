"""Jupyter notebooks, built with nbformat: checked cell by cell with the real rules,
reported per cell in every format, and fixed in place without disturbing the JSON."""

from __future__ import annotations

import io
import json

import nbformat
import pytest
from nbformat import v4

from streamlint.cli import main
from streamlint.config import Settings
from streamlint.notebooks import cells, layout
from streamlint.notebooks.fix import SplitError, fix_notebook, split_back
from streamlint.notebooks.lint import lint_notebook
from streamlint.notebooks.magics import to_python

# Cell 1 markdown; SL201 needs cell 2's pinned tensor to judge cell 3's copy; cell 4 is
# shell; cell 5 makes a stream per iteration (SL501), around an IPython shell line.
CELLS = [
    v4.new_markdown_cell("# Upload"),
    v4.new_code_cell("import torch\n%matplotlib inline\nhost = torch.empty(1024, pin_memory=True)"),
    v4.new_code_cell("!nvidia-smi\ngpu = host.to('cuda')\nprint(gpu.sum())"),
    v4.new_code_cell("%%bash\nfor f in *; do echo $f; done"),
    v4.new_code_cell(
        "for i in range(30):\n"
        "    s = torch.cuda.Stream()\n"
        "    !echo step\n"
        "    with torch.cuda.stream(s):\n"
        "        x = torch.ones(4, device='cuda')\n"
    ),
]


def notebook(*cell_list) -> nbformat.NotebookNode:
    nb = v4.new_notebook()
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [nbformat.from_dict(json.loads(json.dumps(c))) for c in (cell_list or CELLS)]
    return nb


@pytest.fixture
def nb_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    nb = notebook()
    nb.cells[2].outputs = [v4.new_output("stream", text="tensor(0.)\n")]
    nb.cells[2].execution_count = 3
    nbformat.write(nb, "nb.ipynb")
    return tmp_path / "nb.ipynb"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---- checking ----


def test_findings_are_reported_per_cell_with_ruffs_numbering(nb_path, capsys):
    code, out, _ = run(capsys, "nb.ipynb", "--output-format", "concise")
    lines = out.splitlines()
    assert code == 1
    # Cells count from 1 among all cells, markdown included (as ruff counts them).
    assert lines[0].startswith("nb.ipynb:cell 3:2:7: SL201 ")  # pinned in cell 2, copied in 3
    assert lines[1].startswith("nb.ipynb:cell 5:2:9: SL501 ")
    assert lines[2] == "Found 2 errors."


def test_directories_include_notebooks_and_excludes_apply(nb_path, capsys):
    code, out, _ = run(capsys, ".")
    assert code == 1 and "nb.ipynb:cell 5:2:9: SL501" in out
    (nb_path.parent / "pyproject.toml").write_text('[tool.streamlint]\nextend-exclude = ["*.ipynb"]\n')
    code, _, err = run(capsys, ".")
    assert code == 0 and "no Python files found" in err


def test_show_source_shows_the_cells_line(nb_path, capsys):
    _, out, _ = run(capsys, "nb.ipynb", "--show-source", "--select", "SL501")
    assert "2 |     s = torch.cuda.Stream()" in out
    assert "  |         ^^^^^^^^^^^^^^^^^^^" in out


def test_json_sarif_and_github_carry_the_cell(nb_path, capsys):
    _, out, _ = run(capsys, "nb.ipynb", "--format", "json")
    first = json.loads(out)[0]
    assert first["cell"] == 3 and first["location"] == {"row": 2, "column": 7}
    assert first["noqa_row"] == 2 and first["fix"]["edits"][0]["location"]["row"] == 2
    _, out, _ = run(capsys, "nb.ipynb", "--format", "sarif")
    result = json.loads(out)["runs"][0]["results"][0]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 2 and result["properties"]["cell"] == 3
    assert result["message"]["text"].split("\n")[0].endswith("(cell 3)")
    _, out, _ = run(capsys, "nb.ipynb", "--format", "github")
    # A cell's row is no line of the .ipynb: the annotation goes on line 1 and says where.
    assert out.startswith("::error title=streamlint (SL201),file=nb.ipynb,line=1,col=1,")
    assert "::cell 3:2:7: SL201 " in out


def test_suppression_comments_work_in_cells(tmp_path):
    cell = "import torch\nfor i in range(30):\n    s = torch.cuda.Stream()  # noqa: SL501\n    with torch.cuda.stream(s):\n        x = torch.ones(4, device='cuda')\n"
    assert _codes(tmp_path, notebook(v4.new_code_cell(cell))) == []
    ignore_file = "# streamlint: ignore-file[SL5]\n" + cell.replace("  # noqa: SL501", "")
    assert _codes(tmp_path, notebook(v4.new_code_cell(ignore_file))) == []
    assert _codes(tmp_path, notebook(v4.new_code_cell(cell.replace("  # noqa: SL501", "")))) == [
        (1, 3, "SL501")
    ]
    # On a line of its own in a later cell, as anywhere in a .py file.
    later = notebook(v4.new_code_cell(cell.replace("  # noqa: SL501", "")), v4.new_code_cell("# streamlint: ignore-file[SL5]\n"))
    assert _codes(tmp_path, later) == []


def test_ipython_syntax_keeps_rows_and_columns(tmp_path):
    cell = (
        "import torch\n"
        "%load_ext autoreload\n"
        "files = !ls\n"
        "torch.cuda?\n"
        "!pip install \\\n"
        "    cupy\n"
        "pip install numba\n"
        "cd ../data\n"
        "for i in range(30):\n"
        "    %time s = torch.cuda.Stream()\n"
        "    s = torch.cuda.Stream()\n"
        "    with torch.cuda.stream(s):\n"
        "        x = torch.ones(4, device='cuda')\n"
    )
    assert _codes(tmp_path, notebook(v4.new_code_cell(cell))) == [(1, 11, "SL501")]  # (`cd ../data`: automagic %cd)
    # A Python cell magic keeps its body; others (%%bash) leave the cell out, unparsed.
    loop = cell[cell.index("for i") :]
    timed = notebook(v4.new_code_cell("import torch"), v4.new_code_cell("%%timeit -n 3\n" + loop))
    assert _codes(tmp_path, timed) == [(2, 4, "SL501")]
    assert _codes(tmp_path, notebook(v4.new_code_cell("%%bash\n" + loop))) == []


def test_a_cell_that_already_parses_is_left_alone():
    text = 'doc = """\n%d items\n!important\n"""\n'
    assert to_python(text, "tag") == (text, {})


def test_unparsable_cell_is_sl000_and_the_others_are_still_checked(tmp_path):
    nb = notebook(*CELLS, v4.new_code_cell("def f(:\n    pass"))
    found = _lint(tmp_path, nb)
    assert [(d.cell, d.code) for d in found] == [(3, "SL201"), (5, "SL501"), (6, "SL000")]
    assert found[-1].message.startswith("SyntaxError")
    # As for a .py file, a notebook without the GPU vocabulary is not analysed at all.
    assert _lint(tmp_path, notebook(v4.new_code_cell("def f(:\n    pass"))) == []


@pytest.mark.parametrize(
    ("content", "message", "row"),
    [
        ('{"cells": [\n  oops\n]}', "notebook is not valid JSON", 2),
        ('{"metadata": {}}', 'not a Jupyter notebook (no "cells" list)', 1),
        ('{"worksheets": [], "nbformat": 3}', "nbformat 3 notebooks are not supported", 1),
        ('{"cells": [{"cell_type": "code", "source": 3}]}', 'cell 1: "source" is not text', 1),
    ],
)
def test_broken_notebooks_are_sl000(tmp_path, content, message, row):
    (tmp_path / "x.ipynb").write_text(content)
    result = lint_notebook((tmp_path / "x.ipynb").read_bytes(), "x.ipynb", Settings.default())
    [diag] = result.diagnostics
    assert diag.code == "SL000" and diag.message.startswith(message) and diag.row == row


@pytest.mark.parametrize(
    "data",
    [
        [], 3, None, {"cells": {}}, {"cells": [3]}, {"cells": [], "metadata": 3},
        {"cells": [{"cell_type": "code", "source": ["import torch\n", "x"]}], "metadata": {"language_info": "py"}},
        {"cells": [{"cell_type": 7, "source": "import torch"}, {"cell_type": "code"}]},
        {"cells": [{"cell_type": "code", "source": "import torch\n" + "(" * 300 + ")" * 300}]},
    ],
)
def test_odd_json_never_crashes(tmp_path, data):
    raw = json.dumps(data).encode()
    result = lint_notebook(raw, "odd.ipynb", Settings.default())
    assert all(d.code == "SL000" and "internal error" not in d.message for d in result.diagnostics)


def test_notebooks_of_other_languages_are_skipped(tmp_path):
    nb = notebook(*CELLS)
    nb.metadata["language_info"] = {"name": "R"}
    assert _lint(tmp_path, nb) == []


def test_stdin_with_a_notebook_name(nb_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(nb_path.read_bytes())))
    code, out, _ = run(capsys, "-", "--stdin-filename", "other.ipynb")
    assert code == 1 and out.startswith("other.ipynb:cell 3:2:7: SL201")


# ---- adopting: --add-noqa and --baseline ----


def test_add_noqa_writes_into_the_cells(nb_path, capsys):
    before = json.loads(nb_path.read_text())
    code, _, err = run(capsys, "nb.ipynb", "--add-noqa")
    assert code == 0 and "added 2 noqa codes in 1 file" in err
    nb = nbformat.read(str(nb_path), as_version=4)
    assert nb.cells[2].source.splitlines()[1] == "gpu = host.to('cuda')  # noqa: SL201"
    assert nb.cells[4].source.splitlines()[1:3] == ["    s = torch.cuda.Stream()  # noqa: SL501", "    !echo step"]
    for i in (0, 1, 3):
        assert nb.cells[i].source == cells.cell_source(before["cells"][i])
    assert nb.cells[2].outputs[0].text == "tensor(0.)\n"
    assert run(capsys, "nb.ipynb")[0] == 0  # suppressed, and no SL900: the comments are used


def test_baseline_matches_findings_by_their_cell_line(nb_path, capsys):
    assert run(capsys, "nb.ipynb", "--baseline", "base.json")[0] == 0  # recorded
    # A cell inserted above moves every finding to another cell: still matched.
    nb = nbformat.read(str(nb_path), as_version=4)
    nb.cells.insert(1, v4.new_code_cell("import os"))
    nb.cells[3].source = nb.cells[3].source.replace("print(gpu.sum())", "print(gpu)")
    nbformat.write(nb, str(nb_path))
    code, out, _ = run(capsys, "nb.ipynb", "--baseline", "base.json")
    assert code == 0, out
    nb.cells.append(v4.new_code_cell("more = host.to('cuda')"))  # a new finding
    nbformat.write(nb, str(nb_path))
    code, out, _ = run(capsys, "nb.ipynb", "--baseline", "base.json")
    assert code == 1 and out.startswith("nb.ipynb:cell 7:1:8: SL201")


# ---- fixing ----


def test_fix_rewrites_only_the_fixed_cells_sources(nb_path, capsys):
    before = nb_path.read_text()
    code, out, _ = run(capsys, "nb.ipynb", "--fix", "--unsafe-fixes", "--show-fixes")
    assert code == 0 and "Found 2 errors (2 fixed, 0 remaining)." in out
    assert "nb.ipynb:cell 5:2:9: SL501 [unsafe]" in out
    after = nb_path.read_text()
    nb = nbformat.reads(after, as_version=4)
    nbformat.validate(nb)
    assert nb.cells[2].source == "!nvidia-smi\ngpu = host.to('cuda', non_blocking=True)\nprint(gpu.sum())"
    assert nb.cells[4].source == (
        "s = torch.cuda.Stream()\n"
        "for i in range(30):\n"
        "    !echo step\n"  # the IPython line is back in place
        "    with torch.cuda.stream(s):\n"
        "        x = torch.ones(4, device='cuda')\n"
    )
    assert nb.cells[2].outputs[0].text == "tensor(0.)\n" and nb.cells[2].execution_count == 3
    # Everything but those two sources is as it was, in Jupyter's own layout.
    expected = json.loads(before)
    expected["cells"][2]["source"] = nb.cells[2].source.splitlines(keepends=True)
    expected["cells"][4]["source"] = nb.cells[4].source.splitlines(keepends=True)
    assert json.loads(after) == expected
    assert after == nbformat.writes(nbformat.from_dict(expected)) + "\n"
    assert run(capsys, "nb.ipynb")[0] == 0


def test_fix_keeps_another_tools_layout(tmp_path):
    # Two-space indents, keys in the writer's order, escaped non-ASCII, a string source.
    data = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"title": "Größe"}, "cells": [
        {"cell_type": "code", "id": "a", "metadata": {}, "outputs": [], "execution_count": None,
         "source": CELLS[1].source},
        {"cell_type": "code", "id": "b", "metadata": {}, "outputs": [], "execution_count": None,
         "source": CELLS[2].source},
    ]}  # fmt: skip
    text = json.dumps(data, indent=2, ensure_ascii=True) + "\n"
    path = tmp_path / "colab.ipynb"
    path.write_text(text)
    outcome = fix_notebook(path, Settings.default(), unsafe=True)
    assert outcome.error is None and [d.cell for d in outcome.applied] == [2]
    data["cells"][1]["source"] = data["cells"][1]["source"].replace("'cuda'", "'cuda', non_blocking=True")
    assert outcome.source == json.dumps(data, indent=2, ensure_ascii=True) + "\n"
    assert outcome.remaining == []


def test_diff_shows_cells_and_writes_nothing(nb_path, capsys):
    before = nb_path.read_bytes()
    code, out, _ = run(capsys, "nb.ipynb", "--diff", "--unsafe-fixes")
    assert code == 1 and nb_path.read_bytes() == before
    assert "--- a/nb.ipynb:cell 3\n+++ b/nb.ipynb:cell 3\n" in out
    assert "+gpu = host.to('cuda', non_blocking=True)\n" in out


def test_fix_from_stdin_prints_the_fixed_notebook(nb_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(nb_path.read_bytes())))
    code, out, _ = run(capsys, "-", "--stdin-filename", "nb.ipynb", "--fix", "--unsafe-fixes")
    fixed = nbformat.reads(out, as_version=4)
    assert code == 0 and fixed.cells[4].source.startswith("s = torch.cuda.Stream()\nfor i")
    assert nbformat.reads(nb_path.read_text(), as_version=4).cells[4].source == CELLS[4].source


def test_layout_round_trip_is_byte_identical(tmp_path):
    nb = notebook()
    jupyter = nbformat.writes(nb) + "\n"
    assert layout.detect(jupyter, json.loads(jupyter)) is not None
    crlf = json.dumps(json.loads(jupyter), indent=2).replace("\n", "\r\n")
    found = layout.detect(crlf, json.loads(crlf))
    assert found is not None and found.dumps(json.loads(crlf)) == crlf
    # Not reproducible (compact JSON): nbformat's layout is used instead.
    compact = json.dumps(json.loads(jupyter))
    assert layout.detect(compact, json.loads(compact)) is None
    assert layout.dumps_like(compact, json.loads(compact), json.loads(compact)) == jupyter


def test_a_fix_across_a_cell_boundary_is_refused():
    module = cells.build(cells.read(nbformat.writes(notebook())))
    intact = split_back(module, module.text)
    assert intact[2] == CELLS[1].source and intact[5] == CELLS[4].source
    with pytest.raises(SplitError, match="cell boundary"):
        split_back(module, module.text.replace(module.boundary(3) + "\n", ""))
    with pytest.raises(SplitError, match="IPython line of cell 5"):
        split_back(module, module.text.replace(f"    pass  #{module.tag}\n", ""))


def _lint(tmp_path, nb) -> list:
    path = tmp_path / "t.ipynb"
    nbformat.write(nb, str(path))
    return lint_notebook(path.read_bytes(), str(path), Settings.default()).diagnostics


def _codes(tmp_path, nb) -> list[tuple[int, int, str]]:
    return [(d.cell, d.row, d.code) for d in _lint(tmp_path, nb)]


def test_a_named_notebook_without_cuda_words_is_still_parsed(tmp_path, capsys, monkeypatch):
    # As a named .py file: the prefilter is for what a directory walk finds.
    monkeypatch.chdir(tmp_path)
    nbformat.write(notebook(v4.new_code_cell("def f(:\n    pass\n")), "plain.ipynb")
    code, out, _ = run(capsys, "plain.ipynb")
    assert code == 1 and out.startswith("plain.ipynb:cell 1:1:7: SL000 SyntaxError")
    assert run(capsys, ".")[0] == 0  # found by the walk: skipped without CUDA words


def test_a_list_of_lines_in_a_message_counts_in_the_cells(tmp_path, capsys, monkeypatch):
    # an SL502 run of reads names the reads after the first ("lines 4, 5"): rows of the cell, not of all cells
    monkeypatch.chdir(tmp_path)
    loop = ("for step in range(100):\n    y = x * step\n    a = y.sum().item()\n    b = y.max().item()\n"
            "    c = y.min().item()\n    log(a, b, c)\n")
    nb = notebook(v4.new_code_cell("import torch\nx = torch.ones(8, device='cuda')\nlog = print"),
                  v4.new_markdown_cell("# loop"), v4.new_code_cell(loop))
    nbformat.write(nb, "reads.ipynb")
    code, out, _ = run(capsys, "reads.ipynb", "--output-format", "concise")
    assert code == 1
    assert out.splitlines()[0].startswith("reads.ipynb:cell 3:3:9: SL502 ")
    assert out.splitlines()[0].endswith("with 2 more reads right after it (lines 4, 5)")
