"""Numba SL403, good: the same program with the host waiting for stream s before it
reads the pinned array."""
import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("_numba_sl403_bad", Path(__file__).with_name("bad.py"))
_bad = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_bad)


def run(n: int = 1 << 16, rounds: int = 2000):
    return _bad.run(n, rounds, synchronized=True)
