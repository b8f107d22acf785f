import json, random, re, glob, os
pat = re.compile(r'^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?P<msg>.*)$')
pool = {}
for v in ['old','new','newcuda']:
    for f in sorted(glob.glob(f'/tmp/rv48/runs/{v}/*.txt')):
        proj = os.path.basename(f)[:-4]
        for ln in open(f):
            m = pat.match(ln.rstrip('\n'))
            if not m: continue
            key = (proj, m['path'], int(m['line']), m['code'], m['msg'])
            pool.setdefault(key, {'col': m['col'], 'variants': set()})['variants'].add(v)
keys = sorted(pool)
random.Random(48).shuffle(keys)
secret = {}
with open('/tmp/rv48/pooled.txt','w') as out:
    for i,k in enumerate(keys,1):
        jid = f'J{i:03d}'
        out.write(f'{jid} {k[0]} {k[1]}:{k[2]}:{pool[k]["col"]} {k[3]} {k[4]}\n')
        secret[jid] = sorted(pool[k]['variants'])
json.dump(secret, open('/tmp/rv48/secret-versions.json','w'), indent=1)
print(len(keys))
