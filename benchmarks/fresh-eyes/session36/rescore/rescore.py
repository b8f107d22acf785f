"""Re-run a linter tree on the projects of reviews 35 and 36 and score its findings on the reviewers' labels.

Not an independent measure: the commits it scores were made after reading those reviews. A finding is matched to a
labelled one by (project, path, line, code); the others are listed as unlabelled.

    python rescore.py --src /tmp/tree/src --proj35 /tmp/rv38/proj --proj36 /tmp/rv39/proj [--cuda] > out.txt
"""
import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent.parent
REVIEWS = {"35": HERE / "session35", "36": HERE / "session36"}
LINE = re.compile(r"^(?P<path>[^:]+(?::cell \d+)?):(?P<line>\d+):\d+: (?P<code>SL\d{3}) ")


def labels(review: Path) -> dict:
    blind = json.loads((review / "blind.json").read_text())
    verdicts = {}
    for row in (review / "verdicts.txt").read_text().splitlines():
        parts = [p.strip() for p in row.split("|")]
        if len(parts) >= 2 and parts[0].startswith("J"):
            verdicts[parts[0]] = parts[1]
    return {(b["project"], b["path"], int(b["line"]), b["code"]): (b["id"], verdicts.get(b["id"], "?")) for b in blind}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", required=True)
    parser.add_argument("--proj35", required=True)
    parser.add_argument("--proj36", required=True)
    parser.add_argument("--cuda", action="store_true")
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=args.src)
    extra = ["--config", 'assume-device="cuda"'] if args.cuda else []
    totals = {"TP": 0, "TP-low": 0, "FP": 0, "unlabelled": 0}
    for number, review in REVIEWS.items():
        known = labels(review)
        root = Path(getattr(args, f"proj{number}"))
        for project in sorted(p.name for p in root.iterdir() if p.is_dir()):
            if not any(k[0] == project for k in known) and not (review / "out" / f"new-{project}.txt").exists():
                continue
            out = subprocess.run([sys.executable, "-m", "streamlint", "check", "--no-cache", "--timeout", "300",
                                  "--format", "concise", "--exit-zero", *extra, "."], cwd=root / project, env=env,
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                m = LINE.match(line)
                if not m:
                    continue
                key = (project, m["path"], int(m["line"]), m["code"])
                jid, verdict = known.get(key, ("-", "unlabelled"))
                totals[verdict if verdict in totals else "unlabelled"] += 1
                print(f"review {number} | {project} | {jid} | {verdict} | {line}")
    judged = totals["TP"] + totals["TP-low"] + totals["FP"]
    right = totals["TP"] + totals["TP-low"]
    print(f"\nlabelled findings: {judged} (TP {totals['TP']}, TP-low {totals['TP-low']}, FP {totals['FP']}); "
          f"precision on them {right}/{judged}" + (f" = {right / judged:.0%}" if judged else "")
          + f"; unlabelled: {totals['unlabelled']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
