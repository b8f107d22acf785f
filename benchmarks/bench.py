"""streamlint against its peers, side by side on the same files, in one run.

Usage:
    python benchmarks/bench.py [--tree PATH] [--copies 4] [--runs 3] [--peer-runs 1]
                               [--torchfix CMD] [--fixit CMD] [--ruff CMD]
                               [--skip-peer NAME ...] [--out benchmarks/results.json]

The tree (default: the installed torch package's sources) is copied, its .py and .pyi
files only, into a private work directory, once as `torch/` and, with `--copies N`,
N more times under different package names as a synthetic monorepo. Every row is a
command run as a subprocess on one of those copies (nothing is shared between rows
but the page cache):

- streamlint cold      an empty cache directory each run
- streamlint warm      the cache from the previous run, nothing changed
- streamlint touched   one line appended to one analysed file that no other file
                       imports (a "leaf"), then a run
- streamlint helper    the same for the analysed file most other files depend on:
                       its importers are re-checked too
- libcst parse-only    `libcst.parse_module` of every file, `--jobs` processes
- TorchFix, Fixit      their default rules (rows say "not installed" without them);
                       on the monorepo only with --slow-peers-on-monorepo
- ruff                 `ruff check --isolated --no-cache`, for scale, not as a peer

Times are wall-clock medians over the runs. Memory is measured two ways: the peak,
over time, of the summed proportional set size (PSS) of the whole process tree,
sampled every 50 ms (shared pages counted once); and the largest max RSS of any one
process of the tree, from wait4(2). Ratios are streamlint cold / the row, on the same
tree in the same run. The script ends with a markdown table for benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE_SUFFIXES = (".py", ".pyi")
PEERS = ("libcst", "torchfix", "fixit", "ruff")
TITLES = {"libcst": "libcst parse-only", "torchfix": "TorchFix", "fixit": "Fixit",
          "ruff": "ruff (for scale)"}  # fmt: skip


# ---------------------------------------------------------------- measuring one command


@dataclass
class Run:
    seconds: float
    returncode: int
    peak_tree_pss_mib: float
    max_process_rss_mib: float
    output_lines: int
    stderr_tail: str = ""
    cpu_seconds: float = 0.0  # user + system CPU of the command and its waited descendants (wait4)
    load: tuple[float, float] = (0.0, 0.0)  # the 1-minute load average at the start and at the end


class TreeMemory:
    """Samples the summed PSS of a process and all its descendants until stopped."""

    def __init__(self, root_pid: int, interval: float = 0.05) -> None:
        self.root_pid = root_pid
        self.interval = interval
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak_kib = max(self.peak_kib, sum(_pss_kib(p) for p in _tree(self.root_pid)))
            self._stop.wait(self.interval)


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, ()))
    return out


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _load() -> float:
    try:
        with open("/proc/loadavg") as fh:
            return float(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0


def measure(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    load_at_start = _load()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        with TreeMemory(proc.pid) as memory:
            _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = sum(1 for _ in out)
        err.seek(0)
        tail = err.read()[-2000:].decode("utf-8", "replace")
    # ru_maxrss is in KiB on Linux: the largest of the child and its waited descendants.
    return Run(seconds, proc.returncode, memory.peak_kib / 1024, usage.ru_maxrss / 1024, lines, tail,
               usage.ru_utime + usage.ru_stime, (load_at_start, _load()))


# ---------------------------------------------------------------- rows


@dataclass
class Row:
    tree: str
    tool: str
    note: str = ""
    runs: list[Run] = field(default_factory=list)
    missing: str = ""  # why the row was not measured

    @property
    def median(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    def summary(self) -> dict:
        data = asdict(self)
        if self.runs:
            data.update(
                median_s=self.median,
                median_cpu_s=statistics.median(r.cpu_seconds for r in self.runs),
                min_s=min(r.seconds for r in self.runs),
                max_s=max(r.seconds for r in self.runs),
                peak_tree_pss_mib=max(r.peak_tree_pss_mib for r in self.runs),
                max_process_rss_mib=max(r.max_process_rss_mib for r in self.runs),
            )
        return data


# `--timeout` for every streamlint row (None: the tool's default). On a machine loaded
# by other work, the biggest files can pass the default per-file limit: their results
# are then not cached, and the warm and touched rows measure re-checks instead.
STREAMLINT_TIMEOUT: float | None = None


def streamlint_cmd(target: Path, cache_dir: Path) -> list[str]:
    # concise: one line per finding (the rows count findings by lines, and earlier
    # sessions' figures were taken with the one-line format, then the default)
    cmd = [sys.executable, "-m", "streamlint", "check", str(target), "--exit-zero", "--quiet",
           "--output-format", "concise", "--cache-dir", str(cache_dir)]  # fmt: skip
    if STREAMLINT_TIMEOUT is not None:
        cmd += ["--timeout", f"{STREAMLINT_TIMEOUT:g}"]
    return cmd


def streamlint_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("STREAMLINT_NO_CACHE", None)
    env.pop("STREAMLINT_CACHE_DIR", None)
    return env


def bench_streamlint(tree: str, target: Path, work: Path, runs: int, touch: dict) -> list[Row]:
    cache_dir = work / f"cache-{tree}"
    env = streamlint_env()
    cmd = streamlint_cmd(target, cache_dir)
    cold = Row(tree, "streamlint cold", "empty cache")
    for _ in range(runs):
        shutil.rmtree(cache_dir, ignore_errors=True)
        cold.runs.append(measure(cmd, work, env))
        progress(cold)
    warm = Row(tree, "streamlint warm", "nothing changed")
    for _ in range(0 if touch.get("cold_only") else runs):
        warm.runs.append(measure(cmd, work, env))
        progress(warm)
    if touch.get("cold_only"):
        return [cold]
    leaf, helper = pick_touched(cache_dir, target, touch)
    rows = [cold, warm]
    for label, (path, dependents) in (("touched", leaf), ("helper touched", helper)):
        if path is None:
            why = "no analysed file in this tree" if label == "touched" else (
                "no file of this tree is read by the analysis of another")
            rows.append(Row(tree, f"streamlint {label}", missing=why))
            continue
        row = Row(tree, f"streamlint {label}",
                  f"`{path.relative_to(target.parent)}` (+{dependents} importers)")  # fmt: skip
        original = path.read_bytes()
        try:
            for i in range(runs):
                path.write_bytes(original + f"\n# streamlint benchmark touch {i}\n".encode())
                row.runs.append(measure(cmd, work, env))
                progress(row)
        finally:
            path.write_bytes(original)
        rows.append(row)
    return rows


def pick_touched(cache_dir: Path, target: Path, touch: dict) -> tuple[tuple, tuple]:
    """(leaf, helper) as (path, number of cached files that depend on it), from the
    dependencies the cache recorded: the leaf is, among the analysed files the fewest
    others depend on, the one of median size; the helper is the file most others depend on."""
    analysed: list[Path] = []
    dependents: dict[str, int] = {}
    for shard in sorted(cache_dir.glob("results-*/*.json")):
        head, _, body = shard.read_bytes().partition(b"\n")
        directory = json.loads(head)["dir"]
        for name, entry in json.loads(body).items():
            if entry["analysed"]:
                analysed.append(Path(directory) / name)
            for dep, note in entry["deps"].items():
                if note:  # a content hash: the file was read
                    dependents[dep] = dependents.get(dep, 0) + 1
    inside = {d: n for d, n in dependents.items() if Path(d).is_relative_to(target)}

    def chosen(option: str | None, default: Path | None) -> tuple:
        path = target.parent / option if option else default
        if path is None or not path.is_file():
            return None, 0
        return path, inside.get(str(path.resolve()), 0)

    # the leaf: an analysed file the fewest others depend on (v3's caller search reads every module
    # of a package, so in a package each file may be read by the others: then the least read)
    fewest = min((inside.get(str(p.resolve()), 0) for p in analysed), default=0)
    leaves = sorted((p.stat().st_size, str(p)) for p in analysed if inside.get(str(p.resolve()), 0) == fewest)
    leaf = Path(leaves[len(leaves) // 2][1]) if leaves else None
    helper = Path(max(inside, key=lambda d: (inside[d], d))) if inside else None
    return chosen(touch.get("leaf"), leaf), chosen(touch.get("helper"), helper)


def _cores() -> int:
    """The cores this process may use (`taskset` narrows them), as streamlint's own pool counts them."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def bench_peer(name: str, tree: str, target: Path, work: Path, runs: int, args) -> Row:
    if name == "libcst":
        cmd = [sys.executable, str(Path(__file__).resolve()), "--phase", "parse", str(target),
               "--jobs", str(args.jobs)]  # fmt: skip
        row = Row(tree, TITLES[name], f"every file, {args.jobs} processes")
    elif name == "torchfix":
        base = find_tool(args.torchfix, "torchfix")
        cmd = base and [*base, "-j", str(args.jobs), str(target)]
        row = Row(tree, TITLES[name], f"default rules, -j {args.jobs}")
    elif name == "fixit":
        base = find_tool(args.fixit, "fixit")
        cmd = base and [*base, "lint", str(target)]
        row = Row(tree, TITLES[name], "default rules")
    else:
        base = find_tool(args.ruff, "ruff")
        cmd = base and [*base, "check", "--isolated", "--no-cache", "--exit-zero", "--quiet",
                        str(target)]  # fmt: skip
        row = Row(tree, TITLES[name], "default rules, no cache")
    if not cmd:
        row.missing = "not installed"
        return row
    row.note += f"; {version_of(cmd[0], name)}"
    for _ in range(runs):
        row.runs.append(measure(cmd, work))
        progress(row)
    return row


