"""Build a copy of `src/` in which the staged v3 rules (`streamlint/rules_v3/`) are the
registered rules, so that any measure that runs the product as a user would (the recall
benchmark's `score.py`, `streamlint check`) can be pointed at the candidate without a branch:

    python scripts/v3_tree.py /tmp/v3src
    PYTHONPATH=/tmp/v3src python benchmarks/recall/score.py --only <id> ...

A development measure while the rules move to the v3 model (issue 27); the switch itself
moves the modules and deletes this script.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build(target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(ROOT / "src", target, ignore=shutil.ignore_patterns("__pycache__"))
    rules = target / "streamlint" / "rules"
    staged = target / "streamlint" / "rules_v3"
    # The v2 rule modules and their helpers go; the registry, `base` and SL900 (which reads
    # suppression comments, not the model) stay.
    for module in rules.glob("*.py"):
        if module.name.startswith(("sl", "_shared", "_hazard")) and not module.name.startswith("sl900"):
            module.unlink()
    for module in staged.glob("*.py"):
        if module.name == "__init__.py":
            continue
        text = module.read_text(encoding="utf-8").replace("streamlint.rules", "streamlint.rules")
        (rules / module.name).write_text(text, encoding="utf-8")
    shutil.rmtree(staged)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", type=Path, help="directory to create (replaced if it exists)")
    args = parser.parse_args(argv)
    build(args.target)
    print(args.target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
