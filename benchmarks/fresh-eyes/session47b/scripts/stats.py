#!/usr/bin/env python3
"""Per-variant stats from verdicts.txt, expert_recall.txt, secret-versions.json."""
import json, re, pathlib
D = pathlib.Path('/tmp/rv47b/session47b')
ver = {}
for l in (D/'verdicts.txt').read_text().splitlines():
    m = re.match(r'(J\d+) \| (TP-low|TP|FP) \|', l)
    if m: ver[m[1]] = m[2]
sec = json.load(open(D/'secret-versions.json'))
rec = []
for l in (D/'expert_recall.txt').read_text().splitlines():
    m = re.match(r'(E\d+) \| (high|low)\s*\| (.*)$', l)
    if m: rec.append((m[1], m[2], re.findall(r'J\d+', m[3]) if not m[3].startswith('miss') else []))
nE = len(rec); nH = sum(1 for r in rec if r[1]=='high')
print(f'expert entries {nE}, high {nH}')
print('variant | findings | TP | TP-low | FP | precision | recall all | recall high')
for v in ['old','new','new-cuda']:
    js = [j for j,vs in sec.items() if v in vs]
    tp = sum(ver[j]=='TP' for j in js); tl = sum(ver[j]=='TP-low' for j in js); fp = sum(ver[j]=='FP' for j in js)
    ra = sum(1 for e,s,ids in rec if any(v in sec[i] and ver[i]!='FP' for i in ids))
    rh = sum(1 for e,s,ids in rec if s=='high' and any(v in sec[i] and ver[i]!='FP' for i in ids))
    print(f'{v} | {len(js)} | {tp} | {tl} | {fp} | {(tp+tl)/len(js):.2f} | {ra}/{nE} = {ra/nE:.2f} | {rh}/{nH} = {rh/nH:.2f}')
