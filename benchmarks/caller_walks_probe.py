"""Session 18 measurement (throw-away switch, not in the product): which dev-set findings the
callers search decides. For every found bug of a results JSON whose labelled file is in a package
with other modules, check the parent (and the fixed) file as score.py does, under the environment
given (`SL_PROBE_NO_CALLERS=1`, `SL_PROBE_CALLER_WALKS=<n>`: a switch of the probe branch only),
and score found / silent after fix against the stored labelled lines.

    PYTHONPATH=$PWD/src nice -n 10 python benchmarks/caller_walks_probe.py --label off \
        --results benchmarks/recall/results-session17-v3-d33145c1.json --out /tmp/off.json
"""
from __future__ import annotations

import argparse, json, os, pathlib, resource, subprocess, sys, time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "recall"))
from score import near  # noqa: E402


def check(root: pathlib.Path, rel: str, timeout: int) -> tuple[list[dict], float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "streamlint", "check", "--format", "json", "--no-cache",
                        "--exit-zero", "--timeout", str(timeout), rel], cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = [{"code": f["code"], "line": f["location"]["row"], "message": f["message"]}
             for f in json.loads(p.stdout or "[]") if pathlib.PurePath(f["filename"]).as_posix().endswith(rel)]
    return found, cpu, wall


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--trees", default="/tmp/dev-trees")
    ap.add_argument("--label", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--fixed", action="store_true", help="also the fixed side")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()
    os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    from streamlint.model import resolve
    data = json.load(open(args.results))
    cache: dict = {}
    rows = []
    for b in data["bugs"]:
        if not b.get("found") or (args.only and b["id"] not in args.only):
            continue
        root = pathlib.Path(args.trees) / b["repo"].replace("/", "+") / b["parent"][:12] / "_repo"
        if len(resolve.enclosing_package_files(str(root / b["path"]), 256, 64)) < 2:
            continue
        row = {"id": b["id"], "rule": b["rule"]}
        for side, commit, lines in (("parent", b["parent"], b["parent_lines"]), ("fixed", b["fix"], b["fixed_lines"])):
            if side == "fixed" and not args.fixed:
                continue
            root = pathlib.Path(args.trees) / b["repo"].replace("/", "+") / commit[:12] / "_repo"
            key = (str(root), b["path"])
            if key not in cache:
                cache[key] = check(root, b["path"], args.timeout)
            findings, cpu, wall = cache[key]
            hits = near(findings, lines, b["rule"], data["match"], data["window"])
            row[side] = {"hits": len(hits), "cpu": round(cpu, 2), "wall": round(wall, 2), "n_findings": len(findings)}
        row["found"] = row["parent"]["hits"] > 0
        if "fixed" in row:
            row["silent_after_fix"] = row["fixed"]["hits"] == 0
        rows.append(row)
        print(args.label, row, flush=True)
    json.dump({"label": args.label, "rows": rows}, open(args.out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
