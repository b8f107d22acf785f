"""Per-variant counts from verdicts.txt + secret-versions.json, and expert recall from expert_recall.txt."""
import json, os, re
here = os.path.join(os.path.dirname(__file__), '..')
sec = json.load(open(os.path.join(here, 'secret-versions.json')))
blind = {b['id']: b for b in json.load(open(os.path.join(here, 'blind.json')))}
ver = {}
for ln in open(os.path.join(here, 'verdicts.txt')):
    m = re.match(r'^(J\d+) \| (TP-low|TP|FP) \|', ln)
    if m: ver[m[1]] = m[2]
# expert recall: lines "Eid | severity | found_by_J ids (comma) or -"
exp = []
for ln in open(os.path.join(here, 'expert_recall.txt')):
    if ln.startswith('E'):
        eid, sev, js = [x.strip() for x in ln.split('|')[:3]]
        exp.append((eid, sev, [] if js == '-' else [j.strip() for j in js.split(',')]))
out = {}
for v in ['old', 'new', 'newcuda']:
    ids = [j for j, vs in sec.items() if v in vs]
    c = {k: sum(1 for j in ids if ver[j] == k) for k in ['TP', 'TP-low', 'FP']}
    n = len(ids)
    found = [e for e in exp if any(v in sec[j] and ver[j] != 'FP' for j in e[2])]
    fh = [e for e in found if e[1] == 'high']
    nh = sum(1 for e in exp if e[1] == 'high')
    out[v] = dict(findings=n, **c, precision=round((c['TP'] + c['TP-low']) / n, 3) if n else None,
                  recall_all=f"{len(found)}/{len(exp)}", recall_high=f"{len(fh)}/{nh}",
                  found=[e[0] for e in found], fp=sorted(j for j in ids if ver[j] == 'FP'))
    print(v, json.dumps(out[v]))
json.dump(out, open(os.path.join(here, 'stats.json'), 'w'), indent=1)
for j in sorted(sec):
    print(j, ver[j], ','.join(sec[j]), blind[j]['project'], f"{blind[j]['path']}:{blind[j]['line']}", blind[j]['code'])
