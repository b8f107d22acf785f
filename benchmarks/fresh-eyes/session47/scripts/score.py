import json, re
sv=json.load(open('/tmp/rv47/session47/secret-versions.json'))
ver={}
for l in open('/tmp/rv47/session47/verdicts.txt'):
    if l.startswith('J'):
        j,v,*_=l.rstrip('\n').split('\t'); ver[j]=v
rec=[]
for l in open('/tmp/rv47/session47/expert_recall.txt'):
    if l.startswith('E'):
        e,sev,ids,*_=l.rstrip('\n').split('\t'); rec.append((e,sev,[] if ids=='miss' else ids.split(',')))
print("variant\tfindings\tTP\tTP-low\tFP\tprecision\trecall_all\trecall_high")
for v in ['old','new','newcuda']:
    js=[j for j in sv if v in sv[j]]
    c={k:sum(ver[j]==k for j in js) for k in ['TP','TP-low','FP']}
    n=len(js); prec=(c['TP']+c['TP-low'])/n if n else float('nan')
    hit=lambda e: any(j in js for j in e[2])
    ra=sum(hit(e) for e in rec); rh=sum(hit(e) for e in rec if e[1]=='high'); nh=sum(e[1]=='high' for e in rec)
    print(f"{v}\t{n}\t{c['TP']}\t{c['TP-low']}\t{c['FP']}\t{prec:.2f}\t{ra}/{len(rec)}\t{rh}/{nh}")
for j in sorted(sv): print(j, ver[j], ','.join(sv[j]))
