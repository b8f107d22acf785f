"""Real-world triage harness: run streamlint on pinned public projects and score its precision.

    python benchmarks/triage/run.py                          # run all projects, write findings.json, report
    python benchmarks/triage/run.py --only cupy/cupy         # one project
    python benchmarks/triage/run.py --report findings.json   # report only (after editing labels.toml)
    python benchmarks/triage/run.py --fetch-list             # repositories to fetch

Each project of projects.toml is extracted at its pinned commit from the fetched mirror
(`<mirrors>/<owner>+<name>/repo`, default /work/.mirror) into a work directory; the `.py`
and `.ipynb` files whose text matches `select` are checked in one streamlint run per
project (`python -m streamlint check --format json --no-cache --exit-zero <files>`, cwd =
the project root, so cross-module helpers resolve as for a user).

Every finding gets a stable fingerprint: sha1 of "repo|path|code|stripped line text"
(line numbers are not part of it, so findings keep their labels when code moves). The
verdicts live in labels.toml, keyed by that fingerprint:

- TP: the claim holds and an expert would want it fixed;
- TP-low: the claim holds, but the cost is small or inherent;
- defensible: a reasonable reviewer could go either way, the claim is not wrong;
- FP-context: the claim holds literally, but in a place nobody wants it (timing harness,
  one-time setup, debug path);
- FP: the claim is wrong (an analysis mistake).

Precision on non-test code = (TP + TP-low + defensible) / labelled non-test findings;
the report also gives it with FP-context counted as acceptable, and lists every
unlabelled finding so that a new analysis can be labelled (read the code!).
Test code: a path part `test`, `tests`, `testing` or `*_test(s)`, a name `test_*.py`,
`*_test.py` or `test.py`, or a part containing `bench` (as in docs/real-world.md).
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

HERE = pathlib.Path(__file__).resolve().parent
GOOD = ("TP", "TP-low", "defensible")
# SL000 (a file or notebook cell that does not parse, or a timeout) is a diagnostic, not a
# claim about streams: counted and listed, but not part of the precision.
DIAGNOSTICS = ("SL000",)
VERDICTS = ("TP", "TP-low", "defensible", "FP-context", "FP")


def is_test_path(path: str) -> bool:
    parts = pathlib.PurePosixPath(path).parts
    name = parts[-1]
    for p in parts[:-1]:
        if p in ("test", "tests", "testing") or p.endswith(("_test", "_tests")) or "bench" in p:
            return True
    stem = name.rsplit(".", 1)[0]
    return (name.startswith("test_") or stem.endswith("_test") or stem == "test"
            or "bench" in name)


def fingerprint(repo: str, path: str, code: str, text: str) -> str:
    return hashlib.sha1(f"{repo}|{path}|{code}|{text.strip()}".encode()).hexdigest()[:16]


def extract(mirror: pathlib.Path, commit: str, dest: pathlib.Path, roots: tuple[str, ...] = ()) -> None:
    """Python sources, notebooks and pyproject.toml of `commit` (under `roots`, if given).

    Snapshots may lack the blobs of large files, so only these files are extracted,
    by name; a blob that is absent is skipped.
    """
    if (dest / ".done").exists():
        return
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    names = subprocess.run(["git", "-C", str(mirror), "ls-tree", "-r", "--name-only", "-z", commit, "--", *roots],
                           capture_output=True, check=True).stdout.decode().split("\0")
    names = [n for n in names if n.endswith((".py", ".pyi", ".ipynb")) or n == "pyproject.toml"]
    for i in range(0, len(names), 500):
        part = names[i:i + 500]
        p = subprocess.run(["git", "-C", str(mirror), "archive", "--format=tar", commit, "--", *part],
                           capture_output=True)
        if p.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(dest)], input=p.stdout, check=True)
            continue
        for n in part:  # one absent blob fails the whole archive: go file by file
            q = subprocess.run(["git", "-C", str(mirror), "show", f"{commit}:{n}"], capture_output=True)
            if q.returncode == 0:
                (dest / n).parent.mkdir(parents=True, exist_ok=True)
                (dest / n).write_bytes(q.stdout)
    (dest / ".done").write_text("")


def select_files(root: pathlib.Path, pattern: str) -> list[str]:
    rx = re.compile(pattern)
    out = []
    for p in sorted(root.rglob("*")):
        if p.suffix not in (".py", ".ipynb") or not p.is_file():
            continue
        try:
            if rx.search(p.read_text(errors="replace")):
                out.append(p.relative_to(root).as_posix())
        except OSError:
            continue
    return out


def notebook_cell_lines(path: pathlib.Path, cell) -> list[str]:
    nb = json.loads(path.read_text())
    cells = nb.get("cells", [])
    idx = int(cell) - 1 if isinstance(cell, int) or str(cell).isdigit() else None
    if idx is None or not (0 <= idx < len(cells)):
        return []
    src = cells[idx].get("source", "")
    return ("".join(src) if isinstance(src, list) else src).splitlines()


def run_project(args, proj: dict, pattern: str, work: pathlib.Path) -> dict:
    repo, commit = proj["repo"], proj["commit"]
    mirror = pathlib.Path(args.mirrors) / repo.replace("/", "+") / "repo"
    if not (mirror / "objects").exists():
        return {"repo": repo, "commit": commit, "status": "missing-mirror", "findings": []}
    root = work / repo.replace("/", "+") / commit[:12]
    extract(mirror, commit, root)
    files = select_files(root, proj.get("select", pattern))
    t0 = time.perf_counter()
    findings, errors = [], []
    # One run per project keeps cross-module resolution; chunk only to stay under ARG_MAX.
    chunk = 3000
    for i in range(0, len(files), chunk):
        cmd = [args.python, "-m", "streamlint", "check", "--format", "json", "--no-cache",
               "--exit-zero", "--timeout", str(args.timeout), *args.streamlint_arg, *files[i:i + chunk]]
        p = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
        try:
            findings += json.loads(p.stdout or "[]")
        except json.JSONDecodeError:
            errors.append(f"rc={p.returncode}: {(p.stderr or p.stdout)[-500:]}")
    secs = time.perf_counter() - t0
    out = []
    cache: dict[str, list[str]] = {}
    for f in findings:
        path = pathlib.PurePath(f["filename"]).as_posix()
        if path.startswith(str(root)):
            path = path[len(str(root)) + 1:]
        line = f["location"]["row"]
        key = f"{path}#{f.get('cell')}"
        if key not in cache:
            fp = root / path
            try:
                cache[key] = (notebook_cell_lines(fp, f["cell"]) if f.get("cell") not in (None, "")
                              else fp.read_text(errors="replace").splitlines())
            except (OSError, ValueError):
                cache[key] = []
        src = cache[key]
        text = src[line - 1].strip() if 1 <= line <= len(src) else ""
        out.append({
            "fingerprint": fingerprint(repo, path, f["code"], text),
            "repo": repo, "path": path, "cell": f.get("cell"), "line": line, "code": f["code"],
            "text": text, "message": f["message"], "test_code": is_test_path(path),
        })
    return {"repo": repo, "commit": commit, "status": "ok", "files": len(files), "seconds": round(secs, 1),
            "errors": errors, "findings": out}


def load_labels(path: pathlib.Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    with open(path, "rb") as f:
        data = tomllib.load(f)
    labels = {}
    for lab in data.get("label", []):
        fp = lab.get("fingerprint") or fingerprint(lab["repo"], lab["path"], lab["code"], lab["text"])
        if lab["verdict"] not in VERDICTS:
            raise SystemExit(f"labels.toml: unknown verdict {lab['verdict']!r} for {fp}")
        labels[fp] = lab
    return labels


def report(results: list[dict], labels: dict[str, dict], out=sys.stdout) -> dict:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    allf = [f for r in results for f in r["findings"]]
    prod = [f for f in allf if not f["test_code"] and f["code"] not in DIAGNOSTICS]
    diags = [f for f in allf if not f["test_code"] and f["code"] in DIAGNOSTICS]
    p(f"projects: {len(results)} ({sum(r['status'] != 'ok' for r in results)} skipped: "
      + ", ".join(r["repo"] for r in results if r["status"] != "ok") + ")")
    p(f"files checked: {sum(r.get('files', 0) for r in results)}; findings: {len(allf)} "
      f"({len(prod)} in non-test code, not counting SL000); SL000: {sum(f['code'] == 'SL000' for f in allf)} "
      f"({len(diags)} in non-test code); "
      f"streamlint errors: {sum(len(r.get('errors', [])) for r in results)}")
    p("")
    p("| project | files | findings | non-test | seconds |")
    p("|---|---|---|---|---|")
    for r in results:
        if r["status"] != "ok":
            p(f"| {r['repo']} | - | - | - | {r['status']} |")
            continue
        p(f"| {r['repo']} | {r['files']} | {len(r['findings'])} | "
          f"{sum(not f['test_code'] and f['code'] not in DIAGNOSTICS for f in r['findings'])} | {r['seconds']} |")
    p("")
    p("Non-test code, by rule and verdict:")
    p("")
    p("| code | " + " | ".join(VERDICTS) + " | unlabelled | total |")
    p("|---|" + "---|" * (len(VERDICTS) + 2))
    counts = collections.defaultdict(collections.Counter)
    for f in prod:
        v = labels.get(f["fingerprint"], {}).get("verdict", "unlabelled")
        counts[f["code"]][v] += 1
        counts["all"][v] += 1
    for code in sorted(c for c in counts if c != "all") + ["all"]:
        c = counts[code]
        p(f"| {code} | " + " | ".join(str(c[v]) for v in VERDICTS) + f" | {c['unlabelled']} | {sum(c.values())} |")
    c = counts["all"]
    labelled = sum(c[v] for v in VERDICTS)
    good = sum(c[v] for v in GOOD)
    lenient = good + c["FP-context"]
    prec = 100.0 * good / labelled if labelled else None
    p("")
    if labelled:
        p(f"precision on non-test code: {good}/{labelled} = {prec:.1f}% (TP + TP-low + defensible); "
          f"with FP-context accepted: {lenient}/{labelled} = {100.0 * lenient / labelled:.1f}%")
    p(f"unlabelled non-test findings: {c['unlabelled']} (test-code findings, all: {len(allf) - len(prod)}, "
      f"labelled: {sum(1 for f in allf if f['test_code'] and f['fingerprint'] in labels)})")
    if diags:
        p("")
        p("SL000 in non-test code (not counted above):")
        for f in diags:
            where = f"{f['path']}:{f['line']}" + (f" (cell {f['cell']})" if f.get("cell") not in (None, "") else "")
            p(f"  {f['repo']} {where}: {f['message'][:100]}")
    unl = [f for f in prod if f["fingerprint"] not in labels]
    if unl:
        p("")
        p("Unlabelled non-test findings (label them in labels.toml):")
        for f in unl:
            where = f"{f['path']}:{f['line']}" + (f" (cell {f['cell']})" if f.get("cell") not in (None, "") else "")
            p(f"  {f['fingerprint']} {f['repo']} {where} {f['code']}: {f['text'][:90]}")
    return {"labelled_non_test": labelled, "good_non_test": good, "precision_non_test": prec,
            "precision_non_test_lenient": 100.0 * lenient / labelled if labelled else None,
            "unlabelled_non_test": c["unlabelled"], "by_code": {k: dict(v) for k, v in counts.items()}}


def absolute_pythonpath() -> None:
    """streamlint runs with cwd = the extracted project: a relative PYTHONPATH (`src`) would
    name nothing there, and an installed streamlint (another checkout's) would be checked."""
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if parts:
        os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in parts)


