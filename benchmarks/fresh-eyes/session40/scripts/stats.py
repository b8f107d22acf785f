import json, re, collections
S = json.load(open('secret-versions.json'))
V = {}
for l in open('verdicts.txt'):
    m = re.match(r'^(J\d+) \| (TP-low|TP|FP) \|', l)
    if m: V[m.group(1)] = m.group(2)
R = {}
sev = {}
for l in open('expert_recall.txt'):
    p = [x.strip() for x in l.split('|')]
    if re.match(r'E\d\d', p[0]): R[p[0]] = p[4]; sev[p[0]] = p[1]
for v in ['old', 'new', 'newcuda']:
    js = [j for j in S if v in S[j]['variants']]
    c = collections.Counter(V[j] for j in js)
    n = len(js); prec = (c['TP'] + c['TP-low']) / n if n else 0
    found = [e for e in R if R[e] != 'MISS' and v in S[R[e]]['variants']]
    hi = [e for e in found if sev[e] == 'high']
    nh = sum(1 for e in sev if sev[e] == 'high')
    print(f"{v}: findings={n} TP={c['TP']} TP-low={c['TP-low']} FP={c['FP']} precision={prec:.3f} recall_all={len(found)}/{len(R)}={len(found)/len(R):.3f} recall_high={len(hi)}/{nh}={len(hi)/nh:.3f}")
    pr = collections.defaultdict(collections.Counter); pp = collections.defaultdict(collections.Counter)
    for j in js:
        pr[S[j]['code']][V[j]] += 1; pp[S[j]['project']][V[j]] += 1
    print('  per-rule:', {k: dict(x) for k, x in sorted(pr.items())})
    print('  per-project:', {k: dict(x) for k, x in sorted(pp.items())})
print('FPs:')
for j in sorted(S):
    if V[j] == 'FP': print(j, ','.join(S[j]['variants']), S[j]['project'], f"{S[j]['path']}:{S[j]['line']}", S[j]['code'])
print('only in some variants:')
for j in sorted(S):
    if len(S[j]['variants']) < 3: print(j, S[j]['variants'], V[j], S[j]['path'], S[j]['line'], S[j]['code'])
print('expert recall membership:')
for e in R:
    print(e, sev[e], R[e], S[R[e]]['variants'] if R[e] != 'MISS' else '-')
