"""Host reads and writes of pinned NumPy buffers (CuPy's and Numba's pinned and mapped
arrays): the half of SL402/SL403 that happens on the host. NumPy lets nothing hook a
plain ndarray, so the allocators that make pinned host arrays (`cupyx.empty_pinned`,
`numba.cuda.pinned_array`, ...) return a view of the same memory as `PinnedHostArray`, an
ndarray subclass whose ufuncs, array functions, element access and conversions to Python
values are logged as `host` events before they run. Views of it stay tracked (a view is no
access); results that are new arrays are plain ndarrays.

An access through indexing that copies (fancy indexing, a scalar) is logged as touching
the array's whole span: the sanitizer cannot tell cheaply which bytes were read, so it
over-approximates (a false race needs the host and a copy on disjoint parts of one buffer).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .log_writer import array_range

# Module attribute -> allocator names that return pinned or mapped NumPy arrays.
ALLOCATORS = {
    "cupyx": ("empty_pinned", "empty_like_pinned", "zeros_pinned", "zeros_like_pinned"),
    "numba.cuda": ("pinned_array", "pinned_array_like", "mapped_array", "mapped_array_like"),
}
# ndarray methods that read every element into Python (or a new buffer) directly.
_READERS = ("item", "tolist", "tobytes", "copy", "__float__", "__int__", "__bool__", "__index__", "__iter__")
_SINK: list[Optional[Callable[..., Any]]] = [None]  # the recorder's emit while installed


def _log(name: str, reads=(), writes=()) -> None:
    emit = _SINK[0]
    if emit is None:
        return
    r = [x for x in (array_range(a) for a in reads) if x]
    w = [x for x in (array_range(a) for a in writes) if x]
    if r or w:
        emit("host", name=name, reads=r, writes=w)


def _plain(value: Any) -> Any:
    if isinstance(value, PinnedHostArray):
        return value.view(np.ndarray)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


def _tracked_in(values) -> list:
    found = []
    for v in values:
        if isinstance(v, PinnedHostArray):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            found.extend(_tracked_in(v))
    return found


class PinnedHostArray(np.ndarray):
    """A pinned (or mapped) host array whose host accesses are logged."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        outs = kwargs.get("out", ())
        _log(f"numpy.{ufunc.__name__}", reads=_tracked_in(inputs), writes=_tracked_in(outs))
        if outs:
            kwargs["out"] = _plain(tuple(outs))
        result = getattr(ufunc, method)(*_plain(inputs), **kwargs)
        return outs[0] if len(outs) == 1 and isinstance(result, np.ndarray) else result

    def __array_function__(self, func, types, args, kwargs):
        written = _tracked_in([kwargs.get("out")]) + (_tracked_in(args[:1]) if func is np.copyto else [])
        read = [a for a in _tracked_in(list(args) + list(kwargs.values())) if not any(a is w for w in written)]
        _log(f"numpy.{func.__name__}", reads=read, writes=written)
        plain_kwargs = {k: _plain(v) for k, v in kwargs.items()}
        return func(*_plain(args), **plain_kwargs)

    def __getitem__(self, key):
        result = self.view(np.ndarray)[key]
        if isinstance(result, np.ndarray) and np.shares_memory(result, self.view(np.ndarray)):
            return result.view(PinnedHostArray)  # a view: no access yet
        _log("numpy.__getitem__", reads=[self])
        return result

    def __setitem__(self, key, value):
        target = self.view(np.ndarray)[key]
        region = target if isinstance(target, np.ndarray) else self
        _log("numpy.__setitem__", reads=_tracked_in([value]), writes=[region])
        self.view(np.ndarray)[key] = _plain(value)


def _reader(name: str):
    def method(self, *args, **kwargs):
        _log(f"numpy.{name}", reads=[self])
        return getattr(self.view(np.ndarray), name)(*args, **kwargs)
    method.__name__ = name
    return method


for _name in _READERS:
    setattr(PinnedHostArray, _name, _reader(_name))


def tracked(array: Any) -> Any:
    """`array` as a PinnedHostArray (same memory), or unchanged if it is no ndarray."""
    if isinstance(array, np.ndarray) and not isinstance(array, PinnedHostArray):
        return array.view(PinnedHostArray)
    return array


class HostArrayHooks:
    """Wraps one framework's pinned allocators (a key of ALLOCATORS); undone by uninstall."""

    def __init__(self, emit: Callable[..., Any], module_name: str) -> None:
        self.emit = emit
        self.module_name = module_name
        self.undo: list[tuple[Any, str, Any]] = []

    def install(self) -> list[str]:
        import importlib

        module = importlib.import_module(self.module_name)
        _SINK[0] = self.emit
        wrapped = []
        for name in ALLOCATORS[self.module_name]:
            original = getattr(module, name, None)
            if original is None:
                continue
            self.undo.append((module, name, original))
            setattr(module, name, self._wrap(original))
            wrapped.append(f"{self.module_name}.{name}")
        return wrapped

    @staticmethod
    def _wrap(original):
        def allocator(*args, **kwargs):
            return tracked(original(*args, **kwargs))
        allocator.__name__ = getattr(original, "__name__", "allocator")
        allocator.__doc__ = getattr(original, "__doc__", None)
        return allocator

    def uninstall(self) -> None:
        for module, name, original in reversed(self.undo):
            setattr(module, name, original)
        self.undo.clear()
        _SINK[0] = None
