"""`streamlint clean`: remove the result cache."""

from __future__ import annotations

import argparse
from typing import TextIO

from streamlint import cache as result_cache
from streamlint.commands.check import cache_dir
from streamlint.commands.exit import EXIT_CLEAN
from streamlint.config import SettingsResolver


def run_clean(args: argparse.Namespace, out: TextIO) -> int:
    resolver = SettingsResolver(explicit_config=args.config)
    _, message = result_cache.clean(cache_dir(args.cache_dir, resolver))
    out.write(message + "\n")
    return EXIT_CLEAN
