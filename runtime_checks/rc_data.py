"""Data of the runtime checks. Every test not marked `gpu` runs on the CPU, on traces
recorded on the GPU and committed under data/ (`streamlint verify --records`, trimmed):

    data/pairs/     records of `streamlint verify fixtures/` (every rule's pair, in one
                    run, under the PyTorch profiler)
    data/pairs_cupti/  the same pairs under the CUPTI tracer (`--tracer cupti`), recorded
                    on the same day at the same commit (on a two-GPU host, beside another
                    verify run on the other GPU: the host-bound SL303 and SL402 ran slower)
    (SL303's records in both are from later runs of its redesigned pair, each alone on
    one H200; run.json's "rerun" says when and at which commit)
    data/script/    records of `streamlint verify examples/train_loop.py -- --steps 24`
    data/scripts/   records of the other examples, with their provoked runs (below)
    data/scripts_torch/  the run-once examples, cupy_pipeline and numba_race again, under
                    the PyTorch profiler
    data/scripts_cupti/  train_loop and the PyTorch race examples again, under CUPTI
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
CODES = ("SL101", "SL102", "SL103", "SL104", "SL201", "SL202", "SL301", "SL302", "SL303",
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
# Every example is recorded under both tracers: the PyTorch programs (train_loop and the
# three race examples) under the PyTorch profiler in script/ and scripts/ and under CUPTI
# (with the raw activity records) in scripts_cupti/; the CuPy- and Numba-only programs
# under CUPTI in scripts/ and under the PyTorch profiler in scripts_torch/.
SCRIPTS_CUPTI = DATA / "scripts_cupti"
TORCH_EXAMPLES = ("train_loop", "race_fixed", "race_masked", "race_missing_wait", "race_unseeded")
OTHER_EXAMPLES = RUN_ONCE + ("numba_race", "cupy_pipeline")
EXAMPLES = TORCH_EXAMPLES + OTHER_EXAMPLES


def script_records(name: str, tracer: str | None = None) -> Path:
    """Where the records of an example under a tracer are (None: its first record, made
    by the tracer the program was written for)."""
    if name in TORCH_EXAMPLES:
        first = SCRIPT if name == "train_loop" else SCRIPTS / name
        return SCRIPTS_CUPTI / name if tracer == "cupti" else first
    return SCRIPTS_TORCH / name if tracer == "torch" else SCRIPTS / name


@lru_cache(maxsize=None)
def script_report(name: str, tracer: str | None = None) -> dict:
    from streamlint.runtime.report import build

    return build(script_records(name, tracer))


def finding(name: str, label: str, tracer: str | None = None) -> dict:
    return next(f for f in script_report(name, tracer)["script"]["findings"] if f["label"] == label)
