"""Fixtures the model_v3 tests share."""

from __future__ import annotations

import pytest

from streamlint.model import resolve
from streamlint.model.interproc import modules


@pytest.fixture
def fresh_project_state():
    """Forget what earlier tests made of their projects (per-run answers, modules read), before and after."""
    resolve.forget()
    modules.forget()
    yield
    resolve.forget()
    modules.forget()
