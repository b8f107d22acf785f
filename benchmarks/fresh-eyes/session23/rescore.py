"""The session-23 projects checked again by a later commit: which of the reviewer's labelled findings it
still makes, and which findings it makes that the reviewer never saw (to be judged by someone else).

    python benchmarks/fresh-eyes/session23/rescore.py RUN_DIR         # review A: RUN_DIR/rerun-<project>.json
    python benchmarks/fresh-eyes/session23/rescore.py RUN_DIR --b    # review B: RUN_DIR/rerun2-<project>.json
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOS = {"BMTrain": "OpenBMB/BMTrain", "TriForce": "Infini-AI-Lab/TriForce", "bagua": "BaguaSys/bagua",
         "exllamav2": "turboderp/exllamav2", "litgpt": "Lightning-AI/litgpt", "tutel": "microsoft/tutel"}
REPOS_B = {"exllamav3": "turboderp-org/exllamav3", "mixtral": "dvmazur/mixtral-offloading",
           "nanogpt": "KellerJordan/modded-nanogpt", "pyboost": "sb-ai-lab/Py-Boost", "rlgames": "Denys88/rl_games"}


def _key(repo: str, path: str, line: int, code: str, message: str) -> tuple:
    return repo, path, line, code, re.sub(r"\s+", " ", message)


def main(run_dir: str, review_b: bool = False) -> int:
    labels = tomllib.loads((HERE.parent / f"labels-session23{'b' if review_b else ''}.toml").read_text())["label"]
    labelled = {_key(x["repo"], x["path"], x["line"], x["code"], x["message"]): x for x in labels}
    found = []
    for project, repo in (REPOS_B if review_b else REPOS).items():
        for f in json.loads((Path(run_dir) / f"rerun{'2' if review_b else ''}-{project}.json").read_text() or "[]"):
            found.append(_key(repo, f["filename"], f["location"]["row"], f["code"], f["message"]))
    kept = [labelled[k] for k in found if k in labelled]
    new = [k for k in found if k not in labelled]
    gone = [x for k, x in labelled.items() if k not in set(found)]
    verdicts = Counter(x["verdict"] for x in kept)
    good = verdicts["TP"] + verdicts["TP-low"]
    print(f"findings {len(found)}: labelled {len(kept)} ({dict(verdicts)}), not labelled {len(new)}")
    print(f"precision of the labelled ones: {good}/{len(kept)} = {good / max(len(kept), 1):.1%}")
    print(f"gone ({len(gone)}): " + ", ".join(f"#{x['id']} {x['code']} {x['verdict']}" for x in gone))
    for k in new:
        print("new:", *k)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], "--b" in sys.argv[2:]))