def main() -> int:
    absolute_pythonpath()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--projects", default=str(HERE / "projects.toml"))
    ap.add_argument("--labels", default=str(HERE / "labels.toml"))
    ap.add_argument("--mirrors", default=os.environ.get("STREAMLINT_MIRRORS", "/work/.mirror"))
    ap.add_argument("--python", default=sys.executable, help="interpreter with streamlint installed")
    ap.add_argument("--work-dir", help="keep extracted trees here (default: a temporary directory)")
    ap.add_argument("--out", default="findings.json", help="findings JSON (default ./findings.json)")
    ap.add_argument("--timeout", type=float, default=60.0, help="streamlint --timeout per file")
    ap.add_argument("--streamlint-arg", action="append", default=[], help="extra `streamlint check` argument")
    ap.add_argument("--only", action="append", help="only these repositories (owner/name, repeatable)")
    ap.add_argument("--report", metavar="FINDINGS_JSON", help="only print the report for an earlier run")
    ap.add_argument("--report-out", help="also write the report (markdown-ish text) here")
    ap.add_argument("--fetch-list", action="store_true")
    args = ap.parse_args()

    with open(args.projects, "rb") as f:
        cfg = tomllib.load(f)
    projects = cfg["project"]
    if args.only:
        projects = [p for p in projects if p["repo"] in set(args.only)]
    if args.fetch_list:
        for p in projects:
            print(f"github:{p['repo']}")
        return 0
    labels = load_labels(pathlib.Path(args.labels))
    if args.report:
        results = json.loads(pathlib.Path(args.report).read_text())["projects"]
    else:
        work = pathlib.Path(args.work_dir) if args.work_dir else pathlib.Path(tempfile.mkdtemp(prefix="sl-triage-"))
        results = []
        for proj in projects:
            r = run_project(args, proj, cfg.get("select", "."), work)
            print(f"  {proj['repo']}: {r['status']}, {r.get('files', 0)} files, {len(r['findings'])} findings, "
                  f"{r.get('seconds', 0)}s", file=sys.stderr)
            results.append(r)
        pathlib.Path(args.out).write_text(json.dumps({"projects": results}, indent=1))
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    summary = report(results, labels)
    if args.report_out:
        with open(args.report_out, "w") as f:
            report(results, labels, out=f)
    return 0 if summary is not None else 1


if __name__ == "__main__":
    sys.exit(main())
