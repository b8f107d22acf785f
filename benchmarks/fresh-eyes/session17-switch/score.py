"""Session 17, switch product (d33145c1): score switch-run.json with the session-17 verdicts.

    python score.py            (from this folder)

Every finding of the run is looked up by (repo, path, line, code, message) in the earlier reviewer's
verdict lists (../session17/pool*.txt + verdicts*.txt) and then in labels-session17-switch.toml (this
review's verdicts for fingerprints never judged before; it has none). Prints precision by code and project,
(a) those verdicts for all and (b) the README way (labels.toml where the text fingerprint has a label),
and the findings gone from / new against the 05c2cdf5 NEW run and the OLD run.
"""
import pathlib
import sys

import tomllib

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "session17"))
from unblind import findings, load_pool, table  # noqa: E402

S17 = HERE.parent / "session17"
verdict = {}
for pool, ver in (("pool.txt", "verdicts.txt"), ("pool2.txt", "verdicts2.txt")):
    verdict.update(load_pool(S17 / pool, S17 / ver))
for lab in tomllib.loads((HERE.parent / "labels-session17-switch.toml").read_text()).get("label", []):
    for line in lab["lines"]:
        verdict[(lab["repo"], lab["path"], line, lab["code"], lab["message"])] = (lab["verdict"], lab["reason"])
labels = {l["fingerprint"]: l for l in tomllib.loads((HERE.parent / "labels.toml").read_text())["label"]}

def key(f):
    return (f["repo"], f["path"], f["line"], f["code"], f["message"])

run = findings(HERE / "switch-run.json")
missing = [key(f) for f in run if key(f) not in verdict]
print(f"{len(run)} non-test findings, {len(missing)} without a verdict")
for k in missing:
    print("  NO VERDICT:", k)
for way in ("a", "b"):
    rows = []
    for f in run:
        v = verdict.get(key(f), ("unjudged",))[0]
        if way == "b" and f["fingerprint"] in labels:
            v = labels[f["fingerprint"]]["verdict"]
        rows.append({"code": f["code"], "project": f["repo"], "v": v})
    print(f"\n### switch ({'verdicts for all' if way == 'a' else 'README way: labels.toml where labelled'})\n")
    print(table(rows, "code"))
    print()
    print(table(rows, "project"))
S = {key(f) for f in run}
for name, other in (("05c2cdf5 NEW", S17 / "new-run.json"), ("OLD", S17 / "old-run.json")):
    O = {key(f) for f in findings(other)}
    print(f"\n### in {name}, gone in switch\n")
    for k in sorted(O - S):
        print("-", f"{k[0]} {k[1]}:{k[2]}", k[3], verdict[k][0], "|", k[4][:150])
    print(f"\n### in switch, not in {name}\n")
    for k in sorted(S - O):
        print("-", f"{k[0]} {k[1]}:{k[2]}", k[3], verdict[k][0], "|", k[4][:150])
