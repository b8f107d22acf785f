"""`check --show-files` (the files a run would check) and `check --show-settings`
(the settings the first of them gets), as in ruff; nothing is linted."""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import TextIO

from streamlint import rules as registry
from streamlint.commands.exit import EXIT_CLEAN
from streamlint.config import SettingsResolver
from streamlint.discovery import discover
from streamlint.settings import Settings, enabled_codes_for_file


def run(args: argparse.Namespace, paths: list[str], resolver: SettingsResolver, out: TextIO) -> int:
    file_paths = [p for p in paths if p != "-"]
    found = discover(file_paths, resolver, force_exclude=args.force_exclude).files if file_paths else []
    if args.show_files:
        for path, _ in found:
            out.write(f"{os.path.abspath(path)}\n")
        return EXIT_CLEAN
    if found:
        path, settings = found[0]
        filename = str(path)
    else:  # stdin, or nothing found: the settings of the working directory
        filename = args.stdin_filename or os.getcwd()
        settings = resolver.for_path(filename)
    write_settings(filename, settings, out)
    return EXIT_CLEAN


def write_settings(filename: str, settings: Settings, out: TextIO) -> None:
    out.write(f"Resolved settings for: {os.path.abspath(filename)}\n")
    out.write(f"Settings path: {settings.config_file or '(none: defaults)'}\n\n")
    for field in dataclasses.fields(settings):
        if field.name in ("config_file", "named"):
            continue
        out.write(f"{field.name.replace('_', '-')} = {_value(getattr(settings, field.name))}\n")
    enabled = enabled_codes_for_file(settings, filename, registry.rule_codes())
    out.write(f"enabled-rules = {_value(enabled)}\n")


def _value(value: object) -> str:
    if isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
        return "[\n" + "".join(f"    {v!r},\n" for v in value) + "]"
    return repr(value) if value is not None else "None"
