"""The recorders' shared half: the growing event log, the program's frames, byte ranges."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path
from typing import Any, Optional

from ..log import Event, Range

_STDLIB = sysconfig.get_paths()["stdlib"]
_OURS = str(Path(__file__).resolve().parents[1])
STACK_DEPTH = 3


def _is_program_frame(filename: str) -> bool:
    if filename.startswith("<") or filename.startswith(_OURS):
        return False
    if "site-packages" in filename or "dist-packages" in filename:
        return False
    return not filename.startswith(_STDLIB)


class Recorder:
    """The log of one run. `root`: frames are named relative to it (stable across machines)."""

    def __init__(self, root: Optional[Path] = None) -> None:
        self.events: list[Event] = []
        self.root = str(root.resolve()) if root else None
        self.streams: set = set()
        self.installed: dict[str, bool] = {}
        self.problems: list[str] = []
        self.enabled = True

    def stack(self) -> list[str]:
        frames = []
        frame = sys._getframe(1)
        while frame is not None and len(frames) < STACK_DEPTH:
            name = frame.f_code.co_filename
            if _is_program_frame(name):
                if self.root and os.path.abspath(name).startswith(self.root + os.sep):
                    name = os.path.relpath(name, self.root)
                else:
                    name = os.path.basename(name)
                frames.append(f"{name}:{frame.f_lineno} in {frame.f_code.co_name}")
            frame = frame.f_back
        return frames[::-1]

    def emit(self, kind: str, **fields: Any) -> Optional[Event]:
        if not self.enabled:
            return None
        if kind in ("launch", "copy", "memset", "host", "free", "sync") and "stack" not in fields:
            fields["stack"] = self.stack()
        event = Event(kind, **fields)
        self.events.append(event)
        return event

    def stream(self, key: int, blocking: bool) -> int:
        """Note a stream once, with whether it synchronizes with the legacy default stream."""
        if key not in self.streams and key != 0:
            self.streams.add(key)
            self.emit("stream", stream=key, blocking=blocking)
        return key


def extent(ptr: int, shape, strides, itemsize: int) -> Optional[Range]:
    """The bytes an array with this layout spans (strides in bytes; None: C-contiguous)."""
    n = 1
    for s in shape:
        n *= int(s)
    if n == 0 or not ptr:
        return None
    if strides is None:
        return (int(ptr), n * itemsize)
    lo = hi = 0
    for s, st in zip(shape, strides):
        span = (int(s) - 1) * int(st)
        if span < 0:
            lo += span
        else:
            hi += span
    return (int(ptr) + lo, hi - lo + itemsize)


def array_range(obj: Any) -> Optional[Range]:
    """Bytes of an object with `__cuda_array_interface__` or `__array_interface__`."""
    for attr in ("__cuda_array_interface__", "__array_interface__"):
        try:
            iface = getattr(obj, attr)
        except Exception:  # e.g. a CuPy array refusing __array_interface__
            continue
        if not isinstance(iface, dict):
            continue
        itemsize = int(iface["typestr"][2:])
        return extent(iface["data"][0], iface["shape"], iface.get("strides"), itemsize)
    return None


def is_pinned_numpy(obj: Any) -> bool:
    """A NumPy array whose buffer came from a pinned allocation (CuPy's pinned pool or
    Numba's pinned_array): the buffer's owner chain names pinned or mapped memory."""
    seen = 0
    base = getattr(obj, "base", None)
    while base is not None and seen < 8:
        name = type(base).__name__.lower()
        if "pinned" in name or "mapped" in name:
            return True
        base = getattr(base, "base", None) or getattr(base, "mem", None) if not isinstance(base, memoryview) else None
        seen += 1
    return False
