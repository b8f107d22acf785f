"""`python -m streamlint.runtime.sanitize PROGRAM ...`: the sanitizer without the rest of
the command line (it needs neither libcst nor the linter)."""

import argparse
import sys

from .run import add_sanitize_arguments, run_sanitize

parser = argparse.ArgumentParser(prog="python -m streamlint.runtime.sanitize")
parser.add_argument("paths", nargs="*", metavar="PATH")
parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
add_sanitize_arguments(parser)
args = parser.parse_args()
args.sanitize = True
sys.exit(run_sanitize(args))
