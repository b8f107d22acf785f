"""`streamlint verify`: run flagged code on the GPU and measure each finding; the work
is the `runtime` package's (torch is needed only when it runs). `--sanitize` runs a
program under the stream sanitizer instead (`runtime/sanitize`)."""

from streamlint.runtime.sanitize.run import add_sanitize_arguments, run_sanitize
from streamlint.runtime.verify import add_verify_parser as _add_verify_parser
from streamlint.runtime.verify import run_verify as _run_verify


def add_verify_parser(subparsers):
    parser = _add_verify_parser(subparsers)
    add_sanitize_arguments(parser)
    return parser


def run_verify(args, out=None, err=None) -> int:
    if getattr(args, "sanitize", False):
        return run_sanitize(args, out, err)
    return _run_verify(args, out, err)


__all__ = ["add_verify_parser", "run_verify"]
