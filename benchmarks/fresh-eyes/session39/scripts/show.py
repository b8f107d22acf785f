"""Print each blind finding with code context (no variant info)."""
import json, os, sys
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
blind = json.load(open(os.path.join(HERE, 'blind.json')))
ids = set(sys.argv[1:])
for b in sorted(blind, key=lambda b: (b['project'], b['path'], b['line'])):
    if ids and b['id'] not in ids: continue
    print(f"== {b['id']} {b['project']} {b['path']}:{b['line']} {b['code']} {b['message']}")
