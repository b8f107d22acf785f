"""One traced program, in a process of its own:

    python -m streamlint.runtime.harness SPEC.json

The runner writes SPEC.json and reads back what this writes into `spec["out"]`:
`meta.json` (status, wall times, stream markers, machine), `trace.json.gz` (the trimmed
trace) and, for fixtures, `result_<trial>.npz` (what `run()` returned, as arrays).

A fixture (mode "fixture") is imported from its instrumented copy and `run(**params)` is
called: `warmup` times untraced, `trials` times untraced keeping each result, `reps`
times untraced and timed by the wall clock, then `traced_reps` times under the tracer,
each inside a `streamlint::rep::<k>` range. A script (mode "script") runs once, as
`__main__`, under the tracer, with `sys.argv` set to its arguments; with
`spec["delay"]` (provoke.py) a spin kernel (or a host wait) is queued before the
statement of that label, inside a `streamlint::spin::<handle>` range.

The tracer is `spec["tracer"]` (backends.py): the PyTorch profiler, or CUPTI without
PyTorch.
"""

from __future__ import annotations

import builtins
import importlib.util
import inspect
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from streamlint.runtime import backends
from streamlint.runtime import trace as trace_io
from streamlint.runtime.labels import rep_name
from streamlint.runtime.provoke import SPIN_MS, delay_for, spin_name

EXIT_OK, EXIT_FAILED, EXIT_NO_GPU = 0, 1, 3


def prepare_numpy() -> None:
    """numba-cuda 0.30 still calls numpy.row_stack, which NumPy 2.5 removed."""
    import numpy

    if not hasattr(numpy, "row_stack"):
        numpy.row_stack = numpy.vstack


def preimport(source: str) -> None:
    """Import the frameworks the program names, so their stream classes can be hooked
    before the program creates any stream."""
    for word, module in (("torch", "torch"), ("cupy", "cupy"), ("numba", "numba.cuda")):
        if word in source:
            try:
                importlib.import_module(module)
            except Exception:
                pass


def current_handle() -> int:
    """The stream the program's current library would use now: CuPy's current stream
    inside `with stream:`, else PyTorch's current stream, else the legacy default."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        ptr = cupy.cuda.get_current_stream().ptr
        if ptr:
            return ptr
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return torch.cuda.current_stream().cuda_stream
    return 0


def stream_handle(expression: str | None, frame) -> int:
    """The handle of the stream named `expression` (`s1`, `self.copy_stream`) in the
    statement's own frame; the current stream when it names none or cannot be evaluated."""
    from streamlint.runtime.hooks import handle_of

    if expression and frame is not None:
        try:
            handle = handle_of(eval(expression, frame.f_globals, frame.f_locals))
        except Exception:  # the name is not what the message said here
            handle = None
        if handle is not None:
            return handle
    return current_handle()


def install_probes(backend: Any, delay: dict | None = None, markers: Any = None) -> None:
    """The names instrumented code calls (instrument.py); builtins, so that the traced
    file needs no import of its own. With a delay (provoke.py), the statement of its
    label is preceded by a spin kernel on the delay's stream (or a host wait)."""
    record = backend.range
    delay = delay or {}
    at, stream_at = delay.get("at"), delay.get("stream_at")
    sizes = delay.get("ms", SPIN_MS)  # one for all executions, or one per execution
    remembered: list[int] = []  # the stream current where the delay's stream is taken
    executions = [0]
    preloading = list(delay.get("preload") or [])

    def delay_here(frame) -> None:
        if preloading:  # compile and load the program's kernels before the spin (preload.py)
            from streamlint.runtime.preload import preload

            with record("streamlint::preload"):
                preload(preloading, dict(frame.f_globals, **frame.f_locals))
            preloading.clear()
        ms = delay_for(sizes, executions[0])
        executions[0] += 1
        if delay.get("host"):
            time.sleep(ms / 1e3)
            return
        if delay.get("stream") is None and remembered:
            handle = remembered[-1]
        else:
            handle = stream_handle(delay.get("stream"), frame)
        quiet = markers.quiet() if markers is not None else backends.nothing()
        with quiet, record(spin_name(handle)):
            backend.spin(handle, ms)

    def probe(label: str) -> None:
        if label == stream_at:
            remembered.append(current_handle())
        if label == at:
            delay_here(sys._getframe(2))  # the frame of the instrumented statement

    def rf(label: str):
        probe(label)
        return record(label)

    def call(label: str, thunk):
        probe(label)
        with record(label):
            return thunk()

    def truth(label: str, thunk) -> bool:
        probe(label)
        with record(label):
            return bool(thunk())

    builtins._streamlint_rf = rf  # type: ignore[attr-defined]
    builtins._streamlint_call = call  # type: ignore[attr-defined]
    builtins._streamlint_truth = truth  # type: ignore[attr-defined]


def to_arrays(value: Any) -> list:
    """A result as a list of NumPy arrays (device arrays copied to the host)."""
    import numpy as np

    module = type(value).__module__.split(".")[0]
    if value is None:
        return []
    if module == "torch":
        return [value.detach().cpu().numpy()]
    if module == "cupy":
        return [value.get()]
    if hasattr(value, "copy_to_host"):
        return [value.copy_to_host()]
    if isinstance(value, np.ndarray):
        return [np.array(value)]
    if isinstance(value, (int, float, bool, np.number)):
        return [np.asarray(value)]
    if isinstance(value, dict):
        return [a for k in sorted(value) for a in to_arrays(value[k])]
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, (int, float, bool, np.number)) for v in value):
            return [np.asarray(value)]
        return [a for v in value for a in to_arrays(v)]
    return [np.asarray(value)]


