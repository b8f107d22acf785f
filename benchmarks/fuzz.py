"""The long fuzz run: N random programs through streamlint, in parallel, with a seed.

Usage:
    python benchmarks/fuzz.py [-n 10000] [--seed 0] [--jobs N] [--grammar-share 0.2]
                              [--bytes-share 0.1] [--timeout 20] [--out fuzz-failures]
                              [--json PATH]

Programs are fixture files with GPU code spliced in, hypothesmith's random programs with
GPU code spliced in (`--grammar-share` of them), and fixture files with hostile bytes
spliced in (`--bytes-share`); see fuzz_programs.py for how they are made and which
properties are checked. Phase 1 generates and checks every program in
worker processes that all run with one hash seed; phase 2 lints every program again in
workers with another hash seed and compares (set and dict order must not leak into the
output). Each failing program is saved in --out with a .txt saying what broke; a worker
that dies leaves the program it was on there too.

The exit status is 0 when every property held for every program, 1 otherwise.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import multiprocessing
import os
import platform
import sys
import time
import traceback
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

KINDS = ("fixtures", "grammar", "bytes")
MAX_SAVED_PER_KIND = 50


@dataclass(frozen=True)
class Batch:
    index: int
    kind: str  # one of KINDS
    seed: int
    count: int
    timeout: float
    fixes: bool
    out: str


@dataclass
class BatchResult:
    batch: Batch
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    codes: collections.Counter = field(default_factory=collections.Counter)
    programs: list = field(default_factory=list)  # (sha, text, digest) of the linted ones
    fixed: int = 0
    with_findings: int = 0
    seconds: float = 0.0
    slowest: float = 0.0
    generator_errors: list = field(default_factory=list)
    seen: set = field(default_factory=set)  # sha1 of every program


# ---------------------------------------------------------------- in the workers

# Programs this worker has checked (sha1): hypothesis can reach one program by several
# paths, and a repeat would count twice for one program's worth of checking.
_checked: set[str] = set()


def run_batch(batch: Batch) -> BatchResult:
    """Generate `batch.count` programs from the batch's seed and check each one."""
    warnings.simplefilter("ignore")  # hypothesis' and the parser's warnings are noise here
    import fuzz_programs as fp
    from hypothesis import HealthCheck, Phase, given, seed, settings

    strategy = {"fixtures": fp.fixture_programs, "grammar": fp.grammar_programs, "bytes": fp.byte_programs}[batch.kind]()
    result = BatchResult(batch)
    lint_settings = fp.fuzz_settings(batch.timeout)
    inflight = Path(batch.out) / f"inflight-{os.getpid()}.py"
    start = time.perf_counter()

    def one(program: str | bytes) -> None:
        if sum(result.outcomes.values()) >= batch.count:
            return
        data = program if isinstance(program, bytes) else program.encode("utf-8", "surrogatepass")
        sha = hashlib.sha1(data).hexdigest()
        if sha in _checked:
            return
        _checked.add(sha)
        inflight.write_bytes(data)  # left behind if the process dies
        began = time.perf_counter()
        try:
            if isinstance(program, bytes):
                report = fp.check_bytes(program, lint_settings)
            else:
                report = fp.check_program(program, lint_settings, fixes=batch.fixes)
        except Exception:  # a bug in the properties' own code paths (fix_source, ...)
            report = fp.Report(problems=[traceback.format_exc()], kind="crash")
        result.slowest = max(result.slowest, time.perf_counter() - began)
        result.outcomes[report.kind] += 1
        result.codes.update(set(report.codes))
        result.fixed += report.fixed
        result.with_findings += bool(report.codes)
        result.seen.add(sha)
        if report.kind not in ("ok", "parse-rejected"):
            save(Path(batch.out), report.kind, sha, data, report.problems, batch)
        if report.kind != "parse-rejected" and isinstance(program, str):
            result.programs.append((sha, program, report.digest))

    # Hypothesis stops early once it has seen every small example of a strategy, and
    # repeats are skipped: new seeds make up the difference.
    for attempt in range(20):
        missing = batch.count - sum(result.outcomes.values())
        if missing <= 0:
            break
        # The first examples of every seed are the same simplest ones: ask for extra.
        run = settings(
            max_examples=missing if attempt == 0 else missing + 50, database=None, deadline=None, phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )(seed(batch.seed + attempt * 1_000_003)(given(strategy)(one)))  # fmt: skip
        try:
            run()
        except Exception:  # the generator itself failed: a bug here, not in streamlint
            result.generator_errors.append(traceback.format_exc())
    inflight.unlink(missing_ok=True)
    result.seconds = time.perf_counter() - start
    return result


def relint(items: list[tuple[str, str]], timeout: float) -> list[tuple[str, str]]:
    """(sha, digest) for each (sha, text): phase 2, in a process with another hash seed."""
    warnings.simplefilter("ignore")
    import fuzz_programs as fp

    from streamlint.engine.lint import lint_text

    lint_settings = fp.fuzz_settings(timeout)
    return [(sha, fp.diagnostics_digest(lint_text(text, fp.FILENAME, lint_settings))) for sha, text in items]


