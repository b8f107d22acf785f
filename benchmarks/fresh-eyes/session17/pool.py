"""Session 17 blind pool (first pass). Inputs: /tmp/s17/v2.json (OLD), /tmp/s17/v3.json (NEW, local); copies: old-run.json, new-run.json."""
"""Pool non-test findings of two runs, dedupe by (repo,path,line,code,message), shuffle, write blind list."""
import json
import random

runs = {k: json.load(open(f'/tmp/s17/{k}.json')) for k in ('v2', 'v3')}
pool = {}
for k, d in runs.items():
    for p in d['projects']:
        for f in p['findings']:
            if f['test_code'] or f['code'] == 'SL000':
                continue
            key = (f['repo'], f['path'], f['line'], f['code'], f['message'])
            pool.setdefault(key, {'f': f, 'by': set()})['by'].add(k)
items = list(pool.values())
random.Random(1729).shuffle(items)
key = {}
with open('/tmp/s17/blind/pool.txt', 'w') as out:
    for i, it in enumerate(items, 1):
        f = it['f']
        out.write(f"#{i:03d} [{f['repo']}] {f['path']}:{f['line']} {f['code']} fp={f['fingerprint']}\n    text: {f['text']}\n    msg: {f['message']}\n\n")
        key[i] = {'by': sorted(it['by']), 'fingerprint': f['fingerprint'], 'repo': f['repo'], 'path': f['path'],
                  'line': f['line'], 'code': f['code'], 'text': f['text'], 'message': f['message']}
json.dump(key, open('/tmp/s17/unblind-key.json', 'w'), indent=1)
print(len(items), 'pooled findings')
