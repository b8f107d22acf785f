import json, random, re, os
RUNS = "/tmp/rv49/session46/runs"
OUT = "/tmp/rv49/session46"
projects = ["Gaussian-SLAM", "pytorch-a2c-ppo-acktr-gail", "kernl", "nvdiffrec", "tomoalign"]
variants = {"old": "OLD", "new": "NEW", "newcuda": "NEW+cuda"}
pat = re.compile(r"^(?P<path>[^:\s][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<code>SL\d+) (?P<msg>.*)$")
pool = {}
for p in projects:
    for v, label in variants.items():
        with open(os.path.join(RUNS, f"{v}-{p}.txt")) as f:
            for ln in f:
                m = pat.match(ln.rstrip("\n"))
                if not m:
                    continue
                key = (p, m["path"], int(m["line"]), m["code"], m["msg"])
                ent = pool.setdefault(key, {"col": int(m["col"]), "variants": []})
                if label not in ent["variants"]:
                    ent["variants"].append(label)
keys = sorted(pool)
random.Random(49).shuffle(keys)
secret = {}
with open(os.path.join(OUT, "pooled.txt"), "w") as f:
    for i, k in enumerate(keys, 1):
        jid = f"J{i:03d}"
        p, path, line, code, msg = k
        f.write(f"{jid} | {p} | {path}:{line}:{pool[k]['col']} | {code} | {msg}\n")
        secret[jid] = pool[k]["variants"]
with open(os.path.join(OUT, "secret-versions.json"), "w") as f:
    json.dump(secret, f, indent=1)
print(len(keys), "pooled findings")
