import json, collections
blind={d['id']:d for d in json.load(open('/tmp/rv34/blind.json'))}
key=json.load(open('/tmp/rv34/.versions_key.json'))
ver={}
for l in open('/tmp/rv34/verdicts.txt'):
    if l.startswith('#') or not l.strip(): continue
    i,v,r=l.rstrip('\n').split('\t',2); ver[i]=(v,r)
assert set(ver)==set(blind), set(blind)^set(ver)
res={}
for v in ('old','new'):
    ids=[i for i in blind if v in key[i]]
    c=collections.Counter(ver[i][0] for i in ids)
    n=len(ids); tp=c['TP']; tl=c['TP-low']; fp=c['FP']
    res[v]=dict(findings=n,TP=tp,TP_low=tl,FP=fp,precision=round((tp+tl)/n,3) if n else None)
    rules=collections.defaultdict(collections.Counter)
    for i in ids: rules[blind[i]['code']][ver[i][0]]+=1
    res[v]['rules']={k:dict(c) for k,c in sorted(rules.items())}
    proj=collections.defaultdict(collections.Counter)
    for i in ids: proj[blind[i]['project']][ver[i][0]]+=1
    res[v]['projects']={k:dict(c) for k,c in sorted(proj.items())}
print(json.dumps(res,indent=1))
print('only old:',[i for i in sorted(blind) if key[i]==['old']])
print('only new:',[i for i in sorted(blind) if key[i]==['new']])
json.dump(res,open('/tmp/rv34/stats.json','w'),indent=1)
