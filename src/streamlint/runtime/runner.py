"""Run fixture pairs and scripts on the GPU, each variant in a subprocess of its own, and
keep what they leave as *records*: the trimmed traces and one JSON file per pair (or
script) with the static findings, the variants' status, wall times and the trial
comparison. Reports are built from records alone (report.py), so a report can be
rebuilt, and tested, without a GPU.

Records layout:

    records/run.json                      settings, machine, date, git commit
    records/<CODE>/pair.json              findings, variants, comparison
    records/<CODE>/{bad,good}.trace.json.gz
    records/script/script.json            (script mode) findings, status, arguments, provoked runs
    records/script/trace.json.gz
    records/script/{stdout,stderr}.txt    what the script printed
    records/script/provoke/<label>-<side><k>.trace.json.gz   each provoked / control run
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
from streamlint.checker import check_source
from streamlint.diagnostics import Diagnostic
from streamlint.rules import all_rules
from streamlint.runtime.instrument import instrument, targets_for
from streamlint.runtime.pairs import Pair
from streamlint.runtime.progress import Progress
from streamlint.runtime.verdicts import family
from streamlint.suppression.comments import filter_diagnostics

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
    tracer: str | None = None  # torch | cupti; None: torch if installed, else cupti
    provoke: bool = True  # script mode: provoke each hazard finding (provoke.py)
    provoke_runs: int = 3  # provoked runs per hazard finding (plus the control runs)
    control_runs: int = 2  # two, so that a program whose output varies by itself is seen to
    # Script runs load every kernel of a module when the module is loaded (a JIT compile's
    # end), not at its first launch: a lazy load waits for the work already queued on the
    # device, so a delayed producer's first launch would wait out its own delay, and the
    # consumer's first launch would wait for the producer (ordered by the loader, not by
    # the program). "" keeps the driver's default.
    module_loading: str = "EAGER"
    rerun_flaky: int = 1  # pairs: runs again before a "not confirmed"
    host_bound_reps: int = 15  # timed calls for pairs judged on the wall clock (SL303)


def lint(path: Path) -> tuple[str, list[Diagnostic]]:
    text = path.read_text(encoding="utf-8")
    found = check_source(text, str(path), all_rules())
    return text, sorted(filter_diagnostics(found, text))


def diag_dict(d: Diagnostic) -> dict:
    return {"code": d.code, "row": d.row, "column": d.column, "end_row": d.end_row,
            "end_column": d.end_column, "message": d.message, "name": d.name}  # fmt: skip


def git_commit(where: Path) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def streamlint_commit() -> str | None:
    """The commit of streamlint's own checkout (the report header names the tool that
    judged, not whatever repository encloses the script); None when streamlint is not
    run from a git checkout of itself (an installed wheel)."""
    package = Path(streamlint.__file__).resolve().parent
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=package, capture_output=True, text=True,
                             timeout=20)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    root = Path(top.stdout.strip()) if top.returncode == 0 and top.stdout.strip() else None
    if root is None or package not in (root / "src" / "streamlint", root / "streamlint"):
        return None
    return git_commit(package)


def _child_env(extra: dict | None = None) -> dict:
    env = os.environ.copy()
    env.update(extra or {})
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
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=workdir, env=_child_env(spec.get("env")),
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
        "tracer": settings.tracer,
    }


def run_pair(pair: Pair, settings: Settings, records: Path, work: Path, progress: Progress | None = None) -> dict:
    from streamlint.runtime.compare import compare_trials, load_result

    pair_dir = records / pair.code
    pair_dir.mkdir(parents=True, exist_ok=True)
    trials = settings.trials if family(pair.code) == "hazard" else 1
    host_bound = family(pair.code) in HOST_BOUND
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
        if host_bound:  # decided on the untraced wall clock: enough calls for a median and a spread
            spec["reps"] = max(settings.reps, settings.host_bound_reps)
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


HOST_BOUND = {"pin-on-the-fly"}


def _verdict_of(records: Path, code: str) -> str:
    from streamlint.runtime.report import analyse_pair

    try:
        return analyse_pair(records / code)["verdict"]
    except Exception:  # judged again when the report is built
        return "error"


def run_pair_robustly(pair: Pair, settings: Settings, records: Path, work: Path,
                      progress: Progress | None = None) -> dict:  # fmt: skip
    """Run a pair; a pair that ran but was not confirmed runs again (up to
    `rerun_flaky` times) before that verdict stands: timing verdicts on a shared machine
    flip now and then. Every attempt's verdict is recorded."""
    record = run_pair(pair, settings, records, work, progress)
    attempts = [_verdict_of(records, pair.code)]
    while attempts[-1] == "not confirmed" and len(attempts) <= settings.rerun_flaky:
        if progress:
            progress.total += 2
        record = run_pair(pair, settings, records, work, progress)
        attempts.append(_verdict_of(records, pair.code))
    record["attempts"] = attempts
    (records / pair.code / "pair.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    return record


def run_pairs(pairs: Sequence[Pair], settings: Settings, records: Path, commit: str | None,
              progress: Progress | None = None) -> dict:  # fmt: skip
    records.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="streamlint-verify-"))
    try:
        done = [run_pair_robustly(p, settings, records, work, progress) for p in pairs]
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if progress:
            progress.finish()
    run = _run_record(settings, commit, [d.get(v, {}) for d in done for v in ("bad", "good")])
    run["pairs"] = [p.code for p in pairs]
    (records / "run.json").write_text(json.dumps(run, indent=1), encoding="utf-8")
    return run


