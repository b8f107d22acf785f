# Unblind: precision per version, per rule, per project; NEW vs NEW+cuda differences.
import json, collections
R = '/tmp/rv35'
blind = {d['id']: d for d in json.load(open(f'{R}/blind.json'))}
key = json.load(open(f'{R}/secret-versions.json'))
ver = {}
for l in open(f'{R}/verdicts.txt'):
    if l.startswith('#') or not l.strip():
        continue
    i, v, r = l.rstrip('\n').split('\t', 2)
    ver[i] = (v, r)
assert set(ver) == set(blind)
res = {}
for v in ('old', 'new', 'newcuda'):
    ids = [i for i in blind if v in key[i]]
    c = collections.Counter(ver[i][0] for i in ids)
    n = len(ids)
    res[v] = dict(findings=n, TP=c['TP'], TP_low=c['TP-low'], FP=c['FP'],
                  precision=round((c['TP'] + c['TP-low']) / n, 4) if n else None)
    rules = collections.defaultdict(collections.Counter)
    proj = collections.defaultdict(collections.Counter)
    for i in ids:
        rules[blind[i]['code']][ver[i][0]] += 1
        proj[blind[i]['project']][ver[i][0]] += 1
    res[v]['rules'] = {k: dict(c) for k, c in sorted(rules.items())}
    res[v]['projects'] = {k: dict(c) for k, c in sorted(proj.items())}
memb = collections.Counter(tuple(key[i]) for i in blind)
res['membership'] = {'+'.join(k): n for k, n in memb.items()}
res['only_in'] = {'+'.join(k): sorted(i for i in blind if tuple(key[i]) == k) for k in memb}
print(json.dumps(res, indent=1))
json.dump(res, open(f'{R}/stats.json', 'w'), indent=1)
