"""Make PyTorch impossible to import, as on a machine where it is not installed.

Used to check on the GPU machine (where torch is installed beside CuPy and Numba) that
CuPy-only and Numba-only programs verify without it:

    PYTHONPATH=runtime_checks/no_torch:src python -m streamlint.runtime.verify \\
        runtime_checks/examples/numba_race.py --tracer cupti

Python imports `sitecustomize` from the path at start-up, in the verify process and in
every traced process it starts (they inherit PYTHONPATH). `importlib.util.find_spec`
and `import torch` then both fail as for a missing package.
"""

import sys


class _NoTorch:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: verifying without PyTorch)", name=name)
        return None


sys.meta_path.insert(0, _NoTorch())
