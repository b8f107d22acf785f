"""NOT USED in session 18 (the device tool sends the session checkout, /work/main, not this worktree; building there was not allowed).
Session 18: run OLD and NEW on every project (files as run.py selects them), in parallel, each
streamlint run with its own PYTHONPATH. Output: <out>/<product>.json in run.py's --out format."""
import sys, os, json, pathlib, argparse, tomllib, subprocess, time, concurrent.futures as cf
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run
run.extract = lambda *a, **k: None
out = pathlib.Path(sys.argv[1]); tmo = sys.argv[2]
cfg = tomllib.load(open(HERE / "projects.toml", "rb"))
class P:  # run_project's subprocess.run gets env through this wrapper
    pass
def one(prod, proj):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE / prod)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    orig = subprocess.run
    args = argparse.Namespace(mirrors="/nonexistent", python=sys.executable, timeout=float(tmo), streamlint_arg=[])
    # run_project checks the mirror; bypass by pointing at a fake objects dir
    m = HERE / "mirrors" / proj["repo"].replace("/", "+") / "repo" / "objects"; m.mkdir(parents=True, exist_ok=True)
    args.mirrors = str(HERE / "mirrors")
    root = HERE / "work" / proj["repo"].replace("/", "+") / proj["commit"][:12]
    files = run.select_files(root, proj.get("select", cfg["select"]))
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "streamlint", "check", "--format", "json", "--no-cache", "--exit-zero", "--timeout", tmo, *files]
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
    secs = time.perf_counter() - t0
    return prod, proj, files, p, secs
jobs = [(prod, proj) for prod in ("old", "new") for proj in cfg["project"]]
res = {"old": [], "new": []}
with cf.ThreadPoolExecutor(len(jobs)) as ex:
    futs = [ex.submit(one, *j) for j in jobs]
    for fu in cf.as_completed(futs):
        prod, proj, files, p, secs = fu.result()
        # reuse run_project's post-processing by faking subprocess output
        real = run.subprocess.run
        run.subprocess.run = lambda *a, **k: p
        args = argparse.Namespace(mirrors=str(HERE / "mirrors"), python=sys.executable, timeout=float(tmo), streamlint_arg=[])
        r = run.run_project(args, proj, cfg["select"], HERE / "work")
        run.subprocess.run = real
        r["seconds"] = round(secs, 1)
        if p.returncode not in (0,) and not p.stdout:
            r["errors"].append(p.stderr[-2000:])
        res[prod].append(r)
        print(prod, proj["repo"], len(files), "files", len(r["findings"]), "findings", sum(f["code"] == "SL000" for f in r["findings"]), "SL000", round(secs, 1), "s", "rc", p.returncode, p.stderr[-300:] if p.returncode else "", flush=True)
for prod in res:
    res[prod].sort(key=lambda r: r["repo"])
    (out / f"{prod}.json").write_text(json.dumps({"projects": res[prod]}, indent=1))
