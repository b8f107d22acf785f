"""Run a program under the recorders, check its log, report: `streamlint verify --sanitize`.

    streamlint verify --sanitize script.py [-- ARGS...]      run a script as __main__
    streamlint verify --sanitize fixtures/SL401/runtime/bad.py [--param n=1024]
                                                             call a fixture variant's run()
    streamlint verify --sanitize run.jsonl[.gz]              check a recorded log (no GPU)
    --sanitize-log FILE                                      keep the recorded log

A framework's hooks are installed when the program's text, or a module beside it, names it
(importing a framework the program does not use costs seconds and may fail). Exit codes: 0 no race on the
executed path, 1 races found (or the program failed), 2 usage or nothing to record with.
"""

from __future__ import annotations

import argparse
import importlib.util
import runpy
import sys
from collections import Counter
from pathlib import Path
from typing import Optional, Sequence, TextIO

from . import log
from .checker import Finding, check
from .record.log_writer import Recorder

EXIT_CLEAN, EXIT_RACES, EXIT_UNAVAILABLE = 0, 1, 2

# Framework -> (words in the program's text that name it, module to import, recorder).
FRAMEWORKS = {
    "torch": (("torch",), "torch", "torch_recorder.TorchRecorder"),
    "cupy": (("cupy",), "cupy", "cupy_recorder.CupyRecorder"),
    "numba": (("numba",), "numba.cuda", "numba_recorder.NumbaRecorder"),
    "cuda-python": (("cuda.bindings", "from cuda import"), "cuda.bindings.driver", "driver_recorder.DriverRecorder"),
}  # fmt: skip


def add_sanitize_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sanitize", action="store_true",
                        help="run PROGRAM (a script, a fixture variant, or a recorded .jsonl log) under the stream "
                        "sanitizer: every launch, copy, allocation and sync with the bytes it touches, checked "
                        "for unordered cross-stream and host accesses (SL401-SL404)")
    parser.add_argument("--sanitize-log", type=Path, metavar="FILE", help="with --sanitize: write the event log here")  # fmt: skip


def frameworks_named(text: str) -> list[str]:
    return [name for name, (words, _, _) in FRAMEWORKS.items() if any(w in text for w in words)]


def install(recorder: Recorder, names: Sequence[str]) -> list:
    installed = []
    for name in names:
        _, module, path = FRAMEWORKS[name]
        try:
            if importlib.util.find_spec(module.split(".")[0]) is None:
                recorder.installed[name] = False
                continue
            importlib.import_module(module)
            mod_name, cls_name = path.split(".")
            cls = getattr(importlib.import_module(f"{__package__}.record.{mod_name}"), cls_name)
            hooks = cls(recorder)
            recorder.installed[name] = hooks.install()
            installed.append(hooks)
        except Exception as bad:  # a framework that cannot be hooked is reported, not fatal
            recorder.installed[name] = False
            recorder.problems.append(f"{name}: hooks not installed: {bad!r}")
    return installed


def _is_variant(path: Path, text: str) -> bool:
    return "\ndef run(" in text and path.name in ("bad.py", "good.py")


def record_program(path: Path, argv: Sequence[str] = (), params: Optional[dict] = None,
                   root: Optional[Path] = None) -> Recorder:
    """Run the program with every hook its frameworks allow; the recorder holds the log."""
    text = path.read_text()
    recorder = Recorder(root or Path.cwd())
    # The modules beside the program count too: it may import its GPU code from them.
    beside = "".join(p.read_text(errors="replace") for p in sorted(path.parent.glob("*.py")) if p != path)
    hooks = install(recorder, frameworks_named(text + beside))
    old_argv = sys.argv
    try:
        if _is_variant(path, text):
            spec = importlib.util.spec_from_file_location(f"_sanitized_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            module.run(**(params or {}))
        else:
            sys.argv = [str(path), *argv]
            runpy.run_path(str(path), run_name="__main__")
    finally:
        sys.argv = old_argv
        recorder.enabled = False
        for h in reversed(hooks):
            try:
                h.uninstall()
            except Exception as bad:
                recorder.problems.append(f"uninstall: {bad!r}")
    return recorder


def grouped(findings: Sequence[Finding]) -> list[tuple[Finding, int]]:
    """One finding per code and pair of stacks, with how many more repeat it (a loop's
    iterations race the same way)."""
    first: dict[tuple, list] = {}
    for f in findings:
        key = (f.code, f.current.stack, f.earlier.stack, f.freed_at)
        if key in first:
            first[key][1] += 1
        else:
            first[key] = [f, 0]
    return [(f, n) for f, n in first.values()]


def summary(events: Sequence[log.Event], findings: Sequence[Finding]) -> str:
    kinds = Counter(e.kind for e in events)
    seen = ", ".join(f"{kinds[k]} {k}" for k in ("launch", "copy", "memset", "host", "alloc", "free", "sync")
                     if kinds[k])  # fmt: skip
    if not findings:
        return f"no race on the executed path ({seen or 'nothing recorded'})"
    codes = Counter(f.code for f in findings)
    return f"{len(findings)} race(s): " + ", ".join(f"{n} {c}" for c, n in sorted(codes.items())) + f" ({seen})"


def run_sanitize(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    items = [p for p in (args.paths or [])]
    if not items:
        err.write("streamlint verify --sanitize: name a program (a script, a fixture variant or a .jsonl log)\n")
        return EXIT_UNAVAILABLE
    program, rest = Path(items[0]), [a for a in items[1:] if a != "--"]
    if not program.is_file():
        err.write(f"streamlint verify --sanitize: no such file: {program}\n")
        return EXIT_UNAVAILABLE
    if program.name.endswith((".jsonl", ".jsonl.gz")):
        events = log.read(program)
    else:
        from streamlint.runtime.verify import parse_params

        try:
            params = parse_params(getattr(args, "param", []) or [])
        except ValueError as bad:
            err.write(f"streamlint verify --sanitize: {bad}\n")
            return EXIT_UNAVAILABLE
        try:
            recorder = record_program(program, rest, params)
        except Exception as bad:
            err.write(f"streamlint verify --sanitize: {program} failed: {bad!r}\n")
            return EXIT_RACES
        events = recorder.events
        hooks = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in recorder.installed.items())
        out.write(f"hooks: {hooks or 'none (the program names no GPU framework)'}\n")
        for problem in recorder.problems[:10]:
            out.write(f"recorder problem: {problem}\n")
        if getattr(args, "sanitize_log", None):
            log.write(args.sanitize_log, events)
    findings = check(events)
    for f, repeats in grouped(findings):
        out.write(f.describe() + "\n")
        if repeats:
            out.write(f"  (and {repeats} more at the same lines: a loop)\n")
    out.write(f"{program}: {summary(events, findings)}\n")
    return EXIT_RACES if findings else EXIT_CLEAN
