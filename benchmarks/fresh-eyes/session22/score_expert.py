"""Session 22: expert-problem recall per product, and the findings of each run near each problem.

    python score_expert.py             # recall from the `old` / `new` marks in expert-problems-session22.toml
    python score_expert.py --near 12   # also list every finding within 12 lines of a problem (old-run.json, new-run.json)

The marks were set by reading each nearby finding's message: a finding nearby that claims something
else does not count.
"""
import argparse, collections, json, pathlib, tomllib
HERE = pathlib.Path(__file__).resolve().parent
ap = argparse.ArgumentParser()
ap.add_argument("--near", type=int, default=0)
args = ap.parse_args()
probs = tomllib.loads((HERE.parent / "expert-problems-session22.toml").read_text())["problem"]
runs = {k: [f for p in json.loads((HERE / f"{k}-run.json").read_text())["projects"] for f in p["findings"]]
        for k in ("old", "new")}
tot = collections.Counter()
for p in probs:
    for k in ("old", "new"):
        tot[k, "all"] += p[k]
        tot[k, p["severity"]] += p[k]
    tot["n", "all"] += 1
    tot["n", p["severity"]] += 1
    if args.near:
        print(f"{p['repo']} {p['file']}:{p['line']} {p['family']} {p['severity']} old={p['old']} new={p['new']}")
        for k, fs in runs.items():
            for f in fs:
                if f["repo"] == p["repo"] and f["path"] == p["file"] and abs(f["line"] - p["line"]) <= args.near:
                    print(f"    {k}: {f['path']}:{f['line']} {f['code']} {f['message'][:120]}")
for sev in ("all", "TP", "TP-low"):
    n = tot["n", sev]
    print(f"{sev}: {n} problems; OLD {tot['old', sev]}/{n}, NEW {tot['new', sev]}/{n}")
