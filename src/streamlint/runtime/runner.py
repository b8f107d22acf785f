"""Run fixture pairs and scripts on the GPU, each variant in a subprocess of its own, and
keep what they leave as *records*: the trimmed traces and one JSON file per pair (or
script) with the static findings, the variants' status, wall times and the trial
comparison. Reports are built from records alone (report.py), so a report can be
rebuilt, and tested, without a GPU.

Records layout:

    records/run.json                      settings, machine, date, git commit
    records/<CODE>/pair.json              findings, variants, comparison
    records/<CODE>/{bad,good}.trace.json.gz
    records/script/script.json            (script mode) findings, status, arguments
    records/script/trace.json.gz
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import streamlint
from streamlint import suppression
from streamlint.checker import check_source
from streamlint.diagnostics import Diagnostic
from streamlint.rules import all_rules
from streamlint.runtime.instrument import instrument, targets_for
from streamlint.runtime.pairs import Pair
from streamlint.runtime.progress import Progress
from streamlint.runtime.verdicts import family

TAIL = 3000


@dataclass
class Settings:
    warmup: int = 2
    reps: int = 5
    traced_reps: int = 3
    trials: int = 10  # hazard pairs; other pairs run one trial (to compare results)
    timeout: float = 300.0
    params: dict = field(default_factory=dict)
    keep_raw: bool = False


def lint(path: Path) -> tuple[str, list[Diagnostic]]:
    text = path.read_text(encoding="utf-8")
    found = check_source(text, str(path), all_rules())
    return text, sorted(suppression.filter_diagnostics(found, text))


def diag_dict(d: Diagnostic) -> dict:
    return {"code": d.code, "row": d.row, "column": d.column, "end_row": d.end_row,
            "end_column": d.end_column, "message": d.message, "name": d.name}  # fmt: skip


def git_commit(where: Path) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _child_env() -> dict:
    env = os.environ.copy()
    package_root = str(Path(streamlint.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_harness(spec: dict, workdir: Path, timeout: float) -> dict:
    """Run the harness on one spec; returns the variant's status record."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec_path = workdir / "spec.json"
    spec_path.write_text(json.dumps(spec, indent=1), encoding="utf-8")
    stdout_path, stderr_path = workdir / "stdout.txt", workdir / "stderr.txt"
    cmd = [sys.executable, "-m", "streamlint.runtime.harness", str(spec_path)]
    timed_out = False
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=workdir, env=_child_env(),
                                start_new_session=True)  # fmt: skip
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the child's own process group only
            except ProcessLookupError:
                pass
            rc = proc.wait()
    meta_path = Path(spec["out"]) / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.exists() else {}
    stderr_tail = stderr_path.read_bytes()[-TAIL:].decode("utf-8", "replace")
    record = {k: v for k, v in meta.items() if k not in ("status", "error")}
    record["returncode"] = rc
    if timed_out:
        record.update(status="error", error=f"timed out after {timeout:.0f} s", stderr_tail=stderr_tail)
    elif rc != 0 or meta.get("status") != "ok":
        error = meta.get("error") or f"exited with status {rc}"
        record.update(status="error", error=str(error)[-TAIL:], stderr_tail=stderr_tail)
    else:
        record["status"] = "ok"
    return record


def _variant_spec(mode: str, original: Path, instrumented: Path, out: Path, settings: Settings,
                  trials: int, args: Sequence[str] = ()) -> dict:  # fmt: skip
    return {
        "mode": mode,
        "original": str(original.resolve()),
        "path": str(instrumented.resolve()),
        "out": str(out.resolve()),
        "args": list(args),
        "params": settings.params,
        "warmup": settings.warmup,
        "trials": trials,
        "reps": settings.reps,
        "traced_reps": settings.traced_reps,
        "keep_raw": settings.keep_raw,
    }