def save(out: Path, kind: str, sha: str, data: bytes, problems: list[str], batch: Batch | None) -> None:
    if len(list(out.glob(f"{kind}-*.py"))) >= MAX_SAVED_PER_KIND:
        return
    stem = out / f"{kind}-{sha[:12]}"
    stem.with_suffix(".py").write_bytes(data)  # the exact bytes: lint it to reproduce
    where = f"batch {batch.index} ({batch.kind}, seed {batch.seed})\n" if batch else ""
    stem.with_suffix(".txt").write_text(where + "\n".join(problems) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- in the main process


def plan(args: argparse.Namespace) -> list[Batch]:
    grammar, hostile = round(args.n * args.grammar_share), round(args.n * args.bytes_share)
    counts = {"fixtures": args.n - grammar - hostile, "grammar": grammar, "bytes": hostile}
    batches: list[Batch] = []
    for kind in KINDS:
        left = counts[kind]
        while left > 0:
            count = min(args.batch, left)
            index = len(batches)
            batches.append(Batch(index, kind, args.seed * 100_000 + index, count, args.timeout,
                                 not args.no_fixes, str(args.out)))  # fmt: skip
            left -= count
    return batches


def pool(jobs: int, hash_seed: int) -> ProcessPoolExecutor:
    # Spawned workers read PYTHONHASHSEED at start-up: every worker of a pool has this one.
    os.environ["PYTHONHASHSEED"] = str(hash_seed)
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))


def phase_one(batches: list[Batch], jobs: int, hash_seed: int, out: Path) -> tuple[list[BatchResult], int]:
    """Results of every batch, and how many worker deaths there were. A batch that was
    running when a worker died is retried alone; if it kills its worker again, the
    program it was on is saved as a crash."""
    results: list[BatchResult] = []
    deaths = 0
    pending, alone = list(batches), []
    while pending or alone:
        isolated = not pending
        todo = pending if pending else [alone.pop()]
        pending = []
        with pool(1 if isolated else jobs, hash_seed) as executor:
            futures = {executor.submit(run_batch, b): b for b in todo}
            for future in as_completed(futures):
                try:
                    results.append(future.result())
                    progress(results, batches)
                except BrokenProcessPool:
                    pass
        unfinished = [b for f, b in futures.items() if f.exception() is not None]
        if not unfinished:
            continue
        deaths += 1
        flying = inflight_programs(out)
        if isolated:  # this batch alone killed its worker twice: the program it was on
            dead = BatchResult(unfinished[0])
            dead.outcomes["crash"] += 1
            results.append(dead)
            for data in flying:
                sha = hashlib.sha1(data).hexdigest()
                save(out, "crash", sha, data, ["the worker process died on this program"], unfinished[0])
        else:
            alone.extend(unfinished)
    return results, deaths


def inflight_programs(out: Path) -> list[bytes]:
    found = []
    for path in out.glob("inflight-*.py"):
        found.append(path.read_bytes())
        path.unlink()
    return found


def phase_two(results: list[BatchResult], jobs: int, hash_seed: int, timeout: float, out: Path) -> int:
    """Programs whose diagnostics differ under another hash seed (each saved)."""
    first = {sha: (text, digest) for r in results for sha, text, digest in r.programs}
    items = [(sha, text) for sha, (text, _) in first.items()]
    chunks = [items[i : i + 200] for i in range(0, len(items), 200)]
    differing = 0
    with pool(jobs, hash_seed) as executor:
        for future in as_completed([executor.submit(relint, chunk, timeout) for chunk in chunks]):
            for sha, digest in future.result():
                text, before = first[sha]
                if digest != before:
                    differing += 1
                    save(out, "nondeterministic-hash-seed", sha, text.encode("utf-8", "surrogatepass"),
                         ["another hash seed gave other diagnostics:", before, "----", digest], None)  # fmt: skip
    return differing


def progress(results: list[BatchResult], batches: list[Batch]) -> None:
    done = sum(sum(r.outcomes.values()) for r in results)
    total = sum(b.count for b in batches)
    sys.stderr.write(f"\r{done}/{total} programs")
    sys.stderr.flush()


