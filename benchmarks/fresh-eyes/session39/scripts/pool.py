"""Pool findings of the three variants blind: parse concise output, drop nothing (SL000 and test-file
findings are kept and counted), de-duplicate on (project, path, line, code, message), shuffle with seed 39,
label J001.. (notebook findings keep "path.ipynb:cell N" as their path; as in session 36) Writes blind.json (no variant info) and secret-versions.json (membership; not opened before verdicts)."""
import json, os, random, re
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
OUT = os.path.join(HERE, 'out')
PROJ = ['curobo', 'gsplat', 'stable-baselines3', 'tianshou', 'numba-examples']
VAR = ['old', 'new', 'newcuda']
rx = re.compile(r'^(?P<path>[^:\s][^:]*(?::cell \d+)?):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<code>SL\d{3})\s+(?P<msg>.*)$')
TEST = re.compile(r'(^|/)(tests?|testing)(/|$)|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$')
OK_TAIL = re.compile(r'^(All checks passed!|Found \d+ errors?\.?.*|\[\*\].*)$')
pool, stats = {}, {}
for v in VAR:
    for p in PROJ:
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
random.Random(39).shuffle(keys)
blind, secret = [], {}
for i, k in enumerate(keys, 1):
    jid = f'J{i:03d}'
    blind.append(dict(id=jid, project=k[0], path=k[1], line=k[2], code=k[3], message=k[4]))
    secret[jid] = sorted(pool[k])
json.dump(blind, open(os.path.join(HERE, 'blind.json'), 'w'), indent=1)
json.dump(secret, open(os.path.join(HERE, 'secret-versions.json'), 'w'), indent=1)
json.dump(stats, open(os.path.join(HERE, 'parse-stats.json'), 'w'), indent=1)
print(len(blind), 'pooled findings')
for k, s in stats.items():
    print(k, s['parsed'], 'parsed', s['sl000'], 'SL000', s['test'], 'in tests', 'unparsed:', s['unparsed'])
