"""Session 17 blind pool (second pass, after the device re-run): the findings not in pool.txt yet."""
import json
import random
import re

runs = {k: json.load(open(f'/tmp/s17/{n}.json')) for k, n in (('v2', 'v2'), ('v3', 'v3final'))}
judged = set()
for block in open('/tmp/s17/blind/pool.txt').read().strip().split('\n\n'):
    lines = block.split('\n')
    m = re.match(r'#\d+ \[(.*?)\] (.*):(\d+) (SL\d+) fp=', lines[0])
    msg = lines[2].split('msg: ', 1)[1]
    judged.add((m[1], m[2], int(m[3]), m[4], msg))
pool = {}
for k, d in runs.items():
    for p in d['projects']:
        for f in p['findings']:
            if f['test_code'] or f['code'] == 'SL000':
                continue
            key = (f['repo'], f['path'], f['line'], f['code'], f['message'])
            if key in judged:
                continue
            pool.setdefault(key, f)
items = list(pool.values())
random.Random(4242).shuffle(items)
with open('/tmp/s17/blind/pool2.txt', 'w') as out:
    for i, f in enumerate(items, 101):
        out.write(f"#{i:03d} [{f['repo']}] {f['path']}:{f['line']} {f['code']} fp={f['fingerprint']}\n    text: {f['text']}\n    msg: {f['message']}\n\n")
print(len(items), 'new pooled findings')
