"""Shared helpers: a fake checker and fake rules for engine tests that need no model.

The fake checker flags `hit(SL101)` markers (or `hit(SL101+2)` for a finding spanning
two more rows) at the marker's column, raises a source error on `syntax_error!`,
raises on `crash!` and kills its (worker) process on `die!`. Files still need a GPU
word (e.g. `import torch.cuda`) to pass the prefilter.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import re
from pathlib import Path

import pytest

from streamlint.diagnostics import Diagnostic
from streamlint.rules import Rule

_PYTEST_PID = os.getpid()
_MARKER = re.compile(r"hit\((SL\d{3})(?:\+(\d+))?\)")


# Tests whose pinned finding, fix or figure the v3 switch loses: each line of
# tests/v3_switch_regressions.txt is a node id, then `#` and the reason (the capability v3
# lacks, docs/v3-switch-diff.md "Tests"). They run as strict xfails: one that passes again
# fails the suite until its line is removed.
_V3_REGRESSIONS = Path(__file__).with_name("v3_switch_regressions.txt")


def pytest_collection_modifyitems(config, items) -> None:
    if not _V3_REGRESSIONS.is_file():
        return
    reasons = {}
    for line in _V3_REGRESSIONS.read_text(encoding="utf-8").splitlines():
        node, _, reason = line.partition("#")
        if node.strip():
            reasons[node.strip()] = "v3 switch: " + reason.strip()
    for item in items:
        reason = reasons.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=reason))


class FakeSourceError(Exception):
    def __init__(self, message: str, row: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message, self.row, self.column = message, row, column


def _fake_rule(code: str, name: str) -> type[Rule]:
    doc = f"## What it does\nFake {name}.\n\n## Why is this bad?\nTests.\n"
    attrs = {"code": code, "name": name, "summary": name, "__doc__": doc}
    return type(f"Fake{code}", (Rule,), attrs)


FAKE_RULES = tuple(
    _fake_rule(code, f"fake-{code.lower()}")
    for code in ("SL101", "SL102", "SL202", "SL301", "SL501", "SL502")
)


def fake_check(source: str, filename: str, rules) -> list[Diagnostic]:
    codes = {r.code for r in rules}
    names = {r.code: r.name for r in rules}
    out = []
    for row, line in enumerate(source.splitlines(), start=1):
        if "syntax_error!" in line:
            raise FakeSourceError("SyntaxError: fake", row, line.index("syntax_error!") + 1)
        if "crash!" in line:
            raise ValueError("fake crash")
        if "die!" in line and os.getpid() != _PYTEST_PID:  # only ever in a worker process
            os._exit(70)
        for m in _MARKER.finditer(line):
            code, extra = m.group(1), int(m.group(2) or 0)
            if code in codes:
                col = m.start() + 1
                out.append(
                    Diagnostic(filename, row, col, code, f"fake {code}", row + extra,
                               m.end() + 1, row, names[code])
                )  # fmt: skip
    return sorted(out)


_CACHES = itertools.count()


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Each test's result cache in a directory of its own (the environment reaches
    subprocesses too): runs with fake checkers never share results with real ones, and
    no test writes a cache into the repository. The directory is made by the first run
    that writes there, not here: `mktemp` lists every directory made so far in the
    session, which costs seconds over thousands of tests (and slows each `tmp_path`)."""
    directory = tmp_path_factory.getbasetemp() / "caches" / str(next(_CACHES)) / ".streamlint_cache"
    monkeypatch.setenv("STREAMLINT_CACHE_DIR", str(directory))
    monkeypatch.delenv("STREAMLINT_NO_CACHE", raising=False)
    return directory


@pytest.fixture(autouse=True)
def plain_output(monkeypatch):
    """No colour whatever the environment says (tests that want it set it)."""
    for name in ("FORCE_COLOR", "CLICOLOR_FORCE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake_engine(monkeypatch):
    """Swap the rule registry and the checker for the fakes above."""
    import streamlint.rules
    from streamlint.engine import lint as engine

    monkeypatch.setattr(streamlint.rules, "all_rules", lambda: FAKE_RULES)
    monkeypatch.setattr(streamlint.rules, "rule_codes", lambda: tuple(r.code for r in FAKE_RULES))
    monkeypatch.setattr(engine, "load_checker", lambda: (fake_check, FakeSourceError))
    return FAKE_RULES


# The fakes reach pool workers only when they are forked from the test process.
needs_fork = pytest.mark.skipif(
    multiprocessing.get_start_method() != "fork", reason="fakes need fork-started workers"
)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    return path


# Real snippets the real rules flag (end-to-end tests; they need the stream model).
SL501_SNIPPET = """\
import torch
for i in range(30):
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.ones(4, device="cuda")
"""  # SL501 at 3:9

SL102_SNIPPET = """\
from numba import cuda
import numpy as np

@cuda.jit
def kern(a):
    pass

host_arr = np.zeros(4)
for step in range(10):
    kern[4, 32](host_arr)
"""  # SL102 at 10:5: the launch repeats, so the implicit copy is paid every pass

PINNED_SNIPPET = """\
import torch


def upload(rows, dim):
    host = torch.empty(rows, dim, pin_memory=True)
    return host.to("cuda")
"""  # SL201 at 6:12 (a pinned tensor copied without non_blocking)

LOOP_SNIPPET = """\
import torch


def train(model, loader):
    side = torch.cuda.Stream()
    for batch in loader:
        with torch.cuda.stream(side):
            out = model(batch)
        torch.cuda.synchronize()
    return out
"""  # SL103 at 9:9 (a device-wide sync in a loop over stream work)


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `streamlint ARGV` run in this process."""
    from streamlint.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
