"""Incremental blind pooling (session 39): pool one project's three variant outputs (parse concise output, drop
nothing: SL000 and test-file findings kept and counted), de-duplicate on (project, path, line, code, message),
shuffle with seed 39 + project index, label J### continuing after the last id already in blind.json. Appends to
blind.json (no variant info) and secret-versions.json (membership; not opened before verdicts). usage: pool_inc.py PROJECT"""
import json, os, random, re, sys
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
OUT = os.path.join(HERE, 'out')
PROJ = ['gsplat', 'stable-baselines3', 'tianshou', 'numba-examples', 'curobo']
VAR = ['old', 'new', 'newcuda']
rx = re.compile(r'^(?P<path>[^:\s][^:]*(?::cell \d+)?):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<code>SL\d{3})\s+(?P<msg>.*)$')
TEST = re.compile(r'(^|/)(tests?|testing)(/|$)|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$')
p = sys.argv[1]
bp, sp, stp = (os.path.join(HERE, f) for f in ('blind.json', 'secret-versions.json', 'parse-stats.json'))
blind = json.load(open(bp)) if os.path.exists(bp) else []
secret = json.load(open(sp)) if os.path.exists(sp) else {}
stats = json.load(open(stp)) if os.path.exists(stp) else {}
assert not any(b['project'] == p for b in blind), 'already pooled'
pool = {}
for v in VAR:
    n_parsed = n_sl000 = n_test = 0; unparsed = []
    for ln in open(os.path.join(OUT, f'{v}-{p}.txt')):
        ln = ln.rstrip('\n')
        if not ln.strip():
            continue
        m = rx.match(ln)
        if not m:
            unparsed.append(ln); continue
        n_parsed += 1
        path = m['path'][2:] if m['path'].startswith('./') else m['path']
        n_sl000 += m['code'] == 'SL000'
        n_test += bool(TEST.search(path))
        key = (p, path, int(m['line']), m['code'], m['msg'])
        pool.setdefault(key, set()).add(v)
    stats[f'{v}-{p}'] = dict(parsed=n_parsed, unparsed=unparsed, sl000=n_sl000, test=n_test)
keys = sorted(pool)
random.Random(39 + PROJ.index(p)).shuffle(keys)
start = len(blind)
for i, k in enumerate(keys, start + 1):
    jid = f'J{i:03d}'
    blind.append(dict(id=jid, project=k[0], path=k[1], line=k[2], code=k[3], message=k[4]))
    secret[jid] = sorted(pool[k])
json.dump(blind, open(bp, 'w'), indent=1)
json.dump(secret, open(sp, 'w'), indent=1)
json.dump(stats, open(stp, 'w'), indent=1)
print(p, len(keys), 'pooled findings, ids', f'J{start+1:03d}-J{start+len(keys):03d}')
for v in VAR:
    s = stats[f'{v}-{p}']; print(' ', v, s['parsed'], 'parsed', s['sl000'], 'SL000', s['test'], 'in tests', 'unparsed:', len(s['unparsed']))
