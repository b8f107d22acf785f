"""`streamlint verify`: run flagged code on the GPU and measure what the findings claim.

    streamlint verify fixtures/ [--select SL3] [--report DIR]   the runtime fixture pairs
    streamlint verify script.py [--report DIR] -- ARGS...        a program of your own
    streamlint verify --from-records DIR --report DIR            rebuild a report, no GPU

The command line module wires it in with `add_verify_parser(subparsers)` and dispatches
to `run_verify(args)`. Exit codes: 0 every pair confirmed (script: it ran and was
measured); 1 a pair not confirmed or in error (script: it failed); 2 no GPU, no PyTorch,
or a usage error.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Sequence, TextIO

EXIT_OK, EXIT_FAILED, EXIT_UNAVAILABLE = 0, 1, 2


def add_verify_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "verify",
        help="run flagged code on the GPU and measure each finding (needs the runtime extra)",
        description="Run runtime fixture pairs, or a script of your own, under the PyTorch "
        "profiler on a CUDA GPU, and report per finding whether its effect is real and how large.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="fixture directories or pairs, or one script followed by -- and its arguments")
    p.add_argument("--select", action="append", metavar="CODES",
                   help="only pairs of these rules (codes or prefixes, comma-separated)")
    p.add_argument("--report", type=Path, metavar="DIR",
                   help="write report.json, report.md, report.html and timeline PNGs here")
    p.add_argument("--records", type=Path, metavar="DIR",
                   help="keep the records (trimmed traces, per-pair JSON) here")
    p.add_argument("--from-records", type=Path, metavar="DIR",
                   help="build the report from records of an earlier run (no GPU needed)")
    p.add_argument("--trials", type=int, default=10, help="trials per hazard pair (default 10)")
    p.add_argument("--reps", type=int, default=5, help="timed calls per variant (default 5)")
    p.add_argument("--traced-reps", type=int, default=3, help="traced calls per variant (default 3)")
    p.add_argument("--warmup", type=int, default=2, help="warm-up calls per variant (default 2)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per variant before it is an error")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="pass KEY=VALUE to every fixture's run() that accepts it (e.g. n_chunks=4)")
    p.add_argument("--commit", metavar="SHA", help="streamlint's git commit to record (default: that of the "
                   "checkout streamlint runs from, if any)")
    p.add_argument("--tracer", choices=("torch", "cupti"),
                   help="torch: the PyTorch profiler; cupti: CUPTI through cupti-python, no PyTorch needed "
                   "(default: torch if installed, else cupti)")
    p.add_argument("--provoke", action=argparse.BooleanOptionalAction, default=True,
                   help="script mode: delay the producing stream before each hazard (SL4xx) finding's producer, "
                   "to make a missing wait bite, and compare with the delay on the consumer side (default: on)")
    p.add_argument("--provoke-runs", type=int, default=3, metavar="N",
                   help="provoked runs per hazard finding (default 3, plus one control run)")
    p.add_argument("--trace-out", type=Path, metavar="FILE",
                   help="write the script's trace (or every pair's) for Perfetto / chrome://tracing, "
                   "streams named after the lines that created them")
    p.add_argument("--keep-raw", action="store_true",
                   help="keep the tracer's raw output in the records (CUPTI activity records; test data)")
    return p  # fmt: skip


def runtime_problem(tracer: str | None = None) -> str | None:
    """Why verify cannot run here with this tracer, or None. (Without PyTorch, the
    traced process itself finds out whether CUPTI sees a GPU.)"""
    from streamlint.runtime.backends import default_tracer

    chosen = tracer or default_tracer()
    if chosen == "cupti":
        for module, extra in (("cupti", "cupti"), ("cuda.bindings", "cupti")):
            try:
                found = importlib.util.find_spec(module) is not None
            except ModuleNotFoundError:
                found = False
            if not found and tracer is None:
                return ("PyTorch is not installed, nor CUPTI's Python bindings (`cupti-python`): "
                        "pip install 'streamlint[runtime]' to trace with the PyTorch profiler, or "
                        f"'streamlint[{extra}]' to trace through CUPTI without PyTorch")  # fmt: skip
            if not found:
                return (f"`{module}` is not installed; tracing without PyTorch needs CUPTI's Python bindings: "
                        f"pip install 'streamlint[{extra}]'")  # fmt: skip
        return None
    if importlib.util.find_spec("torch") is None:
        return ("PyTorch is not installed; `--tracer torch` traces with the PyTorch profiler: "
                "pip install 'streamlint[runtime]' (and a CUDA build of torch), or use --tracer cupti")  # fmt: skip
    try:
        import torch
    except Exception as err:  # a broken install
        return f"PyTorch cannot be imported: {err}"
    if not torch.cuda.is_available():
        return "no CUDA GPU is available (torch.cuda.is_available() is False); `streamlint verify` needs one"
    return None


def _error(err: TextIO, message: str) -> None:
    err.write(f"streamlint verify: {message}\n")


def parse_params(items: Sequence[str]) -> dict:
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"--param wants KEY=VALUE, got {item!r}")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def split_targets(paths: Sequence[str]) -> tuple[list[Path], Path | None, list[str]]:
    """Fixture paths, or (when a path is a script, not a fixture variant) that script and
    everything after it as its arguments."""
    from streamlint.runtime.pairs import is_variant

    fixtures: list[Path] = []
    items = list(paths)
    for i, item in enumerate(items):
        if item == "--":
            continue
        path = Path(item)
        if path.suffix == ".py" and path.is_file() and not is_variant(path):
            rest = items[i + 1 :]
            if rest and rest[0] == "--":
                rest = rest[1:]
            return fixtures, path, rest
        fixtures.append(path)
    return fixtures, None, []


def write_report(records: Path, report_dir: Path, out: TextIO) -> dict:
    from streamlint.runtime import render, report, timeline

    data = report.build(records)
    report_dir.mkdir(parents=True, exist_ok=True)
    drawn: list[str] = []
    if "script" in data:
        s = data["script"]
        script_dir = records / "script"
        trace_path = script_dir / "trace.json.gz"
        if trace_path.exists():
            from streamlint.runtime.trace import load

            trace = load(trace_path)
            for name, steady in ((s["timeline"], True), (s["timeline_full"], False)):
                if name and timeline.draw_script(report_dir / name, s, trace, steady=steady) is not None:
                    drawn.append(name)
            for f in s.get("findings", []):
                prov = f.get("provoked") or {}
                if f.get("race_picture") and prov.get("trace"):
                    if timeline.draw_race(report_dir / f["race_picture"], s, f, load(script_dir / prov["trace"])):
                        drawn.append(f["race_picture"])
        for stream, name in (s.get("output") or {}).items():  # the script's own output, kept
            shutil.copyfile(script_dir / f"{stream}.txt", report_dir / name)
        for key in ("timeline", "timeline_full"):
            if s.get(key) not in drawn:
                s[key] = None
    else:
        for entry in data["pairs"]:
            traces = report.load_traces(records / entry["code"])
            if timeline.draw_pair(report_dir / entry["timeline"], entry, traces, report.flagged_labels(entry)):
                drawn.append(entry["timeline"])
            else:
                entry["timeline"] = None
    images = {name: _data_uri(report_dir / name) for name in drawn}
    (report_dir / "report.json").write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    (report_dir / "report.md").write_text(render.markdown(data), encoding="utf-8")
    (report_dir / "report.html").write_text(render.html_report(data, images), encoding="utf-8")
    return data


def _data_uri(path: Path) -> str:
    """A PNG as a data: URI, so that report.html stands alone."""
    import base64

    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def write_trace_out(records: Path, path: Path) -> list[Path]:
    """The trace(s) for Perfetto / chrome://tracing, stream lanes named."""
    from streamlint.runtime.chrome_export import export

    written = []
    sources = ([records / "script" / "trace.json.gz"] if (records / "script").exists()
               else sorted(records.glob("*/*.trace.json.gz")))  # fmt: skip
    for src in sources:
        if not src.exists():
            continue
        if len(sources) == 1:
            target = path
        else:  # pairs: one file per variant beside the given name
            target = path.with_name(f"{path.stem.split('.')[0]}.{src.parent.name}.{src.name.split('.')[0]}.json")
        export(src, target)
        written.append(target)
    return written


