"""What the harness needs from a tracer, behind one interface: open a named range, trace
a block into a Chrome trace file, synchronize the device, issue a stream marker, delay a
stream on purpose (provoking races), and describe the machine.

- `TorchBackend`: the PyTorch profiler (Kineto over CUPTI); ranges are `record_function`.
- `CuptiBackend`: CUPTI's activity API through `cupti-python`, no PyTorch needed; ranges
  are timed on CUPTI's clock; markers and the device-wide sync go through cuda-bindings
  (`cuda.bindings.runtime`, which cupti-python itself needs).

`choose(requested)` picks one: the requested tracer, else torch when it is installed,
else CUPTI. Everything here runs inside the traced process only.
"""

from __future__ import annotations

import importlib.util
import platform
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from streamlint.runtime import spin as spin_mod

TRACERS = ("torch", "cupti")


def installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package missing, or an import blocker
        return False


def default_tracer() -> str:
    """torch when it is installed, else cupti (the `--tracer` default)."""
    return "torch" if installed("torch") else "cupti"


def gpu_query() -> dict:
    """GPU name and driver from nvidia-smi: known even when the program (or torch) fails."""
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return {}
    if smi.returncode != 0 or not smi.stdout.strip():
        return {}
    name, _, driver = smi.stdout.strip().splitlines()[0].partition(",")
    out = {"gpu": name.strip()}
    if driver.strip():
        out["driver"] = driver.strip()
    return out


def _library_versions() -> dict:
    info = {}
    for name in ("numpy", "cupy", "numba", "numba_cuda", "torch", "libcst"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "__version__"):
            info[name] = str(module.__version__)
    try:
        from importlib.metadata import version

        info["cupti_python"] = version("cupti-python")
    except Exception:
        pass
    return info


class Backend:
    name = ""

    def range(self, name: str):  # a context manager
        raise NotImplementedError

    def tracing(self, path: Path, raw_path: Path | None = None):  # a context manager
        raise NotImplementedError

    def synchronize(self) -> None:
        raise NotImplementedError

    def issue_marker(self, handle: int) -> None:
        raise NotImplementedError

    def gpu_ready(self) -> str | None:
        """Why no GPU can be used, or None."""
        return None

    def machine_info(self) -> dict:
        info = {"python": platform.python_version(), "platform": platform.platform(), "tracer": self.name}
        info.update(gpu_query())
        info.update(_library_versions())
        return info

    def spin(self, handle: int, ms: float) -> None:
        """Keep stream `handle` busy for about `ms` milliseconds, asynchronously."""
        spin_mod.spin(handle, ms)


class TorchBackend(Backend):
    name = "torch"

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self._buf = None

    def gpu_ready(self) -> str | None:
        return None if self.torch.cuda.is_available() else "PyTorch sees no CUDA GPU"

    def range(self, name: str):
        return self.torch.profiler.record_function(name)

    def tracing(self, path: Path, raw_path: Path | None = None):
        from streamlint.runtime.capture import tracing

        return tracing(self.torch, path)

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()

    def issue_marker(self, handle: int) -> None:
        torch = self.torch
        if self._buf is None:
            self._buf = torch.zeros(1, device="cuda")
        stream = torch.cuda.default_stream() if handle == 0 else torch.cuda.ExternalStream(handle)
        with torch.cuda.stream(stream):
            self._buf.add_(1.0)

    def machine_info(self) -> dict:
        info = super().machine_info()
        info.setdefault("gpu", self.torch.cuda.get_device_name(0))
        info["torch"] = self.torch.__version__
        info["cuda_runtime"] = self.torch.version.cuda
        return info


class CuptiBackend(Backend):
    name = "cupti"

    def __init__(self) -> None:
        from cuda.bindings import runtime as cudart

        from streamlint.runtime.capture_cupti import CuptiCapture

        self.cudart = cudart
        self.capture = CuptiCapture()
        self._buf = None

    def _check(self, result) -> Any:
        err = result[0] if isinstance(result, tuple) else result
        if int(err) != 0:
            raise RuntimeError(f"CUDA runtime error {err}")
        return result[1] if isinstance(result, tuple) and len(result) > 1 else None

    def gpu_ready(self) -> str | None:
        try:
            count = self._check(self.cudart.cudaGetDeviceCount())
            self._check(self.cudart.cudaFree(0))  # create the primary context, shared with CuPy and Numba
        except Exception as err:
            return f"no CUDA GPU: {err}"
        return None if count else "no CUDA GPU"

    def range(self, name: str):
        return self.capture.range(name)

    def tracing(self, path: Path, raw_path: Path | None = None):
        from streamlint.runtime.capture_cupti import tracing

        return tracing(self.capture, path, raw_path, synchronize=self.synchronize)

    def synchronize(self) -> None:
        self._check(self.cudart.cudaDeviceSynchronize())

    def issue_marker(self, handle: int) -> None:
        # a 4-byte memset is a GPU op on that stream, whatever library made the stream
        if self._buf is None:
            self._buf = self._check(self.cudart.cudaMalloc(4))
        self._check(self.cudart.cudaMemsetAsync(self._buf, 0, 4, self.cudart.cudaStream_t(handle)))

    def machine_info(self) -> dict:
        info = super().machine_info()
        try:
            version = self._check(self.cudart.cudaRuntimeGetVersion())
            info["cuda_runtime"] = f"{version // 1000}.{version % 1000 // 10}"
        except Exception:
            pass
        return info


def choose(requested: str | None) -> Backend:
    name = requested or default_tracer()
    if name == "torch":
        return TorchBackend()
    if name == "cupti":
        return CuptiBackend()
    raise ValueError(f"unknown tracer {name!r} (one of {', '.join(TRACERS)})")


@contextmanager
def nothing() -> Iterator[None]:
    yield