def run_script(script: Path, args: Sequence[str], settings: Settings, records: Path, commit: str | None,
               progress: Progress | None = None, selectors: Sequence[str] = ()) -> dict:  # fmt: skip
    """The script once, traced; then, for each hazard finding (with `provoke`), the
    provoked runs and the control runs (provoke.py), each traced."""
    from streamlint.runtime.evidence import Evidence
    from streamlint.runtime.pairs import matches
    from streamlint.runtime.provoke import SPIN_MS, launch_gaps, plan, sized_delays
    from streamlint.runtime.trace import load

    out_dir = records / "script"
    out_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="streamlint-verify-"))
    text, diags = lint(script)
    diags = [d for d in diags if not selectors or matches(d.code, selectors)]
    plans = {f"{d.code}:{d.row}": plan(d.code, d.row, d.message) for d in diags} if settings.provoke else {}
    plans = {label: p for label, p in plans.items() if p is not None}
    runs = 1 + len(plans) * (settings.provoke_runs + settings.control_runs)
    if progress:
        progress.total = runs
    provoked: dict[str, dict] = {}
    try:
        result = instrument(text, targets_for(diags, text.count("\n") + 1))
        instrumented = work / f"instrumented_{script.name}"
        instrumented.write_text(result.source, encoding="utf-8")
        shutil.copyfile(instrumented, out_dir / "instrumented.py")

        def one_run(name: str, delay: dict | None, trace_to: Path) -> dict:
            if progress:
                progress.start(f"{script.name} {name}")
            spec = _variant_spec("script", script, instrumented, work / name / "out", settings, 0, args)
            spec["delay"] = delay
            if settings.module_loading:
                spec["env"] = {"CUDA_MODULE_LOADING": settings.module_loading}
            status = run_harness(spec, work / name, settings.timeout)
            trace = work / name / "out" / "trace.json.gz"
            if trace.exists():
                trace_to.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(trace, trace_to)
            status["stdout"] = (work / name / "stdout.txt").read_text(encoding="utf-8", errors="replace")
            if progress:
                progress.advance(f"{script.name} {name}: {status['status']}")
            return status

        status = one_run("run", None, out_dir / "trace.json.gz")
        for stream in ("stdout", "stderr"):  # the script's own output, kept for the report
            src = work / "run" / f"{stream}.txt"
            if src.exists():
                shutil.copyfile(src, out_dir / f"{stream}.txt")
        raw = work / "run" / "out" / "cupti_records.json.gz"
        if raw.exists():
            shutil.copyfile(raw, out_dir / "cupti_records.json.gz")
        status.pop("stdout", None)
        kernels = status.pop("numba_kernels", None) or []
        plain = Evidence(load(out_dir / "trace.json.gz")) if (out_dir / "trace.json.gz").exists() else None
        for label, (provoke_delay, control_delay) in plans.items():
            runs_out = []
            safe = label.replace(":", "-")
            # the provoking delay outlasts what the plain run did between the delayed
            # statement and the consumer's launch (first-call compiles included)
            gaps = launch_gaps(plain, provoke_delay.at, label) if plain is not None else []
            sized = sized_delays(gaps)
            for side, delay, count, ms in (("control", control_delay, settings.control_runs, SPIN_MS),
                                           ("provoked", provoke_delay, settings.provoke_runs, sized)):  # fmt: skip
                for k in range(count):
                    name = f"{safe}-{side}{k}"
                    rel = f"provoke/{name}.trace.json.gz"
                    st = one_run(name, dict(delay.to_dict(), ms=ms, preload=kernels), out_dir / rel)
                    runs_out.append({"side": side, "status": st["status"], "stdout": st["stdout"][-4000:],
                                     "error": st.get("error", "")[-1500:],
                                     "trace": rel if (out_dir / rel).exists() else None})  # fmt: skip
            provoked[label] = {"provoked": provoke_delay.to_dict(), "control": control_delay.to_dict(),
                               "preloaded": sorted({k["name"] for k in kernels}),
                               "spin_ms": SPIN_MS, "sized_ms": sized, "plain_gaps_ms": [round(g, 3) for g in gaps],
                               "runs": runs_out}  # fmt: skip
        if progress:
            progress.finish()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    record = {"script": _display(script), "args": list(args), "findings": [diag_dict(d) for d in diags],
              "instrumented": {"wrapped": result.wrapped, "skipped": result.skipped}, "run": status,
              "provoke": provoked, "module_loading": settings.module_loading or "driver default"}  # fmt: skip
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
    if "gpu" not in machine:  # every variant failed before it could ask: ask here
        from streamlint.runtime.backends import gpu_query

        for key, value in gpu_query().items():
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
