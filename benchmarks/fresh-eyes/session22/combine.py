"""Session 22: merge the per-project run.py outputs (/tmp/s22/runs/<product>-<owner+name>.json) into
old-run.json and new-run.json (run.py --out format). Same as session18/combine.py."""
import json, pathlib, sys
src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/s22/runs")
here = pathlib.Path(__file__).resolve().parent
for prod in ("old", "new"):
    projects = []
    for f in sorted(src.glob(f"{prod}-*.json")):
        projects += json.loads(f.read_text())["projects"]
    (here / f"{prod}-run.json").write_text(json.dumps({"projects": projects}, indent=1))
    print(prod, len(projects), "projects", sum(len(p["findings"]) for p in projects), "findings")
