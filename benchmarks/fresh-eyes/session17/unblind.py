"""Session 17: unblind the pooled verdicts and score both products.

    python unblind.py OLD.json NEW.json POOL.txt VERDICTS.txt [POOL2.txt VERDICTS2.txt ...]

POOL*.txt are the blind lists (written by pool.py without saying which product reported what);
VERDICTS*.txt are `number|verdict|reason` lines. A finding is keyed by (repo, path, line, code,
message). Prints, per product, precision with the reviewer's verdicts for all findings (a) and
the README's way (b: labels.toml where the fingerprint has a label, the reviewer's otherwise).
"""
import collections
import json
import pathlib
import re
import sys

import tomllib

HERE = pathlib.Path(__file__).resolve().parent
OK = {"TP", "TP-low"}


def load_pool(pool, verdicts):
    num = {}
    for block in pathlib.Path(pool).read_text().strip().split("\n\n"):
        lines = block.split("\n")
        m = re.match(r"#(\d+) \[(.*?)\] (.*):(\d+) (SL\d+) fp=(\w+)", lines[0])
        num[int(m[1])] = (m[2], m[3], int(m[4]), m[5], lines[2].split("msg: ", 1)[1])
    out = {}
    for line in pathlib.Path(verdicts).read_text().strip().split("\n"):
        n, v, reason = line.split("|", 2)
        out[num[int(n)]] = (v, reason)
    return out


def findings(run):
    d = json.loads(pathlib.Path(run).read_text())
    return [f for p in d["projects"] for f in p["findings"] if not f["test_code"] and f["code"] != "SL000"]


def table(rows, key):
    by = collections.defaultdict(collections.Counter)
    for r in rows:
        by[r[key]][r["v"]] += 1
        by["all"][r["v"]] += 1
    lines = [f"| {key} | TP | TP-low | FP | total | precision | TP-only |", "|---|---|---|---|---|---|---|"]
    for k in sorted(by, key=lambda k: (k == "all", k)):
        c = by[k]
        n = sum(c.values())
        lines.append(f"| {k} | {c['TP']} | {c['TP-low']} | {c['FP']} | {n} | "
                     f"{c['TP'] + c['TP-low']}/{n} = {(c['TP'] + c['TP-low']) / n:.1%} | {c['TP']}/{n} = {c['TP'] / n:.1%} |")
    return "\n".join(lines)


def main():
    old, new, *pv = sys.argv[1:]
    verdict = {}
    for pool, ver in zip(pv[::2], pv[1::2]):
        verdict.update(load_pool(pool, ver))
    labels = {l["fingerprint"]: l for l in tomllib.loads((HERE.parent / "labels.toml").read_text())["label"]}
    runs = {"OLD": findings(old), "NEW": findings(new)}
    keys = {k: {(f["repo"], f["path"], f["line"], f["code"], f["message"]) for f in fs} for k, fs in runs.items()}
    for name, fs in runs.items():
        for way in ("a", "b"):
            rows = []
            for f in fs:
                key = (f["repo"], f["path"], f["line"], f["code"], f["message"])
                v = verdict[key][0]
                if way == "b" and f["fingerprint"] in labels:
                    v = labels[f["fingerprint"]]["verdict"]
                rows.append({"code": f["code"], "project": f["repo"], "v": v})
            print(f"\n### {name} ({'reviewer verdicts for all' if way == 'a' else 'README way: labels.toml where labelled'})\n")
            print(table(rows, "code"))
            print()
            print(table(rows, "project"))
    print("\n### only in OLD\n")
    for k in sorted(keys["OLD"] - keys["NEW"]):
        print("-", k[0], f"{k[1]}:{k[2]}", k[3], verdict[k][0], "|", k[4][:150])
    print("\n### only in NEW\n")
    for k in sorted(keys["NEW"] - keys["OLD"]):
        print("-", k[0], f"{k[1]}:{k[2]}", k[3], verdict[k][0], "|", k[4][:150])


if __name__ == "__main__":
    main()
