"""Print blind findings with source context. usage: show.py [ctx] [Jid...]"""
import json, os, sys
here = os.path.join(os.path.dirname(__file__), '..')
blind = json.load(open(os.path.join(here, 'blind.json')))
ctx = int(sys.argv[1]) if len(sys.argv) > 1 else 3
want = set(sys.argv[2:])
for b in blind:
    if want and b['id'] not in want: continue
    print(f"=== {b['id']} {b['project']} {b['path']}:{b['line']} {b['code']} {b['message']}")
    src = open(os.path.join('/tmp/rv36/proj', b['project'], b['path']), errors='replace').read().split('\n')
    for i in range(max(1, b['line'] - ctx), min(len(src), b['line'] + ctx) + 1):
        print(f"{'>' if i == b['line'] else ' '}{i:5d} {src[i-1]}")
