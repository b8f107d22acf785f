"""The v3 model's cost against libcst's parse, per corpus, in one process and the same run.

Usage:
    PYTHONPATH=$PWD/src python benchmarks/v3_speed.py [--runs 3] [--corpus NAME ...] [--profile NAME]

For each corpus it times (a) `libcst.parse_module` of every file and (b) v3 `analyze_file` on
the parsed modules (src/streamlint/model/file_model.py), each `--runs` times with
`time.process_time` (CPU seconds of this process: other work on a shared machine does not
count), and prints the medians, the ratio (b)/(a), the seconds per 1,000 lines and the
peak memory the analysis allocated (tracemalloc, in a separate run: tracing slows the
timed runs down).

Corpora:
- fixtures      every `fixtures/**/*.py` except `fixes/` (the model's own cases)
- functions     one generated module of 4,000 small functions (target: analysis under 5 s)
- long-N        one generated function, and one notebook-like module of N top-level cells,
                for N = 750, 1,500 and 3,000: the time per line must not grow with N
- cupy          a generated CuPy-heavy module (streams, async copies, kernels, events)
- `--file PATH`  a real module, analysed under its own path (so the project around it is read
                as the checker reads it: its package's modules, imported and calling)

An analysis run that takes more than `--budget` CPU seconds (default 120) is stopped and
reported as over budget (the analysis did not finish; a checker would time out).

`--profile NAME` runs cProfile over one corpus's analysis instead and prints the top entries.
"""

from __future__ import annotations

import argparse
import cProfile
import inspect
import pstats
import signal
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Callable

import libcst as cst

from streamlint.model.file_model import analyze_file

ROOT = Path(__file__).resolve().parent.parent
Corpus = list[tuple[str, str]]  # (path, source)


# -- generated corpora -----------------------------------------------------------------

def small_functions(count: int) -> str:
    """`count` small functions in the style of a training helper module."""
    parts = ["import torch\n\n"]
    for i in range(count):
        parts.append(
            f"def step_{i}(x, s):\n"
            f"    y = x.cuda(non_blocking=True)\n"
            f"    with torch.cuda.stream(s):\n"
            f"        z = y * {i}\n"
            f"    return z.sum()\n\n"
        )
    return "".join(parts)


def _cell(i: int, indent: str) -> str:
    return (
        f"{indent}x{i} = torch.randn({i % 7 + 1}, device='cuda')\n"
        f"{indent}with torch.cuda.stream(side):\n"
        f"{indent}    y{i} = x{i} * 2\n"
        f"{indent}torch.cuda.current_stream().wait_stream(side)\n"
        f"{indent}total = total + y{i}.sum().item()\n"
    )


def notebook(cells: int) -> str:
    """A notebook exported as a script: `cells` cells of top-level code."""
    head = "import torch\n\nside = torch.cuda.Stream()\ntotal = 0\n"
    return head + "".join(f"# In[{i}]:\n" + _cell(i, "") for i in range(cells))


def long_function(cells: int) -> str:
    """The same code as one function body (a long training script in `main()`)."""
    head = "import torch\n\n\ndef main():\n    side = torch.cuda.Stream()\n    total = 0\n"
    return head + "".join(_cell(i, "    ") for i in range(cells)) + "    return total\n"


def cupy_heavy(blocks: int) -> str:
    """CuPy code as image-processing libraries write it: streams, pinned staging, raw kernels."""
    parts = [
        "import cupy as cp\nimport numpy as np\n\n"
        "_scale = cp.RawKernel(r'extern \"C\" __global__ void scale(float* x) { x[0] *= 2; }', 'scale')\n\n"
    ]
    for i in range(blocks):
        parts.append(
            f"def filter_{i}(image, out=None):\n"
            f"    stream = cp.cuda.Stream(non_blocking=True)\n"
            f"    host = cp.cuda.alloc_pinned_memory(image.nbytes)\n"
            f"    with stream:\n"
            f"        dev = cp.asarray(image)\n"
            f"        dev = cp.fft.fft2(dev) * {i + 1}\n"
            f"        _scale((1,), (1,), (dev,))\n"
            f"        done = stream.record()\n"
            f"    cp.cuda.get_current_stream().wait_event(done)\n"
            f"    if out is None:\n"
            f"        out = cp.empty_like(dev)\n"
            f"    out[...] = dev.real\n"
            f"    result = cp.asnumpy(out, stream=stream)\n"
            f"    stream.synchronize()\n"
            f"    return np.clip(result, 0, {i})\n\n"
        )
    return "".join(parts)


def fixtures() -> Corpus:
    files = sorted(p for p in (ROOT / "fixtures").rglob("*.py") if "fixes" not in p.relative_to(ROOT).parts)
    return [(str(p), p.read_text(encoding="utf-8")) for p in files]


