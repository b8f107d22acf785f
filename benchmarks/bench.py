"""Speed and memory of streamlint against libcst's parser, measured in one run.

Usage:
    python benchmarks/bench.py [PATH] [--jobs N] [--limit N]

PATH defaults to the installed torch package's sources. Every phase runs in a fresh
subprocess so that its peak memory (max RSS, children included) is its own:

- parse-all      libcst.parse_module over every file (the baseline for the full run)
- parse-gpu      libcst.parse_module over the files the prefilter keeps
- analyse-gpu    streamlint's whole per-file cost (read, parse, stream model, all
                 rules, positions when there are findings) over the same files, serial
- full           `lint_paths` over every file with the process pool (what the CLI does)

Ratios are streamlint / libcst measured on the same files in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from streamlint.model.api import PREFILTER_KEYS as PREFILTER


def default_target() -> Path | None:
    try:
        import importlib.util

        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def python_files(root: Path, limit: int | None) -> list[Path]:
    files = sorted(p for p in root.rglob("*.py") if p.is_file())
    return files[:limit] if limit else files


def peak_rss_mib() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024.0  # Linux reports KiB


def run_phase(phase: str, files: list[Path], jobs: int) -> dict:
    import libcst as cst

    start = time.perf_counter()
    lines = 0
    findings = 0
    errors = 0
    analysed = 0
    if phase in ("parse-all", "parse-gpu"):
        for path in files:
            data = path.read_bytes()
            if phase == "parse-gpu" and not any(k in data for k in PREFILTER):
                continue
            analysed += 1
            text = data.decode("utf-8", errors="replace")
            lines += text.count("\n") + 1
            try:
                cst.parse_module(text)
            except Exception:
                errors += 1
    elif phase == "analyse-gpu":
        from streamlint.checker import SourceError, check_source
        from streamlint.rules import all_rules

        rules = all_rules()
        for path in files:
            data = path.read_bytes()
            if not any(k in data for k in PREFILTER):
                continue
            analysed += 1
            text = data.decode("utf-8", errors="replace")
            lines += text.count("\n") + 1
            try:
                findings += len(check_source(text, str(path), rules))
            except SourceError:
                errors += 1
    elif phase == "full":
        from streamlint.engine import lint_paths

        results = lint_paths(files, None, jobs=jobs)
        for result in results:
            lines += result.lines
            findings += sum(1 for d in result.diagnostics if d.code != "SL000")
            errors += sum(1 for d in result.diagnostics if d.code == "SL000")
            analysed += bool(result.analysed)
    seconds = time.perf_counter() - start
    return {
        "phase": phase, "files": len(files), "analysed_files": analysed, "lines": lines,
        "seconds": seconds, "findings": findings, "errors": errors, "peak_rss_mib": peak_rss_mib(),
    }


def measure(phase: str, target: Path, jobs: int, limit: int | None) -> dict:
    cmd = [sys.executable, __file__, str(target), "--phase", phase, "--jobs", str(jobs)]
    if limit:
        cmd += ["--limit", str(limit)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--limit", type=int, default=None, help="only the first N files (quick runs)")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    target = args.path or default_target()
    if target is None:
        parser.error("torch is not installed: give a PATH to lint")
    files = python_files(target, args.limit)
    if args.phase:
        print(json.dumps(run_phase(args.phase, files, args.jobs)))
        return 0

    print(f"target: {target} ({len(files)} files), jobs={args.jobs}, python {sys.version.split()[0]}")
    rows = {phase: measure(phase, target, args.jobs, args.limit) for phase in ("parse-all", "parse-gpu", "analyse-gpu", "full")}
    print(f"{'phase':<12} {'files':>6} {'analysed':>8} {'lines':>9} {'seconds':>8} {'files/s':>8} {'lines/s':>9} {'peak MiB':>9}")
    for row in rows.values():
        s = row["seconds"] or 1e-9
        n = row["analysed_files"]
        print(f"{row['phase']:<12} {row['files']:>6} {n:>8} {row['lines']:>9} {s:>8.2f} {n / s:>8.1f} {row['lines'] / s:>9.0f} {row['peak_rss_mib']:>9.0f}")
    per_file = rows["analyse-gpu"]["seconds"] / rows["parse-gpu"]["seconds"]
    full = rows["full"]["seconds"] / rows["parse-all"]["seconds"]
    print()
    print(f"per analysed file, streamlint / libcst parse (serial, same files): {per_file:.2f}x  (target <= 2x)")
    print(f"whole tree, streamlint (prefilter + {args.jobs} processes) / libcst parse of every file (serial): {full:.2f}x")
    print(f"whole tree wall time: {rows['full']['seconds']:.1f} s  (target < 60 s on 2 cores); "
          f"findings {rows['full']['findings']}, SL000 {rows['full']['errors']}")
    print(f"peak memory, full run / parse-all: {rows['full']['peak_rss_mib'] / rows['parse-all']['peak_rss_mib']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
