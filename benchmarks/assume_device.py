"""What `assume-device = "cuda"` changes on real projects: each project checked twice (without and with the
setting, no cache, every other setting the project's own), findings counted per rule, and the findings only one
of the two runs has. The results of session 24 are in assume-device-session24.md.

    PYTHONPATH=src python benchmarks/assume_device.py /tmp/silence-proj/BMTrain /tmp/silence-proj/TriForce ...
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

SETTING = 'assume-device = "cuda"'


def findings(project: Path, assume: bool) -> list[dict]:
    extra = ["--config", SETTING] if assume else []
    done = subprocess.run([sys.executable, "-m", "streamlint", "check", "--no-cache", "--exit-zero", "--format",
                           "json", *extra, "."], cwd=project, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def _key(finding: dict, project: Path) -> tuple:
    path = Path(finding["filename"])  # (relative to the project, where the check ran)
    name = (path.resolve().relative_to(project.resolve()) if path.is_absolute() else path).as_posix()
    return name, finding["location"]["row"], finding["code"], finding["message"]


def main(projects: list[str]) -> None:
    for name in projects:
        project = Path(name)
        off, on = findings(project, False), findings(project, True)
        counts = [collections.Counter(f["code"] for f in run) for run in (off, on)]
        codes = sorted(set(counts[0]) | set(counts[1]))
        print(f"## {project.name}: {len(off)} -> {len(on)}")
        print(", ".join(f"{code} {counts[0][code]} -> {counts[1][code]}" for code in codes))
        before = collections.Counter(_key(f, project) for f in off)
        after = collections.Counter(_key(f, project) for f in on)
        for key in sorted(after - before):
            print("new ", *key)
        for key in sorted(before - after):
            print("gone", *key)


if __name__ == "__main__":
    main(sys.argv[1:])
