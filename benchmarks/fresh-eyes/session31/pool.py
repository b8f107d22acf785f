import re, json, random, glob, os
pat = re.compile(r'^(?P<path>.+?):(?:(?P<cell>cell \d+):)?(?P<line>\d+):(?P<col>\d+): (?P<code>SL\d+) (?P<msg>.*)$')
projects = ["YOLOX","cusignal","nunchaku","sample-factory","habitat-lab","xtuner"]
pool = {}
for proj in projects:
    for ver in ["old","new"]:
        for l in open(f"/tmp/rv33/out/{ver}-{proj}.txt"):
            l = l.rstrip("\n")
            m = pat.match(l)
            if not m: continue
            path = m["path"] + (":"+m["cell"] if m["cell"] else "")
            key = (proj, path, int(m["line"]), m["code"], m["msg"])
            pool.setdefault(key, {"col": int(m["col"]), "versions": set()})["versions"].add(ver)
keys = sorted(pool)
rng = random.Random(3131)
rng.shuffle(keys)
blind, secret = [], {}
for i, k in enumerate(keys, 1):
    jid = f"J{i:02d}"
    blind.append({"id": jid, "project": k[0], "path": k[1], "line": k[2], "col": pool[k]["col"], "code": k[3], "message": k[4]})
    secret[jid] = sorted(pool[k]["versions"])
json.dump(blind, open("/tmp/rv33/judge/blind.json","w"), indent=1)
json.dump(secret, open("/tmp/rv33/judge/secret-versions.json","w"), indent=1)
print(len(blind), "pooled findings;", sum(1 for b in blind if b["code"]=="SL000"), "SL000")
