import re, json, random, os
R = 'runs'
projs = ['efficientdet-pytorch','DROID-SLAM','second.pytorch','CenterPoint','cule']
pat = re.compile(r'^(.+?):(\d+):(\d+): (SL\d+) (.*)$')
pool = {}
for p in projs:
    for v in ['old','new','newcuda']:
        for line in open(f'{R}/{p}.{v}.txt'):
            m = pat.match(line.rstrip('\n'))
            if not m: continue
            path, ln, col, code, msg = m.groups()
            key = (p, path, int(ln), code, msg)
            pool.setdefault(key, {'col': int(col), 'variants': set()})['variants'].add(v)
keys = sorted(pool)
random.Random(43).shuffle(keys)
secret = {}
with open('pooled.txt','w') as f:
    for i, k in enumerate(keys, 1):
        jid = f'J{i:03d}'
        p, path, ln, code, msg = k
        f.write(f'{jid}\t{p}\t{path}:{ln}:{pool[k]["col"]}\t{code}\t{msg}\n')
        secret[jid] = sorted(pool[k]['variants'])
json.dump(secret, open('secret-versions.json','w'), indent=1)
print(len(keys))
