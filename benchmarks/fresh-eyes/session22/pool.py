"""Session 22 blind pool (copy of session18/pool.py). Pools the non-test findings of old-run.json and new-run.json (SL000
"timed out" diagnostics excluded and counted separately), de-duplicated by (repo, path, line, code,
message), shuffled with a fixed seed, written WITHOUT the product that reported each one.
The key (which product reported what) goes to a file outside the repository, read only after
every verdict was written; unblind.py recomputes it from the two runs."""
import argparse, json, pathlib, random
here = pathlib.Path(__file__).resolve().parent
ap = argparse.ArgumentParser()
ap.add_argument("--only", action="append", help="only these repositories (both products finished)")
ap.add_argument("--exclude-pool", action="append", default=[], help="earlier pool files: skip what they hold")
ap.add_argument("--out", default="pool.txt")
ap.add_argument("--start", type=int, default=1, help="first pool number")
ap.add_argument("--seed", type=int, default=2222)
ap.add_argument("--key", default="/tmp/s22/blind/key.json")
args = ap.parse_args()
runs = {k: json.loads((here / f"{k}-run.json").read_text()) for k in ("old", "new")}
seen = set()
for fn in args.exclude_pool:
    for block in (here / fn).read_text().strip().split("\n\n"):
        lines = block.split("\n")
        import re
        m = re.match(r"#(\d+) \[(.*?)\] (.*):(\d+) (SL\d+) fp=(\w+)", lines[0])
        seen.add((m[2], m[3], int(m[4]), m[5], lines[2].split("msg: ", 1)[1]))
pool = {}
for k, d in runs.items():
    for p in d["projects"]:
        for f in p["findings"]:
            if f["test_code"] or f["code"] == "SL000":
                continue
            if args.only and f["repo"] not in args.only:
                continue
            key = (f["repo"], f["path"], f["line"], f["code"], f["message"])
            pool.setdefault(key, {"f": f, "by": set()})["by"].add(k)
items = sorted(pool.values(), key=lambda it: (it["f"]["repo"], it["f"]["path"], it["f"]["line"], it["f"]["code"], it["f"]["message"]))
items = [it for it in items if (it["f"]["repo"], it["f"]["path"], it["f"]["line"], it["f"]["code"], it["f"]["message"]) not in seen]
random.Random(args.seed).shuffle(items)
with open(here / args.out, "w") as out:
    for i, it in enumerate(items, args.start):
        f = it["f"]
        out.write(f"#{i:03d} [{f['repo']}] {f['path']}:{f['line']} {f['code']} fp={f['fingerprint']}\n"
                  f"    text: {f['text']}\n    msg: {f['message']}\n\n")
key = {i: sorted(it["by"]) for i, it in enumerate(items, args.start)}
pathlib.Path(args.key).write_text(json.dumps(key))
print(len(items), "pooled non-test findings")
