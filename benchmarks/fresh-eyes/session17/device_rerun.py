"""Session 17 (run on the device machine from a bundle: run.py, projects.toml, extracted trees, site-packages).
   run_project (from run.py) for the given projects, non-test files only, in parallel."""
import argparse
import concurrent.futures as cf
import json
import pathlib
import sys

import tomllib

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run

run.extract = lambda *a, **k: None
orig = run.select_files
run.select_files = lambda root, pat: [f for f in orig(root, pat) if not run.is_test_path(f)]
projs = tomllib.load(open(HERE / "projects.toml", 'rb'))
want = sys.argv[2:]
out = pathlib.Path(sys.argv[1])
args = argparse.Namespace(mirrors=str(HERE / 'mirrors'), python=sys.executable, timeout=3000.0, streamlint_arg=[])
def one(repo):
    proj = next(p for p in projs['project'] if p['repo'] == repo)
    res = run.run_project(args, proj, projs['select'], HERE / 'work')
    (out / (repo.replace('/', '+') + '.json')).write_text(json.dumps({'projects': [res]}, indent=1))
    return repo, res['status'], res['files'], len(res['findings']), res['seconds']
with cf.ThreadPoolExecutor(len(want)) as ex:
    for r in ex.map(one, want):
        print(r, flush=True)