def summarize(data: dict, out: TextIO) -> int:
    if "script" in data:
        s = data["script"]
        if s.get("status") != "ok":
            out.write(f"{s['script']}: the script failed\n{s.get('error', '')[-2000:]}\n")
        for f in s.get("findings", []):
            out.write(f"{s['script']}:{f['row']}: {f['code']} {f['verdict']}: {f.get('why', '')}\n")
            if f.get("measure"):
                out.write(f"    {f['measure']}\n")
        if not s.get("findings"):
            out.write(f"{s['script']}: no finding to measure\n")
        counts = s.get("summary", {})
        if counts:
            out.write("Verdicts: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) + "\n")
        return EXIT_OK if s.get("status") == "ok" else EXIT_FAILED
    width = max((len(p["verdict"]) for p in data.get("pairs", [])), default=9)
    for p in data.get("pairs", []):
        out.write(f"{p['code']}  {p['verdict']:<{width}}  {p.get('key', '')}\n")
        if p["verdict"] != "confirmed":
            out.write(f"        {p['reason'].splitlines()[0] if p['reason'] else ''}\n")
    counts = data.get("summary", {})
    out.write("Verdicts: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) + "\n")
    return EXIT_OK if data.get("pairs") and all(p["verdict"] == "confirmed" for p in data["pairs"]) else EXIT_FAILED


def run_verify(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    if args.report is not None and importlib.util.find_spec("matplotlib") is None:
        _error(err, "--report draws timelines with matplotlib: pip install 'streamlint[runtime]'")
        return EXIT_UNAVAILABLE
    if args.from_records is not None:
        if not (args.from_records / "run.json").exists():
            _error(err, f"{args.from_records} holds no records (run.json missing)")
            return EXIT_UNAVAILABLE
        data = write_report(args.from_records, args.report, out) if args.report else _build(args.from_records)
        if args.trace_out:
            write_trace_out(args.from_records, args.trace_out)
        return summarize(data, out)
    try:
        params = parse_params(args.param)
    except ValueError as bad:
        _error(err, str(bad))
        return EXIT_UNAVAILABLE
    fixtures, script, script_args = split_targets(args.paths or ["fixtures"])
    missing = [p for p in fixtures if p.suffix == ".py" and not p.exists()]
    if script is None and missing:
        _error(err, f"no such script: {missing[0]}")
        return EXIT_UNAVAILABLE
    from streamlint.runtime.pairs import find_pairs, select

    pairs = []
    if script is None:
        selectors = [s for value in args.select or [] for s in value.split(",")]
        pairs = select(find_pairs(fixtures), selectors)
        if not pairs:
            _error(err, "no runtime fixture pair (<CODE>/runtime/bad.py + good.py) under the given paths")
            return EXIT_UNAVAILABLE
    problem = runtime_problem(args.tracer)
    if problem is not None:
        _error(err, problem)
        return EXIT_UNAVAILABLE
    from streamlint.runtime import runner
    from streamlint.runtime.progress import Progress

    settings = runner.Settings(warmup=args.warmup, reps=args.reps, traced_reps=args.traced_reps,
                               trials=args.trials, timeout=args.timeout, params=params, tracer=args.tracer,
                               provoke=args.provoke, provoke_runs=args.provoke_runs,
                               keep_raw=args.keep_raw)  # fmt: skip
    records = args.records or Path(tempfile.mkdtemp(prefix="streamlint-records-"))
    commit = args.commit or runner.streamlint_commit()
    try:
        if script is not None:
            selectors = [s for value in args.select or [] for s in value.split(",")]
            runner.run_script(script, script_args, settings, records, commit, Progress(1, err), selectors)
        else:
            runner.run_pairs(pairs, settings, records, commit, Progress(2 * len(pairs), err))
        data = write_report(records, args.report, out) if args.report else _build(records)
        if args.trace_out:
            write_trace_out(records, args.trace_out)
        return summarize(data, out)
    finally:
        if args.records is None:
            shutil.rmtree(records, ignore_errors=True)


def _build(records: Path) -> dict:
    from streamlint.runtime import report

    return report.build(records)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m streamlint.runtime.verify ...`, until the command line wires `verify` in."""
    parser = argparse.ArgumentParser(prog="streamlint")
    sub = parser.add_subparsers(dest="command")
    add_verify_parser(sub)
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "verify":
        argv.insert(0, "verify")
    return run_verify(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
