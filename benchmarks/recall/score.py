"""Score streamlint's recall on real stream bugs taken from public fix commits.

For every bug of manifest.toml the script rebuilds the parent and the fixed version of
the file from a fetched bare mirror (`<mirrors>/<owner>+<name>/repo`), together with the
top-level package directory that holds it (so that helpers in other modules of the same
package are visible), runs streamlint on the file as a user would
(`python -m streamlint check --format json --no-cache <file>`, cwd = the extracted tree),
and scores:

- found: a finding of the labelled rule's family (SL1, SL2, SL3, SL4 = SL401-SL404, SL5;
  or the exact code with --match exact) within +-window lines of one of the labelled
  parent lines;
- silent after fix: no finding of that family within +-window lines of any labelled
  line of the fixed version.

Nothing third-party is stored in this repository: the code comes from the mirrors at
run time (see --fetch-list). A bug whose mirror is missing is skipped and counted.

The product measured is the checkout's own (`src/`, the v3 rules on the v3 model) unless
PYTHONPATH names another.

    python benchmarks/recall/score.py                       # table
    python benchmarks/recall/score.py --json out.json       # plus per-bug JSON
    python benchmarks/recall/score.py --fetch-list          # repositories to fetch
    python benchmarks/recall/score.py --only apex-prefetcher-record-stream -v
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import pathlib
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
FAMILIES = ("SL1", "SL2", "SL3", "SL4", "SL5")


def family(code: str) -> str:
    return code[:3]


def load_manifest(path: pathlib.Path) -> list[dict]:
    with open(path, "rb") as f:
        return tomllib.load(f)["bug"]


def mirror_of(root: pathlib.Path, repo: str) -> pathlib.Path:
    """The git directory of a fetched repository: a bare mirror (`repo`), or the `.git`
    of a snapshot that arrived as a clone with a work tree (`repo/.git`)."""
    base = root / repo.replace("/", "+") / "repo"
    return base / ".git" if (base / ".git").is_dir() else base


def tree_roots(bug: dict, path: str, scope: str = "repo") -> list[str]:
    """What to extract: the whole repository (as a user runs streamlint from its root),
    or with `--tree top` the bug's own list, else the file's top-level directory."""
    if scope == "repo":
        return []
    if "tree" in bug:
        return list(bug["tree"])
    parts = path.split("/")
    return [parts[0]] if len(parts) > 1 else [path]


def extract(mirror: pathlib.Path, commit: str, roots: list[str], dest: pathlib.Path) -> None:
    """The Python sources (and pyproject.toml files) of `commit` under `roots`, into `dest`.

    Only .py/.pyi/pyproject.toml are taken, by name: snapshots may lack the blobs of large
    files, and one absent blob would fail a whole `git archive`; a missing blob is skipped.
    """
    if (dest / ".done").exists():
        return
    dest.mkdir(parents=True, exist_ok=True)
    names = subprocess.run(["git", "-C", str(mirror), "ls-tree", "-r", "--name-only", "-z", commit, "--", *roots],
                           capture_output=True, check=True).stdout.decode().split("\0")
    names = [n for n in names if n.endswith((".py", ".pyi")) or n.endswith("pyproject.toml")]
    for i in range(0, len(names), 500):
        part = names[i:i + 500]
        p = subprocess.run(["git", "-C", str(mirror), "archive", "--format=tar", commit, "--", *part],
                           capture_output=True)
        if p.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(dest)], input=p.stdout, check=True)
            continue
        for n in part:
            q = subprocess.run(["git", "-C", str(mirror), "show", f"{commit}:{n}"], capture_output=True)
            if q.returncode == 0:
                (dest / n).parent.mkdir(parents=True, exist_ok=True)
                (dest / n).write_bytes(q.stdout)
    (dest / ".done").write_text("")


def run_streamlint(python: str, root: pathlib.Path, rel: str, timeout: float, extra: list[str]) -> dict:
    cmd = [python, "-m", "streamlint", "check", "--format", "json", "--no-cache",
           "--exit-zero", "--timeout", str(timeout), *extra, rel]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout * 4 + 60)
    except subprocess.TimeoutExpired:
        return {"error": "timeout", "findings": [], "seconds": time.perf_counter() - t0}
    secs = time.perf_counter() - t0
    try:
        findings = json.loads(p.stdout or "[]")
    except json.JSONDecodeError:
        return {"error": f"rc={p.returncode}: {(p.stderr or p.stdout)[-400:]}", "findings": [], "seconds": secs}
    out = [
        {"code": f["code"], "line": f["location"]["row"], "message": f["message"]}
        for f in findings
        if pathlib.PurePath(f["filename"]).as_posix().endswith(rel)
    ]
    err = None
    if any(f["code"] == "SL000" for f in out):
        err = "SL000: " + next(f["message"] for f in out if f["code"] == "SL000")[:200]
    return {"error": err, "findings": out, "seconds": secs}


def relocate(src_lines: list[str], line: int, text: str) -> int:
    """The labelled line, moved to the nearest line with the labelled text if it drifted."""
    if 1 <= line <= len(src_lines) and src_lines[line - 1].strip() == text:
        return line
    hits = [i for i, l in enumerate(src_lines, 1) if l.strip() == text]
    return min(hits, key=lambda i: abs(i - line)) if hits else line


def matches(f: dict, rule: str, mode: str) -> bool:
    return f["code"] == rule if mode == "exact" else family(f["code"]) == family(rule)


def near(findings: list[dict], lines: list[int], rule: str, mode: str, window: int) -> list[dict]:
    return [f for f in findings if matches(f, rule, mode) and any(abs(f["line"] - n) <= window for n in lines)]


def absolute_pythonpath() -> None:
    """streamlint runs with cwd = the extracted project: a relative PYTHONPATH (`src`) would
    name nothing there, and an installed streamlint (another checkout's) would be checked.
    Without a PYTHONPATH, the product of this checkout (`src/`) is measured."""
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if not parts:
        parts = [str(HERE.parent.parent / "src")]
    os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in parts)


def main() -> int:
    absolute_pythonpath()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", default=str(HERE / "manifest.toml"))
    ap.add_argument("--mirrors", default=os.environ.get("STREAMLINT_MIRRORS", "/work/.mirror"),
                    help="root of the fetched mirrors, <root>/<owner>+<name>/repo (default /work/.mirror)")
    ap.add_argument("--python", default=sys.executable, help="interpreter with streamlint installed")
    ap.add_argument("--tree", choices=("repo", "top"), default="repo",
                    help="extract the whole repository (default) or only the file's top-level directory")
    ap.add_argument("--work-dir", help="keep extracted trees here (default: a temporary directory)")
    ap.add_argument("--window", type=int, default=2, help="line tolerance (default 2)")
    ap.add_argument("--match", choices=("family", "exact"), default="family",
                    help="a finding counts if its code is in the labelled rule's family (default) or equal")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0, help="streamlint --timeout per file")
    ap.add_argument("--streamlint-arg", action="append", default=[],
                    help="extra argument for `streamlint check` (repeatable), e.g. --streamlint-arg=--select=ALL")
    ap.add_argument("--only", action="append", help="score only these bug ids (repeatable)")
    ap.add_argument("--json", help="write per-bug results and the summary here")
    ap.add_argument("--fetch-list", action="store_true", help="print the repositories to fetch and exit")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    bugs = load_manifest(pathlib.Path(args.manifest))
    if args.only:
        bugs = [b for b in bugs if b["id"] in set(args.only)]
    if args.fetch_list:
        for repo in sorted({b["repo"] for b in bugs}):
            print(f"github:{repo}")
        return 0

    mirrors = pathlib.Path(args.mirrors)
    work = pathlib.Path(args.work_dir) if args.work_dir else pathlib.Path(tempfile.mkdtemp(prefix="sl-recall-"))
    work.mkdir(parents=True, exist_ok=True)

    # One streamlint run per (repo, commit, path); several bugs can share it.
    jobs: dict[tuple[str, str, str], dict] = {}
    results: list[dict] = []
    for b in bugs:
        res = {k: b[k] for k in ("id", "repo", "framework", "rule", "scope", "path", "fix", "parent")}
        res["test_code"] = bool(b.get("test_code", False))
        res["family"] = family(b["rule"])
        m = mirror_of(mirrors, b["repo"])
        if not (m / "HEAD").exists() and not (m / "objects").exists():
            res["status"] = "missing-mirror"
            res["note"] = f"no mirror at {m}; fetch github:{b['repo']}"
        else:
            res["status"] = "pending"
            fpath = b.get("fixed_path", b["path"])
            jobs.setdefault((b["repo"], b["parent"], b["path"]), {})
            jobs.setdefault((b["repo"], b["fix"], fpath), {})
        results.append(res)

    def do(key):
        repo, commit, path = key
        bug = next(b for b in bugs if b["repo"] == repo
                   and ((b["parent"] == commit and b["path"] == path)
                        or (b["fix"] == commit and b.get("fixed_path", b["path"]) == path)))
        roots = tree_roots(bug, path, args.tree)
        # One tree per (commit, roots): two bugs of one commit may need different directories.
        dest = work / repo.replace("/", "+") / commit[:12] / ("_".join(r.replace("/", "+") for r in roots) or "_repo")
        try:
            extract(mirror_of(mirrors, repo), commit, roots, dest)
        except subprocess.CalledProcessError as e:
            return key, {"error": f"extract failed: {e}", "findings": [], "src": []}
        src = (dest / path).read_text(errors="replace").splitlines() if (dest / path).exists() else []
        r = run_streamlint(args.python, dest, path, args.timeout, args.streamlint_arg)
        r["src"] = src
        return key, r

    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        for key, r in ex.map(do, list(jobs)):
            jobs[key] = r
            if args.verbose:
                print(f"  ran {key[0]} {key[1][:10]} {key[2]}: {len(r['findings'])} findings, "
                      f"{r.get('seconds', 0):.1f}s{' ERROR ' + r['error'] if r.get('error') else ''}",
                      file=sys.stderr)

    for b, res in zip(bugs, results):
        if res["status"] == "missing-mirror":
            continue
        pr = jobs[(b["repo"], b["parent"], b["path"])]
        fr = jobs[(b["repo"], b["fix"], b.get("fixed_path", b["path"]))]
        plines = [relocate(pr["src"], x["line"], x["text"]) for x in b["parent_lines"]]
        flines = [relocate(fr["src"], x["line"], x["text"]) for x in b["fixed_lines"]]
        hit = near(pr["findings"], plines, b["rule"], args.match, args.window)
        after = near(fr["findings"], flines, b["rule"], args.match, args.window)
        res["status"] = "error" if pr.get("error") and not hit else "scored"
        res["error"] = pr.get("error") or fr.get("error")
        res["found"] = bool(hit)
        res["silent_after_fix"] = not after
        res["parent_lines"] = plines
        res["fixed_lines"] = flines
        res["parent_hits"] = hit
        res["fixed_hits"] = after
        res["parent_findings"] = pr["findings"]
        res["fixed_findings_near"] = after

    # Table per family.
    rows = []
    for fam in FAMILIES + ("all",):
        sel = [r for r in results if fam == "all" or r["family"] == fam]
        if not sel:
            continue
        scored = [r for r in sel if r["status"] in ("scored", "error")]
        found = [r for r in scored if r.get("found")]
        silent = [r for r in found if r.get("silent_after_fix")]
        rows.append({
            "family": fam, "bugs": len(sel), "scored": len(scored),
            "skipped": len(sel) - len(scored), "found": len(found),
            "found_pct": 100.0 * len(found) / len(scored) if scored else 0.0,
            "silent_among_found": len(silent),
            "silent_pct": 100.0 * len(silent) / len(found) if found else None,
            "errors": sum(1 for r in sel if r.get("error")),
        })

    print(f"{'family':<7} {'bugs':>5} {'scored':>7} {'found':>6} {'found %':>8} {'silent/found':>13} {'silent %':>9} {'skipped':>8} {'errors':>7}")
    for r in rows:
        sp = "-" if r["silent_pct"] is None else f"{r['silent_pct']:.0f}%"
        print(f"{r['family']:<7} {r['bugs']:>5} {r['scored']:>7} {r['found']:>6} {r['found_pct']:>7.0f}% "
              f"{str(r['silent_among_found']) + '/' + str(r['found']):>13} {sp:>9} {r['skipped']:>8} {r['errors']:>7}")
    fw = {}
    for r in results:
        d = fw.setdefault(r["framework"], [0, 0])
        d[0] += 1
        d[1] += bool(r.get("found"))
    print("by framework: " + ", ".join(f"{k} {v[1]}/{v[0]}" for k, v in sorted(fw.items())))
    missing = sorted({r["repo"] for r in results if r["status"] == "missing-mirror"})
    if missing:
        print(f"skipped {sum(r['status'] == 'missing-mirror' for r in results)} bugs: no mirror for "
              + ", ".join(missing) + f" under {mirrors} (see --fetch-list)")
    if args.verbose:
        for r in results:
            mark = {True: "FOUND ", False: "missed"}.get(r.get("found"), r["status"])
            tail = "" if not r.get("found") else (" silent-after-fix" if r["silent_after_fix"] else " STILL REPORTED after fix")
            print(f"  {mark} {r['rule']} {r['id']}{tail}{' [' + r['error'] + ']' if r.get('error') else ''}")
    print(f"({len(jobs)} streamlint runs, {time.perf_counter() - t0:.0f}s)")

    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {"window": args.window, "match": args.match, "summary": rows, "bugs": results}, indent=1))
    if not args.work_dir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