def find_tool(option: str | None, name: str) -> list[str] | None:
    if option:
        return shlex.split(option)
    found = shutil.which(name)
    return [found] if found else None


def version_of(executable: str, name: str) -> str:
    if name == "libcst":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return f"libcst {version('libcst')}"
        except PackageNotFoundError:
            return "libcst (version unknown)"
    try:
        out = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=60)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return f"{name} (version unknown)"


# ---------------------------------------------------------------- the parse-only phase


def parse_phase(target: Path, jobs: int) -> int:
    from concurrent.futures import ProcessPoolExecutor

    files = sorted(str(p) for p in source_files(target))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        errors = sum(pool.map(_parse_one, files, chunksize=8))
    print(f"parsed {len(files)} files, {errors} errors")
    return 0


def _parse_one(path: str) -> int:
    import libcst as cst

    try:
        with open(path, "rb") as fh:
            cst.parse_module(fh.read().decode("utf-8", errors="replace"))
        return 0
    except Exception:
        return 1


# ---------------------------------------------------------------- the trees


def source_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file()]


def copy_tree(source: Path, dest: Path) -> None:
    for path in source_files(source):
        out = dest / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, out)


def count(root: Path) -> tuple[int, int]:
    files = source_files(root)
    lines = 0
    for path in files:
        with open(path, "rb") as fh:
            lines += fh.read().count(b"\n")
    return len(files), lines


