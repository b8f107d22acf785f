"""CuPy functions of Python numbers and what computes the same on the host (SL503's
advice). A function missing here still counts as a round trip; it only gets no name."""

from __future__ import annotations

from typing import Optional

HOST_EQUIVALENTS: dict[str, str] = {
    "ceil": "math.ceil", "floor": "math.floor", "trunc": "math.trunc", "sqrt": "math.sqrt",
    "exp": "math.exp", "log": "math.log", "log2": "math.log2", "log10": "math.log10",
    "sin": "math.sin", "cos": "math.cos", "tan": "math.tan", "arctan2": "math.atan2",
    "hypot": "math.hypot", "power": "pow", "abs": "abs", "absolute": "abs", "fabs": "math.fabs",
    "round": "round", "around": "round", "rint": "round", "maximum": "max", "minimum": "min",
    "prod": "math.prod", "sum": "sum", "floor_divide": "//", "mod": "%", "remainder": "%",
    "max": "max", "min": "min", "amax": "max", "amin": "min",
}  # fmt: skip


def host_equivalent(function: str) -> Optional[str]:
    return HOST_EQUIVALENTS.get(function)
