"""The session-24 projects checked again by a later commit: which of the reviewer's labelled findings it still
makes, and which it makes that the reviewer never saw (to be judged by someone else). Not an independent measure:
the later commit's changes were made after reading the review.

    python benchmarks/fresh-eyes/session24/rescore.py SRC_TREE [PROJECTS_DIR] [--out RUN_DIR]

PROJECTS_DIR holds each project's checkout under its bare name (default /tmp/fe24); each is run from inside
its checkout on its file list, as the review ran it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _key(repo: str, path: str, line: int, code: str, message: str) -> tuple:
    return repo, path, line, code, re.sub(r"\s+", " ", message)


def run(tree: str, projects_dir: Path, out_dir: Path) -> dict[str, list]:
    projects = tomllib.loads((HERE.parent / "projects-session24.toml").read_text())["project"]
    found = {}
    env = dict(os.environ, PYTHONPATH=tree)
    for project in projects:
        name = project["list"].rsplit("files-", 1)[1].removesuffix(".txt")
        files = (HERE.parent / project["list"]).read_text().split()
        result = subprocess.run([sys.executable, "-m", "streamlint", "check", "--no-cache", "--format", "json",
                                 "--exit-zero", "--timeout", "120", *files], cwd=projects_dir / name, env=env,
                                capture_output=True, text=True)
        (out_dir / f"rerun-{name}.json").write_text(result.stdout)
        found[project["repo"]] = json.loads(result.stdout or "[]")
    return found


def main(argv: list[str]) -> int:
    tree = argv[0]
    projects_dir = Path(argv[1]) if len(argv) > 1 and not argv[1].startswith("--") else Path("/tmp/fe24")
    out_dir = Path(argv[argv.index("--out") + 1]) if "--out" in argv else Path("/tmp/fe24-rescore")
    out_dir.mkdir(parents=True, exist_ok=True)
    labels = tomllib.loads((HERE.parent / "labels-session24.toml").read_text())["label"]
    labelled = {_key(x["repo"], x["path"], x["line"], x["code"], x["message"]): x for x in labels}
    keys = [_key(repo, f["filename"], f["location"]["row"], f["code"], f["message"])
            for repo, findings in run(tree, projects_dir, out_dir).items() for f in findings]
    kept = [labelled[k] for k in keys if k in labelled]
    verdicts = Counter(x["verdict"] for x in kept)
    good = verdicts["TP"] + verdicts["TP-low"]
    print(f"findings {len(keys)}: labelled {len(kept)} ({dict(verdicts)}), not labelled {len(keys) - len(kept)}")
    print(f"precision of the labelled ones: {good}/{len(kept)} = {good / max(len(kept), 1):.1%}")
    gone = [x for k, x in labelled.items() if k not in set(keys) and "new" in x["versions"]]
    print(f"gone since NEW ({len(gone)}): " + ", ".join(f"{x['id']} {x['code']} {x['verdict']}" for x in gone))
    for k in keys:
        if k not in labelled:
            print("new:", *k)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
