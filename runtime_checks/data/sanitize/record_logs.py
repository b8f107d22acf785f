"""Record the sanitizer's logs on a GPU machine (how runtime_checks/data/sanitize/logs/
was made): every SL4 runtime pair, the CuPy and Numba programs beside this file, and the
runtime examples, each under `streamlint verify --sanitize`, small sizes so that the logs
stay small; then PyTorch's own CUDA sanitizer (CSAN) on the PyTorch programs, to compare.

    PYTHONPATH=src python runtime_checks/data/sanitize/record_logs.py OUTDIR [NAME_PREFIX,...]

CSAN runs only with CSAN=1 in the environment.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
SMALL = {
    "SL401": ["n=1024", "rounds=100"],
    "SL402": ["n_frames=3", "side=64", "rounds=2"],
    "SL403": ["n_batches=3", "side=64", "rounds=2"],
    "SL404": ["n=4096", "side=64", "rounds=2"],
}
PROGRAMS = []
for code, params in SMALL.items():
    for variant in ("bad", "good"):
        PROGRAMS.append((f"pair_{code}_{variant}", f"fixtures/{code}/runtime/{variant}.py", params))
for directory in sorted(p for p in (HERE / "programs").iterdir() if p.is_dir()):
    for variant in ("bad", "good"):
        program = directory / f"{variant}.py"
        accepted = (directory / "bad.py").read_text()
        PROGRAMS.append((f"{directory.name}_{variant}", str(program.relative_to(ROOT)),
                         [p for p in ("n=1024", "rounds=100") if f"{p.split('=')[0]}: int" in accepted]))
EXAMPLES = ["race_missing_wait.py", "race_fixed.py", "race_masked.py", "race_unseeded.py", "numba_race.py", "cupy_pipeline.py"]
for name in EXAMPLES:
    PROGRAMS.append((f"example_{Path(name).stem}", f"runtime_checks/examples/{name}", []))

CSAN = """
import importlib.util, sys, torch
import torch.cuda._sanitizer as csan
csan.enable_cuda_sanitizer()
path = sys.argv[1]
params = dict(kv.split('=') for kv in sys.argv[2:])
spec = importlib.util.spec_from_file_location('m', path)
m = importlib.util.module_from_spec(spec)
if 'def run(' in open(path).read():
    spec.loader.exec_module(m)
    m.run(**{k: int(v) for k, v in params.items()})
else:
    sys.argv = [path]
    spec.loader.exec_module(m)
torch.cuda.synchronize()
"""


def main(out: Path, only: tuple[str, ...] = ()) -> None:
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    summary = {}
    for name, path, params in PROGRAMS:
        if only and not name.startswith(only):
            continue
        cmd = [sys.executable, "-m", "streamlint.runtime.sanitize", path,
               "--sanitize-log", str(logs / f"{name}.jsonl")] + [f"--param={p}" for p in params]
        try:
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=240)
            summary[name] = {"rc": done.returncode, "stdout": done.stdout[-6000:], "stderr": done.stderr[-3000:]}
        except subprocess.TimeoutExpired:
            summary[name] = {"rc": "timeout"}
        print(name, summary[name].get("rc"), summary[name].get("stdout", "").strip().splitlines()[-1:], flush=True)
        if os.environ.get("CSAN") == "1" and "torch" in Path(ROOT / path).read_text():
            try:
                done = subprocess.run([sys.executable, "-c", CSAN, path, *params], cwd=ROOT, capture_output=True,
                                      text=True, timeout=240)
                summary[name]["csan"] = {"rc": done.returncode, "races": done.stderr.count("CSAN detected"),
                                         "tail": done.stderr[-1500:]}
            except subprocess.TimeoutExpired:
                summary[name]["csan"] = {"rc": "timeout"}
            print("  csan", summary[name]["csan"].get("rc"), summary[name]["csan"].get("races"), flush=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]), tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else ())
