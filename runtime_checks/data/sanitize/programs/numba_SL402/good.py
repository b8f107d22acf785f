"""Numba SL402, good: the same program with s1 waiting for an event recorded on s2 after
the read."""
import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("_numba_sl402_bad", Path(__file__).with_name("bad.py"))
_bad = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_bad)


def run(n: int = 1 << 16, rounds: int = 2000):
    return _bad.run(n, rounds, ordered=True)
