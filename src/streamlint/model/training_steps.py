"""The old model's name for the syntax query that lives in `model/interproc/training_steps.py`
(v3's `Program.hot_entry` reads it too)."""

from streamlint.model.interproc.training_steps import (  # noqa: F401
    ONE_OFF_METHODS, ONE_OFF_PREFIXES, runs_backward_every_call,
)
