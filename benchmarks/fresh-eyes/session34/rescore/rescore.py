"""Rescore a later tree on review 34's projects with the reviewer's labels (NOT an independent measure: the
developer read the review before the change). usage: rescore.py OUTDIR LABEL
OUTDIR holds <LABEL>-<project>.txt (concise output, as run_all.sh writes). A finding matches a judged one on
(project, path, line, code); the rest are listed as unlabelled, for the developer to judge and say so."""
import json, os, re, sys

HERE = os.path.dirname(__file__)
REVIEW = os.path.join(HERE, '..')
PROJ = ['hqq', 'Nanoflow', 'zero-bubble-pipeline-parallelism', 'YOLOv8-TensorRT', 'ArcticTraining']
rx = re.compile(r'^(?P<path>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<code>SL\d{3})\s+(?P<msg>.*)$')
TEST = re.compile(r'(^|/)(tests?|testing)(/|$)|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$')

outdir, label = sys.argv[1], sys.argv[2]
blind = json.load(open(os.path.join(REVIEW, 'blind.json')))
verdicts = {}
for ln in open(os.path.join(REVIEW, 'verdicts.txt')):
    parts = [p.strip() for p in ln.split('|')]
    if len(parts) >= 3 and re.fullmatch(r'J\d{3}', parts[0]):
        verdicts[parts[0]] = parts[1]
judged = {(b['project'], b['path'], b['line'], b['code']): b['id'] for b in blind}
counts = {'TP': 0, 'TP-low': 0, 'FP': 0}
unlabelled, seen, sl000 = [], set(), 0
for p in PROJ:
    for ln in open(os.path.join(outdir, f'{label}-{p}.txt')):
        m = rx.match(ln.rstrip('\n'))
        if not m:
            continue
        path = m['path'][2:] if m['path'].startswith('./') else m['path']
        if m['code'] == 'SL000':
            sl000 += 1
            continue
        if TEST.search(path):
            continue
        key = (p, path, int(m['line']), m['code'])
        if key in seen:
            continue
        seen.add(key)
        jid = judged.get(key)
        if jid is None:
            unlabelled.append(f'{p} {path}:{m["line"]} {m["code"]} {m["msg"]}')
        else:
            counts[verdicts[jid]] += 1
total = sum(counts.values()) + len(unlabelled)
good = counts['TP'] + counts['TP-low']
print(f'{label}: {total} findings, {counts["TP"]} TP, {counts["TP-low"]} TP-low, {counts["FP"]} FP, '
      f'{len(unlabelled)} unlabelled, SL000 {sl000}; precision on labelled {good}/{total - len(unlabelled)}')
for u in unlabelled:
    print('  unlabelled:', u)
