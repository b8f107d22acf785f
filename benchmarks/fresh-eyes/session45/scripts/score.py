import json,re
sec=json.load(open('/tmp/rv48/secret-versions.json'))
ver={l.split()[0]:l.split()[1] for l in open('/tmp/rv48/verdicts.txt') if l.strip()}
rec=[l.split() for l in open('/tmp/rv48/expert_recall.txt') if l.startswith('E')]
out=[]
for v in ['old','new','newcuda']:
    js=[j for j,vs in sec.items() if v in vs]
    c={k:sum(1 for j in js if ver[j]==k) for k in ['TP','TP-low','FP']}
    n=len(js); prec=(c['TP']+c['TP-low'])/n if n else 0
    ra=sum(1 for e in rec if e[2]!='miss' and v in sec[e[2]]); rh=sum(1 for e in rec if e[1]=='high' and e[2]!='miss' and v in sec[e[2]])
    nh=sum(1 for e in rec if e[1]=='high')
    out.append(f"{v} findings={n} TP={c['TP']} TP-low={c['TP-low']} FP={c['FP']} precision={prec:.2f} recall_all={ra}/{len(rec)} recall_high={rh}/{nh} FPs={[j for j in js if ver[j]=='FP']}")
print('\n'.join(out)); open('/tmp/rv48/stats.txt','w').write('\n'.join(out)+'\n')
for j in sorted(sec): print(j, ver[j], sec[j])
