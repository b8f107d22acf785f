"""The program's modules: imports of the checked file's project named from the top of their
package, found as the v2 resolution finds them, and every read noted for the result cache."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from streamlint import reads
from streamlint.model import resolve
from streamlint.model.domain.order import ConflictKind
from streamlint.model.file_model import analyze_file
from streamlint.model.interproc import modules
from streamlint.model.interproc.program import absolute
from streamlint.model.interproc.solver import digest_of_use

STAGING = """
import torch


def prefetch(batch):
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        out = batch.to("cuda", non_blocking=True)
    return out
"""

LOOP = """
{imports}


def step(batch):
    y = prefetch(batch)
    return (y * 2).sum()
"""


pytestmark = pytest.mark.usefixtures("fresh_project_state")


def _project(root: Path, imports: str, init: str = "from .staging import prefetch\n") -> Path:
    (root / "pyproject.toml").write_text("")
    (root / "pkg" / "train").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text(init)
    (root / "pkg" / "staging.py").write_text(textwrap.dedent(STAGING))
    (root / "pkg" / "train" / "__init__.py").write_text("")
    loop = root / "pkg" / "train" / "loop.py"
    loop.write_text(LOOP.format(imports=imports))
    return loop


def _kinds(path: Path) -> list[ConflictKind]:
    model = analyze_file(cst.parse_module(path.read_text()), str(path))
    return [h.kind for h in model.hazards]


@pytest.mark.parametrize("imports", [
    "from ..staging import prefetch",  # two levels up
    "from .. import prefetch",  # re-exported by the package's __init__
    "from pkg import prefetch",  # absolute, through the __init__
    "from pkg.staging import prefetch",  # absolute
])
def test_a_helper_of_the_package_is_seen_however_it_is_imported(tmp_path, imports):
    loop = _project(tmp_path, imports)
    assert ConflictKind.READ_AFTER_WRITE in _kinds(loop)


def test_the_module_is_named_from_the_top_of_its_package(tmp_path):
    loop = _project(tmp_path, "from ..staging import prefetch")
    model = analyze_file(cst.parse_module(loop.read_text()), str(loop))
    assert model.module == "pkg.train.loop"
    assert ("pkg.staging.prefetch", ) == tuple(q for q, _ in model.solved.walks if q.startswith("pkg.staging"))[:1]


def test_an_import_the_project_does_not_have_stays_silent(tmp_path):
    loop = _project(tmp_path, "from ..missing import prefetch")
    assert _kinds(loop) == []


def test_every_file_read_or_looked_for_is_noted(tmp_path):
    loop = _project(tmp_path, "from ..staging import prefetch")
    with reads.recording() as notes:
        _kinds(loop)
    staging = str((tmp_path / "pkg" / "staging.py").resolve())
    note = reads.parse_summary_note(notes[staging])  # its content hash, and the digest of what was used
    assert note is not None and note.content == reads.content_hash((tmp_path / "pkg" / "staging.py").read_bytes())
    assert any(note is reads.ABSENT for note in notes.values())  # the probes that found nothing


def test_a_changed_helper_is_read_again(tmp_path):
    loop = _project(tmp_path, "from ..staging import prefetch")
    assert ConflictKind.READ_AFTER_WRITE in _kinds(loop)
    staging = tmp_path / "pkg" / "staging.py"
    side_stream = "    with torch.cuda.stream(side):\n        out"
    on_one_stream = textwrap.dedent(STAGING).replace(side_stream, "    if True:\n        out")
    staging.write_text(on_one_stream + "\n\n")
    resolve.forget()
    assert ConflictKind.READ_AFTER_WRITE not in _kinds(loop)


@pytest.mark.parametrize("target, package, expected", [
    (".m.f", "a.b", "a.b.m.f"),
    ("..m.f", "a.b", "a.m.f"),
    ("...m", "a.b", "m"),
    (".f", "", "f"),  # a script's relative import: beside it
    ("torch.cuda", "a", "torch.cuda"),
])
def test_relative_targets_are_named_from_the_package(target, package, expected):
    assert absolute(target, package) == expected


def test_a_use_is_noted_and_its_digest_made_from_the_text_then_or_now(tmp_path):
    loop = _project(tmp_path, "from ..staging import prefetch")
    staging = tmp_path / "pkg" / "staging.py"
    with reads.recording() as notes:
        _kinds(loop)
    note = reads.parse_summary_note(notes[str(staging.resolve())])
    # (the digest is made by the run that finds the module changed: streamlint/reads.py)
    assert note is not None and note.names == ("v3:prefetch",) and note.digest == reads.DEFERRED

    before = digest_of_use(str(staging), "prefetch")
    then = staging.read_bytes()
    staging.write_text("# a comment changes no summary\n" + staging.read_text())
    modules.forget()
    assert digest_of_use(str(staging), "prefetch") == before
    staging.write_text(staging.read_text().replace("non_blocking=True", "non_blocking=False"))
    modules.forget()
    assert digest_of_use(str(staging), "prefetch") != before
    assert digest_of_use(str(staging), "prefetch", then) == before  # (from the text a cache kept)


def test_a_star_import_of_a_project_module_binds_its_public_names(tmp_path):
    # `from .common import *` brings `cupy` (imported there) and `staging_pair` (defined there); the private
    # helper and a star import of another package bind nothing
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "common.py").write_text(textwrap.dedent("""
        import cupy
        import numpy as np

        def staging_pair(n):
            return cupy.cuda.Stream(non_blocking=True), np.empty(n)

        def _private():
            pass
    """))
    loop = tmp_path / "pkg" / "loop.py"
    loop.write_text(textwrap.dedent("""
        from os.path import *
        from .common import *

        def run(xs):
            stream, host = staging_pair(len(xs))
            for x in xs:
                d = cupy.asarray(x)
                with stream:
                    d.get(out=host)
    """))
    model = analyze_file(cst.parse_module(loop.read_text()), str(loop))
    imports = model.solver.program.main.imports
    assert imports["cupy"] == "cupy" and imports["np"] == "numpy"
    assert imports["staging_pair"] == "pkg.common.staging_pair"
    assert "_private" not in imports and "join" not in imports
    assert ("pkg.common.staging_pair",) == tuple(q for q, _ in model.solved.walks if q.startswith("pkg.common"))[:1]
