"""cuda-python SL401, good: the same program with s2 waiting for an event recorded on s1
after the upload."""
import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("_cuda_python_sl401_bad", Path(__file__).with_name("bad.py"))
_bad = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_bad)


def run(n: int = 1 << 20):
    return _bad.run(n, ordered=True)
