"""Expert-problem recall for the fresh-eyes triage.

    python benchmarks/fresh-eyes/score_expert.py                       # recall from the `reported` marks
    python benchmarks/fresh-eyes/score_expert.py --findings run.json   # candidates from a new run.py output

`expert-problems.toml` lists the problems an expert found by reading the most stream-heavy
files; `reported` is the reviewer's judgement for the baseline run. With --findings, every
problem is shown with the findings of that run in the same file within +-WINDOW lines, so a
reviewer can mark `reported` for the new run (a nearby finding that claims something else
does not count: read its message).
"""
from __future__ import annotations

import argparse
import collections
import json
import pathlib

import tomllib

HERE = pathlib.Path(__file__).resolve().parent


def load_problems(path: pathlib.Path) -> list[dict]:
    with open(path, "rb") as f:
        return tomllib.load(f).get("problem", [])


def nearby(problem: dict, findings: list[dict], window: int) -> list[dict]:
    return [f for f in findings
            if f["repo"] == problem["repo"] and f["path"] == problem["path"]
            and abs(f["line"] - problem["line"]) <= window]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", default=str(HERE / "expert-problems.toml"))
    ap.add_argument("--findings", help="findings JSON written by benchmarks/triage/run.py --out")
    ap.add_argument("--window", type=int, default=3)
    args = ap.parse_args()
    problems = load_problems(pathlib.Path(args.problems))
    by_repo = collections.defaultdict(lambda: [0, 0])
    for p in problems:
        by_repo[p["repo"]][0] += 1
        by_repo[p["repo"]][1] += bool(p.get("reported"))
    print("| project | problems | reported (baseline marks) |")
    print("|---|---|---|")
    for repo, (n, r) in by_repo.items():
        print(f"| {repo} | {n} | {r} |")
    total, rep = len(problems), sum(bool(p.get("reported")) for p in problems)
    print(f"\nrecall (baseline marks): {rep}/{total} = {rep / total:.1%}" if total else "no problems")
    if args.findings:
        data = json.loads(pathlib.Path(args.findings).read_text())
        findings = [f for r in data["projects"] for f in r["findings"]]
        print(f"\nfindings of {args.findings} within +-{args.window} lines of each problem:")
        hit = 0
        for p in problems:
            near = nearby(p, findings, args.window)
            hit += bool(near)
            print(f"- {p['repo']} {p['path']}:{p['line']} {p['family']}: "
                  + ("; ".join(f"{f['code']}@{f['line']} {f['message'][:90]}" for f in near) or "none"))
        print(f"\nproblems with a finding nearby: {hit}/{len(problems)} (read them before marking `reported`)")


if __name__ == "__main__":
    main()
