"""Where a cold check of a tree spends its CPU: each file's CPU seconds in the worker
that checked it (the run's chunks and sharing as the CLI makes them), the files that
ran out of their time budget (SL000), and the CPU per directory.

    python benchmarks/per_file_cpu.py TREE --jobs 14 --out per-file.json

A directory table on stdout; the JSON holds every file's row.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def _check(chunk: list[str]) -> list[dict]:
    from streamlint.engine import run
    from streamlint.settings import Settings

    settings = Settings()
    rows = []
    run_id = chunk[0]
    for name in chunk:
        start = time.process_time()
        checked = run.check_chunk([(Path(name), settings)], digests=False, run=run_id)
        spent = time.process_time() - start
        result = checked[0][0]
        codes = [d.code for d in result.diagnostics]
        rows.append({"path": name, "cpu": round(spent, 3), "lines": result.lines,
                     "timeout": "SL000" in codes, "findings": len(codes)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--depth", type=int, default=2, help="directory depth of the table")
    args = parser.parse_args()

    from streamlint.engine.pool import _chunks
    from streamlint.settings import Settings

    files = sorted(args.tree.rglob("*.py"))
    chunks = [[str(path) for path, _ in chunk] for chunk in _chunks([(f, Settings()) for f in files], args.jobs)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        rows = [row for rows in pool.map(_check, chunks) for row in rows]
    root = str(args.tree.parent) + "/"
    by_dir: dict[str, list[float]] = defaultdict(lambda: [0.0, 0, 0, 0])
    for row in rows:
        parts = row["path"].removeprefix(root).split("/")
        key = "/".join(parts[: min(args.depth, len(parts) - 1)]) or "."
        entry = by_dir[key]
        entry[0] += row["cpu"]
        entry[1] += 1
        entry[2] += row["lines"]
        entry[3] += row["timeout"]
    total = sum(row["cpu"] for row in rows)
    print(f"{len(rows)} files, {total:.1f} s CPU, {sum(r['timeout'] for r in rows)} time-outs")
    print(f"{'directory':40} {'cpu s':>8} {'files':>6} {'lines':>8} {'SL000':>5}")
    for key, (cpu, n, lines, outs) in sorted(by_dir.items(), key=lambda kv: -kv[1][0])[:40]:
        print(f"{key:40} {cpu:8.1f} {n:6d} {lines:8d} {outs:5d}")
    print("slowest files:")
    for row in sorted(rows, key=lambda r: -r["cpu"])[:40]:
        print(f"  {row['cpu']:7.2f} {row['lines']:6d} {'SL000' if row['timeout'] else '':5} {row['path'].removeprefix(root)}")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=0))


if __name__ == "__main__":
    main()
