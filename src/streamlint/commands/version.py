"""`streamlint version`: the version, as text or JSON (ruff's `version` command)."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from streamlint import __version__
from streamlint.commands.exit import EXIT_CLEAN


def add_version_parser(sub) -> argparse.ArgumentParser:
    parser = sub.add_parser("version", help="show streamlint's version")
    parser.add_argument("--format", "--output-format", dest="format", default="text", choices=("text", "json"))
    return parser


def run_version(args: argparse.Namespace, out: TextIO) -> int:
    if args.format == "json":
        out.write(json.dumps({"version": __version__}) + "\n")
    else:
        out.write(f"streamlint {__version__}\n")
    return EXIT_CLEAN
