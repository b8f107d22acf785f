import json, random, re
projs=["InfiniGen","specexec","gpgpu_bootcamp","Fooocus","veScale","vattention"]
rx=re.compile(r'^(.+?):(\d+):(\d+): (SL\d+) (.*)$')
pool={}; vers={}
for p in projs:
    for v in ("old","new"):
        for line in open(f"out/{v}-{p}.txt"):
            m=rx.match(line.rstrip("\n"))
            if not m: continue
            key=(p,m[1],int(m[2]),m[4],m[5])
            pool.setdefault(key,int(m[3]))
            vers.setdefault(key,set()).add(v)
keys=sorted(pool)
random.Random(2828).shuffle(keys)
blind=[]; sec={}
for i,k in enumerate(keys,1):
    gid=f"G{i:02d}"
    blind.append(dict(id=gid,project=k[0],path=k[1],line=k[2],col=pool[k],code=k[3],message=k[4]))
    sec[gid]=sorted(vers[k])
json.dump(blind,open("blind.json","w"),indent=1)
json.dump(sec,open("secret-versions.json","w"),indent=1)
print(len(blind))
