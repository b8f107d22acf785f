"""Session 22: unblind the pooled verdicts and score both products.

    python unblind.py            # uses old-run.json, new-run.json, pool.txt, verdicts.txt here

pool.txt + pool2.txt (the seventh project, pooled later), verdicts.txt + verdicts2.txt: `number|verdict|reason` lines (TP, TP-low or FP), written against pool.txt before
unblinding. Prints per product the precision by rule code and by project, (TP+TP-low)/judged and
TP-only, the SL000 (time-out) diagnostics, the only-in-OLD / only-in-NEW lists and every verdict
with the products that reported it.
"""
import collections, json, pathlib, re

HERE = pathlib.Path(__file__).resolve().parent


def load_pool():
    num = {}
    for block in "\n\n".join((HERE / f).read_text().strip() for f in ("pool.txt", "pool2.txt")).split("\n\n"):
        lines = block.split("\n")
        m = re.match(r"#(\d+) \[(.*?)\] (.*):(\d+) (SL\d+) fp=(\w+)", lines[0])
        num[int(m[1])] = (m[2], m[3], int(m[4]), m[5], lines[2].split("msg: ", 1)[1])
    verdict = {}
    for line in "\n".join((HERE / f).read_text().strip() for f in ("verdicts.txt", "verdicts2.txt")).split("\n"):
        n, v, reason = line.split("|", 2)
        assert v in ("TP", "TP-low", "FP"), line
        verdict[num[int(n)]] = (v, reason, int(n))
    assert len(verdict) == len(num), (len(verdict), len(num))
    return verdict


def runs():
    out = {}
    for name, fn in (("OLD", "old-run.json"), ("NEW", "new-run.json")):
        d = json.loads((HERE / fn).read_text())
        out[name] = d
    return out


def table(rows, key):
    by = collections.defaultdict(collections.Counter)
    for r in rows:
        by[r[key]][r["v"]] += 1
        by["all"][r["v"]] += 1
    lines = [f"| {key} | TP | TP-low | FP | total | precision (TP+TP-low) | TP-only |", "|---|---|---|---|---|---|---|"]
    for k in sorted(by, key=lambda k: (k == "all", k)):
        c = by[k]
        n = sum(c.values())
        lines.append(f"| {k} | {c['TP']} | {c['TP-low']} | {c['FP']} | {n} | "
                     f"{c['TP'] + c['TP-low']}/{n} = {(c['TP'] + c['TP-low']) / n:.1%} | {c['TP']}/{n} = {c['TP'] / n:.1%} |")
    return "\n".join(lines)


def main():
    verdict = load_pool()
    data = runs()
    keys = {}
    for name, d in data.items():
        rows, diags, test = [], [], 0
        for p in d["projects"]:
            for f in p["findings"]:
                if f["code"] == "SL000":
                    diags.append(f)
                    continue
                if f["test_code"]:
                    test += 1
                    continue
                key = (f["repo"], f["path"], f["line"], f["code"], f["message"])
                keys.setdefault(name, set()).add(key)
                rows.append({"code": f["code"], "project": f["repo"], "v": verdict[key][0]})
        print(f"\n### {name}: {len(rows)} non-test findings, {test} in test/benchmark code (not judged), "
              f"{len(diags)} SL000\n")
        for f in diags:
            print(f"- SL000 {f['repo']} {f['path']}: {f['message'][:90]}")
        print(table(rows, "code"))
        print()
        print(table(rows, "project"))
        print("\nseconds per project:", {p["repo"]: p.get("seconds") for p in d["projects"]})
    for a, b in (("OLD", "NEW"), ("NEW", "OLD")):
        print(f"\n### only in {a}\n")
        for k in sorted(keys.get(a, set()) - keys.get(b, set())):
            v = verdict[k]
            print(f"- #{v[2]:03d} {k[0]} {k[1]}:{k[2]} {k[3]} **{v[0]}** {v[1]}")
    print("\n### every verdict\n")
    print("| # | project | file:line | code | reported by | verdict | reason |")
    print("|---|---|---|---|---|---|---|")
    for k, (v, reason, n) in sorted(verdict.items(), key=lambda kv: kv[1][2]):
        by = "+".join(x.lower() for x in ("OLD", "NEW") if k in keys.get(x, set()))
        print(f"| {n} | {k[0]} | `{k[1]}:{k[2]}` | {k[3]} | {by} | **{v}** | {reason} |")


if __name__ == "__main__":
    main()
