"""Print code context for blind findings (no variant info). usage: ctx.py J001 [J002 ...] [-n LINES]"""
import json, os, sys, re
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
blind = {b['id']: b for b in json.load(open(os.path.join(HERE, 'blind.json')))}
n = 12
args = sys.argv[1:]
if '-n' in args:
    i = args.index('-n'); n = int(args[i + 1]); del args[i:i + 2]
for j in args:
    b = blind[j]
    root = f"/tmp/rv42/proj/{b['project']}"
    print(f"=== {j} {b['project']} {b['path']}:{b['line']} {b['code']} {b['message']}")
    m = re.match(r'(.*\.ipynb):cell (\d+)$', b['path'])
    if m:
        nb = json.load(open(os.path.join(root, m[1])))
        lines = ''.join(nb['cells'][int(m[2]) - 1]['source']).split('\n')
    else:
        lines = open(os.path.join(root, b['path'])).read().split('\n')
    L = b['line']
    for k in range(max(1, L - n), min(len(lines), L + n // 2) + 1):
        print(f"{'>' if k == L else ' '}{k:5d} {lines[k-1]}")
