#!/usr/bin/env python3
"""Pool findings from all variants, dedupe on (project,path,line,code,message), shuffle (seed 47), number J001..
Writes pooled.txt (no variant info) and secret-versions.json (variant mapping; not to be opened before verdicts)."""
import re, json, random, pathlib, collections
RUNS = pathlib.Path('/tmp/rv47b/session47b/runs')
OUT = pathlib.Path('/tmp/rv47b/session47b')
PROJECTS = ['pytorch-cifar','improved-diffusion','Co-SLAM','LLMSpeculativeSampling','diffractsim']
VARIANTS = ['old','new','new-cuda']
pat = re.compile(r'^(?P<path>[^:\s][^:]*):(?P<line>\d+):(?P<col>\d+):\s+(?P<code>[A-Z]+\d+)\s+(?P<msg>.*)$')
pool = collections.OrderedDict()
unmatched = set()
for p in PROJECTS:
    for v in VARIANTS:
        for raw in (RUNS/f'{v}-{p}.txt').read_text().splitlines():
            m = pat.match(raw.strip())
            if not m:
                if raw.strip(): unmatched.add(raw.strip())
                continue
            key = (p, m['path'].lstrip('./'), int(m['line']), m['code'], m['msg'])
            pool.setdefault(key, set()).add(v)
keys = list(pool)
random.Random(47).shuffle(keys)
with open(OUT/'pooled.txt','w') as f:
    for i,k in enumerate(keys,1):
        f.write(f'J{i:03d} | {k[0]} | {k[1]}:{k[2]} | {k[3]} | {k[4]}\n')
json.dump({f'J{i:03d}': sorted(pool[k]) for i,k in enumerate(keys,1)}, open(OUT/'secret-versions.json','w'), indent=1)
print('pooled findings:', len(keys))
print('unmatched lines (deduped, no variant label):')
for u in sorted(unmatched): print('  ', u)
