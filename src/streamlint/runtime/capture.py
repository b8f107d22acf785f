"""The tracer: the PyTorch profiler (Kineto over CUPTI) with CPU and CUDA activities and,
where this PyTorch has it, CUDA synchronization events. Needs torch."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


def profiler_options(torch: Any) -> dict:
    prof = torch.profiler
    options: dict = {"activities": [prof.ProfilerActivity.CPU, prof.ProfilerActivity.CUDA]}
    config = getattr(getattr(torch._C, "_profiler", None), "_ExperimentalConfig", None)
    if config is not None:
        try:
            options["experimental_config"] = config(enable_cuda_sync_events=True)
        except TypeError:  # an older PyTorch without sync events
            pass
    return options


@contextmanager
def tracing(torch: Any, path: str | Path) -> Iterator[Any]:
    """Profile the block and export its Chrome trace to `path`, also when the block
    raises (the trace of a run that failed half-way is still evidence)."""
    prof = torch.profiler.profile(**profiler_options(torch))
    prof.__enter__()
    try:
        yield prof
    finally:
        try:
            torch.cuda.synchronize()
        except Exception:
            pass
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(str(path))
