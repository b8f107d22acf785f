import json,sys
nb=json.load(open(sys.argv[1])); want=int(sys.argv[2])
code=[c for c in nb['cells'] if c['cell_type']=='code']
# try both numbering schemes: index among code cells and among all cells
for label,cells in (('all-cells',nb['cells']),('code-cells',code)):
    if want-1 < len(cells) and want>=1:
        c=cells[want-1]
        src=''.join(c['source']) if isinstance(c['source'],list) else c['source']
        print(f'== {label} #{want} ({c["cell_type"]})')
        for i,l in enumerate(src.split('\n'),1): print(f'{i:3d}: {l}')