def summarise(args, batches, results, deaths, differing, times) -> dict:
    outcomes = collections.Counter()
    codes = collections.Counter()
    by_kind = collections.Counter()
    for r in results:
        outcomes.update(r.outcomes)
        codes.update(r.codes)
        by_kind[r.batch.kind] += sum(r.outcomes.values())
    from importlib.metadata import version

    import hypothesis

    import streamlint

    return {
        "programs": sum(outcomes.values()),
        "planned": sum(b.count for b in batches),
        "by_source": {kind: by_kind[kind] for kind in KINDS if by_kind[kind]},
        "distinct": len(set().union(*(r.seen for r in results))),
        "seed": args.seed,
        "jobs": args.jobs,
        "timeout_s": args.timeout,
        "crashes": outcomes["crash"],
        "worker_deaths": deaths,
        "timeouts": outcomes["timeout"],
        "unexpected_sl000": outcomes["unexpected-sl000"],
        "malformed": outcomes["malformed"],
        "nondeterministic_same_process_or_crlf": outcomes["nondeterministic"],
        "nondeterministic_hash_seed": differing,
        "fix_reparse_failures": outcomes["fix-reparse"],
        "fix_crlf_failures": outcomes["fix-crlf"],
        "libcst_rejected": outcomes["parse-rejected"],
        "with_findings": sum(r.with_findings for r in results),
        "fixed": sum(r.fixed for r in results),
        "programs_per_rule": dict(sorted(codes.items())),
        "slowest_program_s": round(max((r.slowest for r in results), default=0.0), 2),
        "phase1_s": round(times[0], 1),
        "phase2_s": round(times[1], 1),
        "python": platform.python_version(),
        "streamlint": streamlint.__version__,
        "libcst": version("libcst"),
        "hypothesis": hypothesis.__version__,
        "cpus": os.cpu_count(),
        "generator_errors": [e for r in results for e in r.generator_errors],
    }


def failures(summary: dict) -> int:
    """Failing programs (a worker death is one only when the program is known: a crash)."""
    keys = ("crashes", "timeouts", "unexpected_sl000", "malformed",
            "nondeterministic_same_process_or_crlf", "nondeterministic_hash_seed",
            "fix_reparse_failures", "fix_crlf_failures")  # fmt: skip
    return sum(summary[k] for k in keys)


def report(summary: dict, out: Path) -> str:
    s = summary
    rules = ", ".join(f"{code} {n}" for code, n in s["programs_per_rule"].items()) or "none"
    generator = "\n".join(summary.get("generator_errors", [])[:3])
    lines = [
        f"streamlint fuzz: seed {s['seed']}, {s['jobs']} processes, per-file timeout {s['timeout_s']:g} s",
        f"Python {s['python']}, streamlint {s['streamlint']}, libcst {s['libcst']}, hypothesis {s['hypothesis']}",
        "",
        f"programs                    {s['programs']:>7}  ({', '.join(f'{k} {v}' for k, v in s['by_source'].items())}; "
        f"{s['distinct']} distinct"
        + (f"; {s['planned'] - s['programs']} short of the {s['planned']} planned: "
           + ("see worker deaths" if s["worker_deaths"] else "the generator ran out of new programs")
           if s["planned"] != s["programs"] else "")
        + ")",
        f"crashes                     {s['crashes']:>7}  (worker deaths: {s['worker_deaths']})",
        f"timeouts                    {s['timeouts']:>7}",
        f"SL000 on parsable programs  {s['unexpected_sl000']:>7}",
        f"malformed diagnostics       {s['malformed']:>7}",
        f"non-deterministic           {s['nondeterministic_same_process_or_crlf']:>7}  (same process or CRLF); "
        f"{s['nondeterministic_hash_seed']} (another hash seed)",
        f"fix re-parse failures       {s['fix_reparse_failures']:>7}  (of {s['fixed']} programs changed by fixes; "
        f"CRLF mismatches: {s['fix_crlf_failures']})",
        f"libcst rejected (SL000 ok)  {s['libcst_rejected']:>7}",
        f"programs with findings      {s['with_findings']:>7}  ({rules})",
        f"slowest program             {s['slowest_program_s']:>7} s",
        f"time                        {s['phase1_s'] + s['phase2_s']:>7.1f} s  (phase 1 {s['phase1_s']} s, "
        f"phase 2 {s['phase2_s']} s)",
        "",
        f"{failures(s)} failing programs" + (f"; saved in {out}" if failures(s) else ""),
    ]
    if generator:
        lines += ["", f"the program generator failed {len(s['generator_errors'])} times (a fuzzer bug):", generator]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=10_000, help="programs (default 10,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--grammar-share", type=float, default=0.2,
                        help="share of hypothesmith programs (default 0.2)")
    parser.add_argument("--bytes-share", type=float, default=0.1,
                        help="share of fixtures with hostile bytes (default 0.1; the rest: fixtures with GPU code)")
    parser.add_argument("--batch", type=int, default=50, help="programs per worker task")
    parser.add_argument("--timeout", type=float, default=20.0, help="per-file bound, seconds")
    parser.add_argument("--out", type=Path, default=Path("fuzz-failures"), help="where failures go")
    parser.add_argument("--json", type=Path, help="also write the summary here as JSON")
    parser.add_argument("--no-fixes", action="store_true", help="skip the fix properties")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for stale in args.out.glob("inflight-*.py"):
        stale.unlink()
    batches = plan(args)
    hash_seed = args.seed % 4_000_000_000
    start = time.perf_counter()
    results, deaths = phase_one(batches, args.jobs, hash_seed, args.out)
    middle = time.perf_counter()
    differing = phase_two(results, args.jobs, hash_seed + 1, args.timeout, args.out)
    end = time.perf_counter()
    sys.stderr.write("\n")
    summary = summarise(args, batches, results, deaths, differing, (middle - start, end - middle))
    print(report(summary, args.out))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 1 if failures(summary) or summary["worker_deaths"] else 0


if __name__ == "__main__":
    sys.exit(main())
