"""NumPy: what makes a host array, and whether its memory is pageable or pinned."""

from __future__ import annotations

# The framework of a host array in the abstract state.
FRAMEWORK = "numpy"

# numpy.<name>(...) returns a new pageable host array.
PAGEABLE_CREATORS = frozenset({
    "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "array", "eye", "identity", "zeros_like",
    "ones_like", "empty_like", "full_like", "concatenate", "stack", "vstack", "hstack", "copy", "fromfile", "load",
    "loadtxt", "tile", "meshgrid", "random.rand", "random.randn", "random.random", "random.randint", "random.uniform",
    "random.normal", "random.standard_normal", "random.random_sample", "ascontiguousarray",
    # index arrays: picked, shuffled or sorted positions
    "random.choice", "random.permutation", "argsort", "flatnonzero",
})
# Creators whose first argument is the shape (an int, or a tuple with one size per dimension).
SHAPE_FIRST = frozenset({"zeros", "ones", "empty", "full"})
# numpy.<name>(x, ...) views or wraps x's memory (a pinned buffer stays pinned).
SAME_MEMORY = frozenset({"frombuffer", "asarray", "asanyarray", "reshape", "ravel", "ctypeslib.as_array"})

# numpy.random.<name>(...) returns a scalar unless given a size: the positional arguments before it.
SCALAR_WITHOUT_SIZE = {
    "random.randint": 2, "random.uniform": 2, "random.normal": 2, "random.rand": 0, "random.randn": 0,
    "random.random": 0, "random.random_sample": 0, "random.standard_normal": 0, "random.choice": 1,
}

# Methods of a host array that give a view of its memory (a page-locked array's view is page-locked): `reshape` and
# `ravel` copy only an array that is not contiguous, which the views made to be registered or copied from are not.
VIEW_METHODS = frozenset({"reshape", "ravel", "view", "transpose", "swapaxes", "squeeze"})
# Attributes of a host array that are its memory under another name (`a.ctypes.data`).
SAME_MEMORY_ATTRIBUTES = frozenset({"ctypes"})
# Methods and functions that write the host array they are given first (the rest read).
WRITING_METHODS = frozenset({"fill", "put", "itemset", "resize", "sort", "partition", "setfield"})
WRITING_FUNCTIONS = frozenset({"numpy.copyto", "numpy.put", "numpy.place", "numpy.putmask", "numpy.fill_diagonal"})
