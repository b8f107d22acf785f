"""Other modules' walks kept for the run and replayed (interproc/replay.py, D-39): a later check of
the run takes a kept walk only where its queries get the same answers, and then ends as a fresh
run would; a walk of the checked module is never replayed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from streamlint.model import resolve
from streamlint.model.file_model import analyze_file
from streamlint.model.interproc import modules
from streamlint.model.transfer import interpret

HELPERS = """
import torch


def stage(batch):
    host = batch.cpu()
    return host.cuda(non_blocking=True)


def run(model, batch):
    # a call through a receiver of unknown class: the classes in sight that define `absorb` answer it
    model.absorb(batch)
    return stage(batch)
"""

USER = """
import torch
from pkg import helpers


class {cls}:
    def absorb(self, batch):
        {body}


def train(make_model, batch):
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        out = helpers.run(make_model(), batch)  # (a model the code tells nothing of: the root context)
    return out.sum()
"""


def _forget() -> None:
    modules.forget()
    resolve.forget()


@pytest.fixture
def package(tmp_path):
    _forget()
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(textwrap.dedent(HELPERS))
    (pkg / "a.py").write_text(textwrap.dedent(USER.format(cls="Plain", body="return batch")))
    (pkg / "b.py").write_text(textwrap.dedent(USER.format(cls="Syncing", body="torch.cuda.synchronize()")))
    yield pkg
    _forget()


def _analysis(path: Path):
    interpret.WALKS.clear()
    model = analyze_file(cst.parse_module(path.read_text()), str(path))
    walked = {q: n for (q, _), n in interpret.WALKS.items()}
    found = sorted((h.kind.value, h.site, h.function) for h in model.hazards)
    summaries = {key: walk.summary for key, walk in model.solved.walks.items() if key[0].startswith("pkg.")}
    return walked, found, summaries


def _fresh(path: Path):
    _forget()
    return _analysis(path)


def test_a_walk_kept_by_one_check_is_replayed_by_the_next_where_its_answers_hold(package):
    _analysis(package / "a.py")
    walked, found, summaries = _analysis(package / "a.py")  # the same run, a second check of a.py
    assert "pkg.helpers.stage" not in walked  # asked the same queries, answered the same: replayed
    assert walked.get("pkg.a.train") == 1 and (found, summaries) == _fresh(package / "a.py")[1:]


def test_a_walk_whose_query_now_gets_another_answer_is_walked_again(package):
    _analysis(package / "a.py")
    walked, found, summaries = _analysis(package / "b.py")
    # `model.absorb` of helpers.run is answered by b's class now (a different callee): run is walked
    # again, stage (whose queries did not change) is not
    assert walked.get("pkg.helpers.run", 0) >= 1 and "pkg.helpers.stage" not in walked
    fresh = _fresh(package / "b.py")
    assert (found, summaries) == fresh[1:]
    runs = [s for (q, _), s in summaries.items() if q == "pkg.helpers.run"]
    assert runs and all(any("sync" in e.kind.value for e in s.effects) for s in runs)  # (b's absorb synchronizes)


def test_the_checked_modules_own_functions_are_always_walked(package):
    _analysis(package / "a.py")
    walked, _, _ = _analysis(package / "a.py")
    assert walked.get("pkg.a.train", 0) >= 1


def test_a_module_read_again_is_walked_again(package):
    """A kept walk is of one syntax tree: a helper edited in the run (read and parsed again) is
    walked again, not answered by the walk of its old text."""
    import os

    _analysis(package / "a.py")
    helpers = package / "helpers.py"
    line = "    host = batch.cpu()\n"
    helpers.write_text(helpers.read_text().replace(line, line + "    torch.cuda.synchronize()\n"))
    os.utime(helpers, (2_000_000_000, 2_000_000_000))
    walked, found, summaries = _analysis(package / "a.py")
    assert walked.get("pkg.helpers.stage", 0) >= 1
    assert (found, summaries) == _fresh(package / "a.py")[1:]
