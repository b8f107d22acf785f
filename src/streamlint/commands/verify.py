"""`streamlint verify`: run flagged code on the GPU and measure each finding; the work
is the `runtime` package's (torch is needed only when it runs). `--sanitize` runs a
program under the stream sanitizer instead (`runtime/sanitize`). This wrapper says what
the command line got wrong before the runtime is loaded: a path that does not exist."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence, TextIO

from streamlint.runtime.sanitize.run import add_sanitize_arguments, run_sanitize
from streamlint.runtime.verify import add_verify_parser as _add_verify_parser
from streamlint.runtime.verify import run_verify as _run_verify

EXIT_USAGE = 2
DESCRIPTION = (
    "Run runtime fixture pairs, or a script of your own, on a CUDA GPU under a tracer "
    "(the PyTorch profiler, or CUPTI through cupti-python where PyTorch is not installed; "
    "see --tracer), and report per finding whether its effect is real and how large."
)


def add_verify_parser(subparsers) -> argparse.ArgumentParser:
    parser = _add_verify_parser(subparsers)
    parser.description = DESCRIPTION
    add_sanitize_arguments(parser)
    return parser


def run_verify(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    if getattr(args, "sanitize", False):
        return run_sanitize(args, out, err)  # (says "no such file" itself)
    missing = None if args.from_records is not None else first_missing(args.paths)
    if missing is not None:
        (err or sys.stderr).write(f"streamlint verify: no such file: {missing}\n")
        return EXIT_USAGE
    return _run_verify(args, out, err)


def first_missing(paths: Sequence[str]) -> str | None:
    """The first named path that does not exist, up to the script (whose arguments
    follow it and need not be paths)."""
    from streamlint.runtime.pairs import is_variant

    for item in paths:
        if item == "--":
            return None
        path = Path(item)
        if not path.exists():
            return item
        if path.is_file() and not is_variant(path):
            return None  # a script: what follows are its arguments
    return None


__all__ = ["add_verify_parser", "run_verify"]
