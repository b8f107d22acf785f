# Pool findings of all versions, de-duplicate on (project, path, line, code, message),
# shuffle with random.Random(3333), label J01..Jnn. Version membership goes to a separate file.
import json, random, re, collections
OUT = '/tmp/rv35/out'
projects = ['ms-swift', 'CosyVoice', 'sam2', 'index-tts', 'pyaerial']
versions = ['old', 'new', 'newcuda']
pat = re.compile(r'^(.*?):(\d+):(\d+): (SL\d+) (.*)$')
items = {}
sl000 = collections.Counter(); unparsed = collections.Counter(); counts = collections.Counter()
for p in projects:
    for v in versions:
        fn = f'{OUT}/{v}-{p}.txt'
        for line in open(fn):
            line = line.rstrip('\n')
            if not line.strip():
                continue
            m = pat.match(line)
            if not m:
                unparsed[(p, v)] += 1
                continue
            path, ln, col, code, msg = m.groups()
            if path.startswith('./'):
                path = path[2:]
            if code == 'SL000':
                sl000[(p, v)] += 1
                continue
            counts[(p, v)] += 1
            key = (p, path, int(ln), code, msg)
            d = items.setdefault(key, {'project': p, 'path': path, 'line': int(ln), 'col': int(col),
                                       'code': code, 'message': msg, 'versions': set()})
            d['versions'].add(v)
keys = sorted(items)
random.Random(3333).shuffle(keys)
blind = []; keymap = {}
w = max(2, len(str(len(keys))))
for i, k in enumerate(keys, 1):
    lab = f'J{i:0{w}d}'
    d = items[k]
    blind.append({'id': lab, 'project': d['project'], 'path': d['path'], 'line': d['line'], 'col': d['col'],
                  'code': d['code'], 'message': d['message']})
    keymap[lab] = sorted(d['versions'])
json.dump(blind, open('/tmp/rv35/blind.json', 'w'), indent=1)
json.dump(keymap, open('/tmp/rv35/secret-versions.json', 'w'), indent=1)
json.dump({'sl000': {f'{a}/{b}': c for (a, b), c in sl000.items()},
           'unparsed_lines': {f'{a}/{b}': c for (a, b), c in unparsed.items()},
           'findings': {f'{a}/{b}': c for (a, b), c in counts.items()}},
          open(f'{OUT}/sl000_counts.json', 'w'), indent=1)
print(len(blind), 'pooled findings; sl000', dict(sl000), 'unparsed', dict(unparsed))