def save_result(value: Any, path: Path) -> None:
    import numpy as np

    arrays = to_arrays(value)
    np.savez(path, **{f"a_{i}": a for i, a in enumerate(arrays)})


def load_fixture(path: str):
    spec = importlib.util.spec_from_file_location("streamlint_runtime_target", path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def accepted(fn, params: dict) -> dict:
    names = inspect.signature(fn).parameters
    return {k: v for k, v in params.items() if k in names}


def run_fixture(backend: Any, spec: dict, out: Path, markers, meta: dict) -> None:
    module = load_fixture(spec["path"])
    params = accepted(module.run, spec.get("params", {}))
    meta["params"] = params

    def call():
        value = module.run(**params)
        backend.synchronize()
        return value

    for _ in range(spec.get("warmup", 2)):
        call()
    for t in range(spec.get("trials", 1)):
        save_result(call(), out / f"result_{t}.npz")
    walls = []
    for _ in range(spec.get("reps", 5)):
        backend.synchronize()
        t0 = time.perf_counter()
        call()
        walls.append((time.perf_counter() - t0) * 1e3)
    meta["wall_ms"] = walls
    raw = out / "raw_trace.json"
    with backend.tracing(raw, _raw_records(spec, out)):
        markers.start_trace()
        for k in range(spec.get("traced_reps", 3)):
            with backend.range(rep_name(k)):
                markers.mark_defaults()
                module.run(**params)
            backend.synchronize()
        markers.stop_trace()
    finish_trace(raw, out, spec)


def _raw_records(spec: dict, out: Path) -> Path | None:
    """Where the CUPTI tracer keeps its raw activity records (test data), if asked."""
    return out / "cupti_records.json.gz" if spec.get("keep_raw") else None


def run_script(backend: Any, spec: dict, out: Path, markers, meta: dict) -> None:
    original = spec["original"]
    source = Path(spec["path"]).read_text(encoding="utf-8")
    code = compile(source, original, "exec")  # the user's path and lines in tracebacks
    sys.argv = [original, *spec.get("args", [])]
    sys.path.insert(0, str(Path(original).resolve().parent))
    scope = {"__name__": "__main__", "__file__": original, "__builtins__": builtins}
    raw = out / "raw_trace.json"
    t0 = time.perf_counter()
    try:
        with backend.tracing(raw, _raw_records(spec, out)):
            markers.start_trace()
            with backend.range(rep_name(0)):
                markers.mark_defaults()
                try:
                    exec(code, scope)
                except SystemExit as stop:
                    if stop.code not in (None, 0):
                        raise
            markers.stop_trace()
    finally:
        meta["wall_ms"] = [(time.perf_counter() - t0) * 1e3]
        from streamlint.runtime.preload import signatures

        meta["numba_kernels"] = signatures(scope)  # for the provoked runs to load first
        if raw.exists():
            finish_trace(raw, out, spec)


def finish_trace(raw: Path, out: Path, spec: dict) -> None:
    data = trace_io.read_json(raw)
    trace_io.write_json(trace_io.trim(data), out / "trace.json.gz")
    if not spec.get("keep_raw"):
        raw.unlink()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    out = Path(spec["out"])
    out.mkdir(parents=True, exist_ok=True)
    meta: dict = {"status": "running", "mode": spec["mode"]}

    def save(status: str) -> None:
        meta["status"] = status
        (out / "meta.json").write_text(json.dumps(meta, indent=1, default=str), encoding="utf-8")

    meta["machine"] = backends.gpu_query()  # known whatever happens next
    try:
        backend = backends.choose(spec.get("tracer"))
    except ImportError as err:
        meta["error"] = f"the {spec.get('tracer') or 'default'} tracer cannot be loaded: {err}"
        save("error")
        return EXIT_NO_GPU
    problem = backend.gpu_ready()
    if problem is not None:
        meta["error"] = problem
        save("error")
        return EXIT_NO_GPU
    prepare_numpy()
    source = Path(spec["path"]).read_text(encoding="utf-8")
    preimport(source)
    from streamlint.runtime.hooks import StreamMarkers

    traced_file = spec["original"] if spec["mode"] == "script" else spec["path"]
    markers = StreamMarkers(backend, traced_file)
    meta["hooks"] = markers.install()
    install_probes(backend, spec.get("delay"), markers)
    if spec.get("delay"):
        from streamlint.runtime import spin

        spin.warm_up()  # its compile and load are not the program's
    try:
        if spec["mode"] == "fixture":
            run_fixture(backend, spec, out, markers, meta)
        else:
            run_script(backend, spec, out, markers, meta)
    except BaseException:
        meta["error"] = traceback.format_exc()[-4000:]
        meta["streams_created"] = markers.created
        meta["machine"] = _machine(backend, meta)
        save("error")
        sys.stderr.write(meta["error"])
        return EXIT_FAILED
    meta["streams_created"] = markers.created[:200]
    meta["machine"] = _machine(backend, meta)
    save("ok")
    return EXIT_OK


def _machine(backend: Any, meta: dict) -> dict:
    try:
        return backend.machine_info()
    except Exception:
        return meta.get("machine") or {}


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
