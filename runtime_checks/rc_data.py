"""Data of the runtime checks. Every test not marked `gpu` runs on the CPU, on traces
recorded on the GPU and committed under data/ (`streamlint verify --records`, trimmed):

    data/pairs/     records of `streamlint verify fixtures/` (every rule's pair, in one
                    run, under the PyTorch profiler)
    data/pairs_cupti/  the same pairs under the CUPTI tracer (`--tracer cupti`), recorded
                    on the same day at the same commit (on a two-GPU host, beside another
                    verify run on the other GPU: the host-bound SL303 and SL402 ran slower)
    data/script/    records of `streamlint verify examples/train_loop.py -- --steps 24`
    data/scripts/   records of the other examples, with their provoked runs (below)
    data/scripts_torch/  the run-once examples again, under the PyTorch profiler
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
PAIRS = DATA / "pairs"
PAIRS_CUPTI = DATA / "pairs_cupti"
SCRIPT = DATA / "script"
REPORTS = HERE / "reports"
FIXTURES = HERE.parent / "fixtures"
CODES = ("SL101", "SL102", "SL103", "SL201", "SL202", "SL301", "SL302", "SL303",
         "SL401", "SL402", "SL403", "SL404", "SL501", "SL502", "SL503")  # fmt: skip
# Meta rules check streamlint's own comments, not GPU code: there is nothing to run.
META_CODES = ("SL900",)


def gpu_problem() -> str | None:
    if importlib.util.find_spec("torch") is None:
        return "PyTorch is not installed"
    try:
        import torch
    except Exception as err:  # a broken install
        return f"PyTorch cannot be imported: {err}"
    if not torch.cuda.is_available():
        return "no CUDA GPU"
    return None


@lru_cache(maxsize=None)
def trace_of(code: str, variant: str):
    from streamlint.runtime.trace import load

    return load(PAIRS / code / f"{variant}.trace.json.gz")


@lru_cache(maxsize=None)
def evidence_of(code: str, variant: str):
    from streamlint.runtime.evidence import Evidence

    return Evidence(trace_of(code, variant))


@lru_cache(maxsize=None)
def summary_of(code: str, variant: str) -> dict:
    from streamlint.runtime.evidence import summarize

    return summarize(trace_of(code, variant))


# Records of `streamlint verify runtime_checks/examples/<name>.py --keep-raw` on the GPU:
# three torch programs (a real missing wait, its correction, a race masked by a host
# read), and a CuPy-only and a Numba-only program traced through CUPTI without PyTorch
# (their raw CUPTI activity records are in script/cupti_records.json.gz).
SCRIPTS = DATA / "scripts"
# The run-once examples (numba_race_once.py, cupy_race_once.py and their corrections)
# were recorded under both tracers on one H200: CUPTI in scripts/ (with the raw activity
# records), the PyTorch profiler in scripts_torch/.
SCRIPTS_TORCH = DATA / "scripts_torch"
RUN_ONCE = ("numba_race_once", "numba_race_once_fixed", "cupy_race_once", "cupy_race_once_fixed")


@lru_cache(maxsize=None)
def script_report(name: str, tracer: str = "cupti") -> dict:
    from streamlint.runtime.report import build

    return build((SCRIPTS_TORCH if tracer == "torch" else SCRIPTS) / name)


def finding(name: str, label: str, tracer: str = "cupti") -> dict:
    return next(f for f in script_report(name, tracer)["script"]["findings"] if f["label"] == label)
