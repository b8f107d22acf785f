import re, json, random, glob, os
OUT = '/work/main/benchmarks/fresh-eyes/session40/out'
pat = re.compile(r'^(.+?):(\d+):(\d+): (SL\d{3}) (.*)$')
projects = ['cifar10-airbench', 'torch-ngp', 'ComfyUI-GGUF', 'hlb-gpt', 'PPDS-2020']
pool = {}
for v in ['old', 'new', 'newcuda']:
    for p in projects:
        for line in open(f'{OUT}/{v}-{p}.txt'):
            m = pat.match(line.rstrip('\n'))
            if not m: continue
            path, ln, col, code, msg = m.groups()
            key = (p, path, int(ln), code, msg)
            pool.setdefault(key, set()).add(v)
keys = sorted(pool)
random.Random(4043).shuffle(keys)
secret = {}
with open('/work/main/benchmarks/fresh-eyes/session40/pooled.txt', 'w') as f:
    for i, k in enumerate(keys, 1):
        j = f'J{i:03d}'
        p, path, ln, code, msg = k
        f.write(f'{j} | {p} | {path}:{ln} | {code} | {msg}\n')
        secret[j] = {'project': p, 'path': path, 'line': ln, 'code': code, 'variants': sorted(pool[k])}
json.dump(secret, open('/work/main/benchmarks/fresh-eyes/session40/secret-versions.json', 'w'), indent=1)
print(len(keys))