def run_pair(pair: Pair, settings: Settings, records: Path, work: Path, progress: Progress | None = None) -> dict:
    from streamlint.runtime.compare import compare_trials, load_result

    pair_dir = records / pair.code
    pair_dir.mkdir(parents=True, exist_ok=True)
    trials = settings.trials if family(pair.code) == "hazard" else 1
    record: dict = {"code": pair.code, "family": family(pair.code), "fixture": _display(pair.directory),
                    "findings": {}, "instrumented": {}}  # fmt: skip
    for variant, path in (("bad", pair.bad), ("good", pair.good)):
        if progress:
            progress.start(f"{pair.code} {variant}")
        text, diags = lint(path)
        record["findings"][variant] = [diag_dict(d) for d in diags]
        result = instrument(text, targets_for(diags, text.count("\n") + 1))
        record["instrumented"][variant] = {"wrapped": result.wrapped, "skipped": result.skipped}
        vdir = work / pair.code / variant
        vdir.mkdir(parents=True, exist_ok=True)
        instrumented = vdir / f"{variant}_instrumented.py"
        instrumented.write_text(result.source, encoding="utf-8")
        spec = _variant_spec("fixture", path, instrumented, vdir / "out", settings, trials)
        status = run_harness(spec, vdir, settings.timeout)
        trace = vdir / "out" / "trace.json.gz"
        if trace.exists():
            shutil.copyfile(trace, pair_dir / f"{variant}.trace.json.gz")
        record[variant] = status
        if progress:
            progress.advance(f"{pair.code} {variant}: {status['status']}")
    if record["bad"]["status"] == "ok" and record["good"]["status"] == "ok":
        results = {}
        for variant in ("bad", "good"):
            out = work / pair.code / variant / "out"
            results[variant] = [load_result(p) for p in sorted(out.glob("result_*.npz"),
                                                                key=lambda p: int(p.stem.split("_")[1]))]  # fmt: skip
        record["comparison"] = compare_trials(results["bad"], results["good"])
    (pair_dir / "pair.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    return record


def run_pairs(pairs: Sequence[Pair], settings: Settings, records: Path, commit: str | None,
              progress: Progress | None = None) -> dict:  # fmt: skip
    records.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="streamlint-verify-"))
    try:
        done = [run_pair(p, settings, records, work, progress) for p in pairs]
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if progress:
            progress.finish()
    run = _run_record(settings, commit, [d.get(v, {}) for d in done for v in ("bad", "good")])
    run["pairs"] = [p.code for p in pairs]
    (records / "run.json").write_text(json.dumps(run, indent=1), encoding="utf-8")
    return run


def run_script(script: Path, args: Sequence[str], settings: Settings, records: Path, commit: str | None,
               progress: Progress | None = None) -> dict:  # fmt: skip
    out_dir = records / "script"
    out_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="streamlint-verify-"))
    try:
        if progress:
            progress.start(f"{script.name}")
        text, diags = lint(script)
        result = instrument(text, targets_for(diags, text.count("\n") + 1))
        instrumented = work / f"instrumented_{script.name}"
        instrumented.write_text(result.source, encoding="utf-8")
        spec = _variant_spec("script", script, instrumented, work / "out", settings, 0, args)
        status = run_harness(spec, work, settings.timeout)
        trace = work / "out" / "trace.json.gz"
        if trace.exists():
            shutil.copyfile(trace, out_dir / "trace.json.gz")
        shutil.copyfile(instrumented, out_dir / "instrumented.py")
        if progress:
            progress.advance(f"{script.name}: {status['status']}")
            progress.finish()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    record = {"script": _display(script), "args": list(args), "findings": [diag_dict(d) for d in diags],
              "instrumented": {"wrapped": result.wrapped, "skipped": result.skipped}, "run": status}  # fmt: skip
    (out_dir / "script.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    run = _run_record(settings, commit, [status])
    run["script"] = record["script"]
    (records / "run.json").write_text(json.dumps(run, indent=1), encoding="utf-8")
    return record


def _run_record(settings: Settings, commit: str | None, statuses: Sequence[dict]) -> dict:
    machine: dict = {}
    for status in statuses:  # each variant saw the libraries it imported
        for key, value in (status.get("machine") or {}).items():
            machine.setdefault(key, value)
    return {
        "streamlint": streamlint.__version__,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": commit,
        "machine": machine,
        "settings": asdict(settings),
    }


def _display(path: Path) -> str:
    path = Path(path).resolve()
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()
