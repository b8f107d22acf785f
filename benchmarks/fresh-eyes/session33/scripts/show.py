# show a blind finding with code context: python show.py J05 [before] [after]
import json, sys
blind = {d['id']: d for d in json.load(open('/tmp/rv35/blind.json'))}
lab = sys.argv[1]; b = int(sys.argv[2]) if len(sys.argv) > 2 else 12; a = int(sys.argv[3]) if len(sys.argv) > 3 else 6
d = blind[lab]
print(f"{lab} {d['project']} {d['path']}:{d['line']} {d['code']} {d['message']}")
fn = f"/tmp/rv35/proj/{d['project']}/{d['path']}"
if fn.endswith('.ipynb'):
    print('(notebook)'); sys.exit()
lines = open(fn, errors='replace').read().split('\n')
for i in range(max(0, d['line'] - 1 - b), min(len(lines), d['line'] + a)):
    print(f"{'>>' if i + 1 == d['line'] else '  '}{i+1:5d} {lines[i]}")
