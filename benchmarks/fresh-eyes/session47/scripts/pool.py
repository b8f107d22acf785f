import json, random, re, glob, os
R='/tmp/rv47/session47/runs'
pool={}
for f in sorted(glob.glob(R+'/*.txt')):
    b=os.path.basename(f)
    if b.endswith('.stderr.txt'): continue
    v,p=b[:-4].split('-',1)
    for line in open(f):
        m=re.match(r'^(.*?):(\d+):(\d+): (SL\d+) (.*)$', line.rstrip('\n'))
        if not m: continue
        key=(p,m[1],int(m[2]),m[4],m[5])
        pool.setdefault(key,{'col':int(m[3]),'variants':set()})['variants'].add(v)
keys=sorted(pool)
random.Random(47).shuffle(keys)
with open('/tmp/rv47/session47/pooled.txt','w') as o:
    for i,k in enumerate(keys,1):
        o.write(f"J{i:03d}\t{k[0]}\t{k[1]}:{k[2]}:{pool[k]['col']}\t{k[3]}\t{k[4]}\n")
json.dump({f"J{i:03d}":sorted(pool[k]['variants']) for i,k in enumerate(keys,1)},
          open('/tmp/rv47/session47/secret-versions.json','w'),indent=1)
print(len(keys))
