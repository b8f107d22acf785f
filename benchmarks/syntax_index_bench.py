"""The cost of the v3 syntax index (src/streamlint/model/syntax/) against libcst's parse.

Usage:
    python benchmarks/syntax_index_bench.py [--file PATH] [--runs 5]

The file defaults to the running Python's `_pydecimal.py` (about 6,400 lines); `--copies N`
repeats it N times (time must grow linearly). Each step is timed `--runs` times with the
garbage collector paused, as the checker runs, and the fastest run is kept (the least
disturbed by other work on the machine). Printed, each as seconds and as a ratio of the parse:

- libcst parse           `libcst.parse_module` (the floor for any libcst-based linter)
- index build            `build_index(module, source)`: the walk, the places, the digest
- of which places        lines and columns from Python's own parser (syntax/positions.py)
- PositionProvider       what the places would cost through libcst's metadata instead
- codec round trip       `loads(dumps(index))`, what a warm run pays per module
- prefilter              `may_use_gpu(source)` on a text that names no framework (its worst case)
"""

from __future__ import annotations

import argparse
import gc
import sysconfig
import time
from pathlib import Path
from typing import Callable

import libcst as cst

from streamlint.model.syntax.build import build_index
from streamlint.model.syntax.codec import dumps, loads
from streamlint.model.syntax.positions import places_from_ast, places_from_libcst
from streamlint.model.syntax.prefilter import may_use_gpu


def fastest(step: Callable[[], object], runs: int) -> float:
    """With the collector paused, as the checker runs (src/streamlint/checker.py)."""
    best = float("inf")
    for _ in range(runs):
        gc.disable()
        start = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - start)
        gc.enable()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=Path(sysconfig.get_paths()["stdlib"]) / "_pydecimal.py")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--copies", type=int, default=1, help="the file repeated this many times (a longer file)")
    args = parser.parse_args()
    source = args.file.read_text(encoding="utf-8") * args.copies
    module = cst.parse_module(source)
    unrelated = "".join(c if c.isascii() else "?" for c in source).replace("cuda", "cu_a").replace("torch", "to_ch")
    index = build_index(module, source)
    rows = [
        ("libcst parse", fastest(lambda: cst.parse_module(source), args.runs)),
        ("index build", fastest(lambda: build_index(module, source), args.runs)),
        ("of which places", fastest(lambda: places_from_ast(source), args.runs)),
        ("PositionProvider", fastest(lambda: places_from_libcst(module), max(1, args.runs // 2))),
        ("codec round trip", fastest(lambda: loads(dumps(index)), args.runs)),
        ("prefilter", fastest(lambda: may_use_gpu(unrelated), args.runs)),
    ]
    lines = source.count("\n") + 1
    calls = sum(len(f.calls) for f in index.functions)
    shape = f"{lines} lines, {len(index.functions)} functions, {calls} calls"
    print(f"{args.file} x{args.copies}: {shape}; fastest of {args.runs} runs")
    parse = rows[0][1]
    for name, seconds in rows:
        print(f"  {name:<18} {seconds:8.4f} s  {seconds / parse:5.2f}x parse")


if __name__ == "__main__":
    main()
