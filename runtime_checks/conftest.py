"""The GPU marker: tests marked `gpu` run `streamlint verify` on a CUDA GPU and are
skipped when PyTorch is missing or sees no GPU. Data helpers live in rc_data.py."""

from __future__ import annotations

import pytest

from .rc_data import gpu_problem


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if not gpu_items:
        return
    problem = gpu_problem()
    if problem is not None:
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=f"GPU test: {problem}"))