def default_tree() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


# ---------------------------------------------------------------- reporting


def progress(row: Row) -> None:
    run = row.runs[-1]
    flag = "" if run.returncode in (0, 1) else f"  (exit status {run.returncode})"
    print(f"  {row.tree:<9} {row.tool:<24} run {len(row.runs)}: {run.seconds:8.2f} s "
          f"(CPU {run.cpu_seconds:8.2f} s, load {run.load[0]:.1f}-{run.load[1]:.1f}) "
          f"{run.peak_tree_pss_mib:7.0f} MiB{flag}", file=sys.stderr, flush=True)  # fmt: skip


def table(rows: list[Row], trees: dict[str, tuple[int, int]]) -> str:
    out = [
        "| tree | tool | runs | median s | min-max s | streamlint cold / tool | median CPU s | "
        "cold / tool, CPU | load (1 min) | peak MiB (tree PSS) | max process RSS MiB | notes |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    for tree, (files, lines) in trees.items():
        cold = next((r for r in rows if r.tree == tree and r.tool == "streamlint cold" and r.runs), None)
        for row in (r for r in rows if r.tree == tree):
            name = f"{tree} ({files:,} files, {lines / 1e6:.2f} M lines)"
            if not row.runs:
                out.append(f"| {name} | {row.tool} | 0 | - | - | - | - | - | - | - | - | {row.missing} |")
                continue
            s = row.summary()
            peer = not row.tool.startswith("streamlint")
            ratio = f"{cold.median / row.median:.3g}x" if cold and peer else "-"
            cpu_ratio = f"{cold.summary()['median_cpu_s'] / s['median_cpu_s']:.3g}x" if cold and peer and s["median_cpu_s"] else "-"
            loads = [x for r in row.runs for x in r.load]
            failed = [r.returncode for r in row.runs if r.returncode not in (0, 1)]
            note = row.note + (f"; exit status {failed[0]}" if failed else "")
            out.append(
                f"| {name} | {row.tool} | {len(row.runs)} | {s['median_s']:.2f} | "
                f"{s['min_s']:.2f}-{s['max_s']:.2f} | {ratio} | {s['median_cpu_s']:.2f} | {cpu_ratio} | "
                f"{min(loads):.1f}-{max(loads):.1f} | {s['peak_tree_pss_mib']:.0f} | "
                f"{s['max_process_rss_mib']:.0f} | {note} |"
            )
    return "\n".join(out)


def targets(rows: list[Row], single: str) -> list[str]:
    def median(tree: str, tool: str) -> float | None:
        row = next((r for r in rows if r.tree == tree and r.tool == tool and r.runs), None)
        return row.median if row else None

    lines = []
    for tree in dict.fromkeys(r.tree for r in rows):
        cold, torchfix = median(tree, "streamlint cold"), median(tree, "TorchFix")
        if cold and torchfix:
            ok = torchfix / cold >= 10
            lines.append(f"{tree}: TorchFix / streamlint cold = {torchfix / cold:.1f}x "
                         f"(target >= 10x): {'met' if ok else 'NOT met'}")  # fmt: skip
        parse = median(tree, "libcst parse-only")
        if cold and parse:
            ok = cold / parse <= 1.3
            lines.append(f"{tree}: streamlint cold / libcst parse-only = {cold / parse:.2f}x wall "
                         f"(target <= 1.3x, issue 27): {'met' if ok else 'NOT met'}")  # fmt: skip
            cpu = [next(r for r in rows if r.tree == tree and r.tool == t and r.runs).summary()["median_cpu_s"]
                   for t in ("streamlint cold", "libcst parse-only")]
            if cpu[1]:
                lines.append(f"{tree}: streamlint cold / libcst parse-only = {cpu[0] / cpu[1]:.2f}x CPU "
                             f"({cpu[0]:.1f} s / {cpu[1]:.1f} s)")  # fmt: skip
    cold = median(single, "streamlint cold")
    if cold is not None:
        lines.append(f"{single}: streamlint cold {cold:.1f} s (target < 60 s): "
                     f"{'met' if cold < 60 else 'NOT met'}")  # fmt: skip
    # The helper row appends a comment: the helper's summary does not change.
    for tool, limit in (("streamlint warm", 0.5), ("streamlint touched", 1.0),
                        ("streamlint helper touched", 1.0)):  # fmt: skip (issue 27's limits)
        value = median(single, tool)
        if value is not None:
            lines.append(f"{single}: {tool} {value:.2f} s (target < {limit:g} s): "
                         f"{'met' if value < limit else 'NOT met'}")  # fmt: skip
    peaks = [r.summary()["peak_tree_pss_mib"] for r in rows if r.tool.startswith("streamlint") and r.runs]
    if peaks:
        peak = max(peaks)
        lines.append(f"streamlint peak memory {peak:.0f} MiB, whole process tree "
                     f"(target < 1024 MiB): {'met' if peak < 1024 else 'NOT met'}")  # fmt: skip
    return lines


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="source tree (default: the installed torch package)")
    parser.add_argument("--copies", type=int, default=4,
                        help="copies of the tree in the synthetic monorepo (0: none; default 4)")
    parser.add_argument("--runs", type=int, default=3, help="runs per streamlint, libcst and ruff row")
    parser.add_argument("--peer-runs", type=int, default=1,
                        help="runs per TorchFix and Fixit row (default 1: they take tens of minutes)")
    parser.add_argument("--slow-peers-on-monorepo", action="store_true",
                        help="run TorchFix and Fixit on the monorepo too (hours on 2 cores)")
    parser.add_argument("--jobs", type=int, default=_cores(),
                        help="processes for the peers that take a number (default: the cores this process may "
                             "use, as streamlint takes; more processes than cores only add their start-up)")
    parser.add_argument("--torchfix", metavar="CMD", help="TorchFix command (default: torchfix on PATH)")
    parser.add_argument("--fixit", metavar="CMD", help="Fixit command (default: fixit on PATH)")
    parser.add_argument("--ruff", metavar="CMD", help="ruff command (default: ruff on PATH)")
    parser.add_argument("--skip-peer", action="append", default=[], choices=PEERS, metavar="NAME",
                        help=f"leave a peer out ({', '.join(PEERS)}); repeatable")
    parser.add_argument("--touch", metavar="RELPATH", help="the leaf file to touch, relative to the work copy")
    parser.add_argument("--touch-helper", metavar="RELPATH", help="the helper module to touch")
    parser.add_argument("--cold-only", action="store_true",
                        help="streamlint's cold row only (no warm, touched or helper rows: a large tree)")
    parser.add_argument("--work", type=Path, help="work directory (default: a temporary one, removed)")
    parser.add_argument("--out", type=Path, default=HERE / "results.json", help="raw results (JSON)")
    parser.add_argument("--streamlint-timeout", type=float, metavar="SECONDS",
                        help="--timeout for the streamlint rows (default: the tool's)")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("target", nargs="?", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phase == "parse":
        return parse_phase(args.target, args.jobs)
    global STREAMLINT_TIMEOUT
    STREAMLINT_TIMEOUT = args.streamlint_timeout

    source = args.tree or default_tree()
    if source is None or not source.is_dir():
        parser.error("no tree: torch is not installed; give --tree PATH")
    peer_runs = args.peer_runs
    work = args.work or Path(tempfile.mkdtemp(prefix="streamlint-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        single = work / source.name
        shutil.rmtree(single, ignore_errors=True)
        copy_tree(source, single)
        targets_by_tree = {source.name: single}
        if args.copies > 0:
            mono = work / "monorepo"
            shutil.rmtree(mono, ignore_errors=True)
            for i in range(args.copies):
                copy_tree(source, mono / f"{source.name}_copy{i}")
            targets_by_tree["monorepo"] = mono
        trees = {name: count(path) for name, path in targets_by_tree.items()}
        print(f"source: {source}; work copies in {work}", file=sys.stderr)
        rows: list[Row] = []
        touch = {"leaf": args.touch, "helper": args.touch_helper, "cold_only": args.cold_only}
        for name, target in targets_by_tree.items():
            rows += bench_streamlint(name, target, work, args.runs, touch)
            for peer in PEERS:
                slow = peer in ("torchfix", "fixit")
                if peer in args.skip_peer:
                    rows.append(Row(name, TITLES[peer], missing="skipped (--skip-peer)"))
                    continue
                if slow and name == "monorepo" and not args.slow_peers_on_monorepo:
                    rows.append(Row(name, TITLES[peer], missing="not run here (--slow-peers-on-monorepo)"))
                    continue
                runs = peer_runs if slow else args.runs
                rows.append(bench_peer(peer, name, target, work, runs, args))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)

    report = {
        "source": str(source),
        "trees": {k: {"files": f, "lines": n} for k, (f, n) in trees.items()},
        "python": sys.version.split()[0],
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs",
        "rows": [r.summary() for r in rows],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"Python {report['python']}; {report['machine']}; raw results in {args.out}\n")
    print(table(rows, trees))
    print()
    for line in targets(rows, source.name):
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
