"""`streamlint verify`: run flagged code on the GPU and measure each finding; the work
is the `runtime` package's (torch is needed only when it runs)."""

from streamlint.runtime.verify import add_verify_parser, run_verify

__all__ = ["add_verify_parser", "run_verify"]
