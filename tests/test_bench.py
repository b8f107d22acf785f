"""The peer benchmark's machinery on a tiny tree (streamlint rows only; peers skipped)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
from conftest import write

pytestmark = pytest.mark.slow  # runs the benchmark script

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench"] = module
    spec.loader.exec_module(module)
    return module


def test_bench_runs_cold_warm_and_touched_rows_and_prints_a_table(tmp_path, capsys):
    bench = load_bench()
    tree = tmp_path / "src" / "pkg"
    write(tree / "__init__.py", "")
    write(tree / "helpers.py", "import torch\n\ndef make_host(n):\n    return torch.zeros(n)\n")
    write(tree / "main.py", "import torch\nfrom .helpers import make_host\n\n"
                            "def up(n, steps):\n    for _ in range(steps):\n        yield make_host(n).to('cuda', non_blocking=True)\n")
    write(tree / "notes.py", "x = 1\n")
    out = tmp_path / "results.json"
    argv = ["--tree", str(tree), "--copies", "1", "--runs", "1", "--work", str(tmp_path / "work"),
            "--out", str(out)] + [f"--skip-peer={p}" for p in bench.PEERS]
    assert bench.main(argv) == 0
    table = capsys.readouterr().out
    report = json.loads(out.read_text())
    rows = {(r["tree"], r["tool"]): r for r in report["rows"]}
    for tree_name in ("pkg", "monorepo"):
        for tool in ("cold", "warm", "touched", "helper touched"):
            row = rows[(tree_name, f"streamlint {tool}")]
            assert len(row["runs"]) == 1 and row["runs"][0]["returncode"] == 0, row
            assert row["runs"][0]["output_lines"] == 1  # main.py's SL301, every time
    # The touched files come from the cache's dependencies: the helper is the file most others
    # depend on, the leaf one the fewest do. (v3's caller search reads every module of the
    # package, so every file here has a dependent: which one is picked is not pinned.)
    helper = re.search(r"`pkg/(\w+\.py)` \(\+(\d+) importers\)", rows[("pkg", "streamlint helper touched")]["note"])
    leaf = re.search(r"`pkg/(\w+\.py)` \(\+(\d+) importers\)", rows[("pkg", "streamlint touched")]["note"])
    assert helper and leaf and int(helper.group(2)) >= int(leaf.group(2)) >= 0
    assert report["trees"] == {"pkg": {"files": 4, "lines": 11}, "monorepo": {"files": 4, "lines": 11}}
    assert "| pkg (4 files, 0.00 M lines) | streamlint cold | 1 |" in table
    assert "| monorepo (4 files, 0.00 M lines) | TorchFix | 0 | - |" in table
    # The touched files are restored: the work copies end as they began.
    assert (tmp_path / "work" / "pkg" / "main.py").read_bytes() == (tree / "main.py").read_bytes()
