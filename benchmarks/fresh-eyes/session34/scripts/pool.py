"""Pool findings of the three variants blind: parse concise output, drop SL000 and test files,
de-duplicate on (project, path, line, code, message), shuffle with a fixed seed, label J001..
Writes blind.json (no variant info) and secret-versions.json (membership; not to be opened before verdicts)."""
import json, os, random, re, sys
OUT = os.path.join(os.path.dirname(__file__), '..', 'out')
PROJ = ['hqq', 'Nanoflow', 'zero-bubble-pipeline-parallelism', 'YOLOv8-TensorRT', 'ArcticTraining']
VAR = ['old', 'new', 'newcuda']
rx = re.compile(r'^(?P<path>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<code>SL\d{3})\s+(?P<msg>.*)$')
TEST = re.compile(r'(^|/)(tests?|testing)(/|$)|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$')
pool = {}
stats = {}
for v in VAR:
    for p in PROJ:
        f = os.path.join(OUT, f'{v}-{p}.txt')
        n_parsed = n_unparsed = n_sl000 = n_test = 0
        for ln in open(f):
            ln = ln.rstrip('\n')
            if not ln.strip():
                continue
            m = rx.match(ln)
            if not m:
                n_unparsed += 1
                continue
            n_parsed += 1
            path = m['path'][2:] if m['path'].startswith('./') else m['path']
            if m['code'] == 'SL000':
                n_sl000 += 1; continue
            if TEST.search(path):
                n_test += 1; continue
            key = (p, path, int(m['line']), m['code'], m['msg'])
            pool.setdefault(key, set()).add(v)
        stats[f'{v}-{p}'] = dict(parsed=n_parsed, unparsed=n_unparsed, sl000=n_sl000, test=n_test)
keys = sorted(pool)
random.Random(34).shuffle(keys)
blind, secret = [], {}
for i, k in enumerate(keys, 1):
    jid = f'J{i:03d}'
    blind.append(dict(id=jid, project=k[0], path=k[1], line=k[2], code=k[3], message=k[4]))
    secret[jid] = sorted(pool[k])
here = os.path.join(os.path.dirname(__file__), '..')
json.dump(blind, open(os.path.join(here, 'blind.json'), 'w'), indent=1)
json.dump(secret, open(os.path.join(here, 'secret-versions.json'), 'w'), indent=1)
json.dump(stats, open(os.path.join(here, 'parse-stats.json'), 'w'), indent=1)
print(len(blind), 'pooled findings')
for k, s in stats.items():
    print(k, s['unparsed'], 'unparsed', s['sl000'], 'SL000', s['test'], 'in tests')