CORPORA: dict[str, Callable[[], Corpus]] = {
    "fixtures": fixtures,
    "functions": lambda: [("generated_functions.py", small_functions(4000))],
    "cupy": lambda: [("generated_cupy.py", cupy_heavy(500))],
}
for _cells in (750, 1500, 3000):
    CORPORA[f"notebook-{_cells}"] = lambda n=_cells: [("generated_notebook.py", notebook(n))]
    CORPORA[f"function-{_cells}"] = lambda n=_cells: [("generated_long.py", long_function(n))]


# -- measuring -------------------------------------------------------------------------

def parse_all(corpus: Corpus) -> list[tuple[str, cst.Module, str]]:
    parsed = []
    for path, source in corpus:
        try:
            parsed.append((path, cst.parse_module(source), source))
        except cst.ParserSyntaxError:
            continue  # a fixture of invalid syntax: neither step sees it
    return parsed


def analyze_all(parsed: list[tuple[str, cst.Module, str]]) -> int:
    """The analysis as a check makes it (checked_file.CheckedFile.v3: the file's bytes go with its tree;
    code from before session 21 takes the tree alone, so a baseline can be run with this script)."""
    takes_text = "text" in inspect.signature(analyze_file).parameters
    return sum(len((analyze_file(module, path, text=source.encode()) if takes_text else analyze_file(module, path)).hazards)
               for path, module, source in parsed)


class OverBudget(Exception):
    pass


def _over_budget(signum, frame):
    raise OverBudget()


def cpu_seconds(step: Callable[[], object], budget: float = 0) -> tuple[float, object]:
    """CPU seconds of one run and what it returned; OverBudget once it has used `budget` CPU
    seconds (0: no limit)."""
    signal.signal(signal.SIGPROF, _over_budget)
    signal.setitimer(signal.ITIMER_PROF, budget)
    start = time.process_time()
    try:
        result = step()
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    return time.process_time() - start, result


def peak_mib(step: Callable[[], object]) -> float:
    tracemalloc.start()
    step()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def measure(name: str, corpus: Corpus, runs: int, budget: float) -> dict:
    lines = sum(source.count("\n") for _, source in corpus)
    parse = statistics.median(cpu_seconds(lambda: parse_all(corpus))[0] for _ in range(runs))
    parsed = parse_all(corpus)
    row = {"corpus": name, "files": len(corpus), "lines": lines, "parse_s": parse}
    try:
        analyses = [cpu_seconds(lambda: analyze_all(parsed), budget) for _ in range(runs)]
    except OverBudget:
        return {**row, "v3_s": None, "budget": budget}
    analysis = statistics.median(seconds for seconds, _ in analyses)
    return {
        **row, "v3_s": analysis,
        "ratio": analysis / parse if parse else float("nan"),
        "v3_ms_per_kline": 1000 * analysis / max(lines, 1) * 1000,
        "peak_mib": peak_mib(lambda: analyze_all(parse_all(corpus))),
        "hazards": analyses[0][1],
    }


def table(rows: list[dict]) -> str:
    out = ["| corpus | files | lines | parse s | v3 s | v3/parse | v3 ms per 1k lines | peak MiB | hazards |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r["v3_s"] is None:
            out.append(f"| {r['corpus']} | {r['files']} | {r['lines']} | {r['parse_s']:.2f} | "
                       f"over {r['budget']:.0f} | | | | |")
            continue
        out.append(f"| {r['corpus']} | {r['files']} | {r['lines']} | {r['parse_s']:.2f} | {r['v3_s']:.2f} | "
                   f"{r['ratio']:.2f} | {r['v3_ms_per_kline']:.0f} | {r['peak_mib']:.0f} | {r['hazards']} |")
    return "\n".join(out)


def profile(name: str, top: int) -> None:
    parsed = parse_all(CORPORA[name]())
    profiler = cProfile.Profile()
    profiler.runcall(analyze_all, parsed)
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--corpus", nargs="*", default=list(CORPORA), choices=list(CORPORA))
    parser.add_argument("--profile", help="cProfile one corpus's analysis instead (a corpus name, or a --file's name)")
    parser.add_argument("--file", nargs="*", default=[], type=Path, metavar="PATH",
                        help="also a corpus of each of these files (a real module), named by its file name")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--budget", type=float, default=120, help="CPU seconds one analysis run may take")
    args = parser.parse_args()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))  # libcst on long bodies
    for path in args.file:
        CORPORA[path.name] = lambda p=path: [(str(p), p.read_text(encoding="utf-8"))]
        args.corpus.append(path.name)
    if args.profile:
        profile(args.profile, args.top)
        return
    rows = []
    for name in args.corpus:
        rows.append(measure(name, CORPORA[name](), args.runs, args.budget))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
