import json, re
S = "/tmp/rv49/session46"
secret = json.load(open(f"{S}/secret-versions.json"))
verd = {}
for ln in open(f"{S}/verdicts.txt"):
    if ln.startswith("J"):
        j, v, *_ = [x.strip() for x in ln.split("|")]
        verd[j] = v
rec = []
for ln in open(f"{S}/expert_recall.txt"):
    if ln.startswith("E"):
        parts = [x.strip() for x in ln.split("|")]
        rec.append((parts[0], parts[2], re.findall(r"J\d{3}", parts[3]) if not parts[3].startswith("miss") else []))
nE = len(rec); nH = sum(1 for r in rec if r[1] == "high")
out = []
out.append(f"pooled findings: {len(secret)}; expert entries: {nE} ({nH} high)")
out.append("variant | findings | TP | TP-low | FP | precision | recall all | recall high")
for var in ["OLD", "NEW", "NEW+cuda"]:
    js = [j for j, vs in secret.items() if var in vs]
    tp = sum(verd[j] == "TP" for j in js); tpl = sum(verd[j] == "TP-low" for j in js); fp = sum(verd[j] == "FP" for j in js)
    prec = (tp + tpl) / len(js) if js else float("nan")
    ra = sum(1 for e, s, m in rec if any(x in js for x in m))
    rh = sum(1 for e, s, m in rec if s == "high" and any(x in js for x in m))
    out.append(f"{var} | {len(js)} | {tp} | {tpl} | {fp} | {prec:.2f} | {ra}/{nE} ({100*ra/nE:.0f}%) | {rh}/{nH} ({100*rh/nH:.0f}%)")
out.append("")
out.append("per-J: verdict, variants")
for j in sorted(secret):
    out.append(f"{j} | {verd[j]} | {', '.join(secret[j])}")
open(f"{S}/stats.txt", "w").write("\n".join(out) + "\n")
print("\n".join(out))
