import subprocess, sys, os
gd, dest = sys.argv[1], sys.argv[2]
out = subprocess.run(['git', f'--git-dir={gd}', 'ls-tree', '-r', '-z', 'HEAD'], capture_output=True, check=True).stdout
skipped = []
for ent in out.split(b'\0'):
    if not ent: continue
    meta, path = ent.split(b'\t', 1)
    mode, typ, sha = meta.split()
    if typ != b'blob': continue
    r = subprocess.run(['git', f'--git-dir={gd}', 'cat-file', 'blob', sha], capture_output=True)
    p = os.path.join(dest, path.decode())
    if r.returncode != 0:
        skipped.append(path.decode()); continue
    os.makedirs(os.path.dirname(p), exist_ok=True)
    if mode == b'120000':
        continue  # skip symlinks
    open(p, 'wb').write(r.stdout)
print('skipped', len(skipped), skipped)
