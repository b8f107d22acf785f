import json, re
sec = json.load(open('secret-versions.json'))
ver = {}
for l in open('verdicts.txt'):
    m = re.match(r'^(J\d+)\s+(TP-low|TP|FP)\s', l)
    if m: ver[m.group(1)] = m.group(2)
pooled = {l.split('\t')[0]: l.rstrip('\n').split('\t') for l in open('pooled.txt')}
exp = []
for l in open('expert_recall.txt'):
    m = re.match(r'^(E\d+) (\S+) .*? (high|low)\s+-> (.*)$', l)
    if m: exp.append((m.group(1), m.group(2), m.group(3), re.findall(r'J\d+', m.group(4))))
nh = sum(1 for e in exp if e[2]=='high')
out = []
for v in ['old','new','newcuda']:
    js = [j for j in sec if v in sec[j]]
    c = {k: sum(1 for j in js if ver[j]==k) for k in ['TP','TP-low','FP']}
    n = len(js)
    rec = [e for e in exp if any(v in sec[j] for j in e[3])]
    rh = [e for e in rec if e[2]=='high']
    out.append(f"{v}: findings={n} TP={c['TP']} TP-low={c['TP-low']} FP={c['FP']} precision={(c['TP']+c['TP-low'])/n if n else 0:.2f} recall_all={len(rec)}/{len(exp)}={len(rec)/len(exp):.2f} recall_high={len(rh)}/{nh}={len(rh)/nh:.2f}")
    # per rule / per project
    for key, idx in [('rule',3),('proj',1)]:
        d = {}
        for j in js:
            k = pooled[j][idx]; d.setdefault(k, [0,0,0]); d[k][['TP','TP-low','FP'].index(ver[j])] += 1
        out.append(f"  by {key}: " + '; '.join(f"{k} {a}/{b}/{c_}" for k,(a,b,c_) in sorted(d.items())))
print('\n'.join(out))
for j in sorted(sec): print(j, ver[j], ','.join(sec[j]), pooled[j][1], pooled[j][2], pooled[j][3])
