"""CuPy functions of Python numbers and what computes the same on the host (SL503's
advice). A function missing here still counts as a round trip; it only gets no name."""

from __future__ import annotations

HOST_EQUIVALENTS: dict[str, str] = {
    "ceil": "math.ceil", "floor": "math.floor", "trunc": "math.trunc", "sqrt": "math.sqrt",
    "exp": "math.exp", "log": "math.log", "log2": "math.log2", "log10": "math.log10",
    "sin": "math.sin", "cos": "math.cos", "tan": "math.tan", "arctan2": "math.atan2",
    "hypot": "math.hypot", "power": "pow", "abs": "abs", "absolute": "abs", "fabs": "math.fabs",
    "round": "round", "around": "round", "rint": "round", "maximum": "max", "minimum": "min",
    "prod": "math.prod", "sum": "sum", "floor_divide": "//", "mod": "%", "remainder": "%",
    "max": "max", "min": "min", "amax": "max", "amin": "min",
}  # fmt: skip

# Attributes of arrays and tensors that are Python numbers (or tuples of them) on the host.
NUMBER_ATTRIBUTES = frozenset({"shape", "ndim", "size", "itemsize", "nbytes"})
# Attributes among them that are tuples of numbers (one per dimension).
NUMBER_TUPLE_ATTRIBUTES = frozenset({"shape"})
# Allocations and reshapes whose first argument, a list or tuple, holds host numbers (the sizes).
SHAPE_TAKERS = frozenset({"zeros", "empty", "ones", "full", "reshape", "view", "zeros_like", "empty_like",
                          "ones_like", "full_like", "random", "rand", "randn", "arange", "linspace"})
# Builtins that convert one value to a Python scalar: of device memory, the host reads it back.
SCALAR_CONVERSIONS = frozenset({"int", "float", "bool", "complex"})
# Of those, the ones that give an address back unchanged (`int(t.data_ptr())`: the same number).
ADDRESS_KEEPING = frozenset({"int"})
# Builtins that format their arguments for the host: a device array among them is read back. The
# syntax that formats (`f"{t}"`, `"%s" % t`) is named as the operation it is, in words.
FORMATTING_READERS = frozenset({"print", "str", "repr", "format"})
F_STRING = "an f-string"
PERCENT_FORMATTING = "string formatting"
# Builtins whose result is a sequence of host numbers (`range(n)`: its loop counter).
NUMBER_SEQUENCES = frozenset({"range"})
