"""`check --show-files` (the files a run would check) and `check --show-settings`
(the settings the first of them gets), as in ruff; nothing is linted."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path
from typing import TextIO

from streamlint import rules as registry
from streamlint.commands.exit import EXIT_CLEAN
from streamlint.config import SettingsResolver
from streamlint.discovery import discover
from streamlint.selection import RuleSelection
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
    """The settings as TOML (ruff prints its own in a TOML-like form): the keys a config
    takes, by their config names, then what the command line layered on top, then the
    rules that run on the file. Unset keys are comments, since TOML has no null."""
    out.write(f"# Resolved settings for: {os.path.abspath(filename)}\n")
    out.write(f"# Settings path: {settings.config_file or '(none: defaults)'}\n\n")
    tables: list[tuple[str, dict]] = []
    for field in dataclasses.fields(settings):
        if field.name in _NOT_SHOWN:
            continue
        key, value = field.name.replace("_", "-"), getattr(settings, field.name)
        if field.name == "per_file_ignores":
            tables.append((key, {pattern: list(codes) for pattern, codes in value}))
        elif field.name == "models":
            out.write(f"# model: {len(value)} declared API model(s)\n")
        elif value is None:
            out.write(f"# {key} is not set\n")
        else:
            out.write(f"{key} = {toml_value(value)}\n")
    enabled = enabled_codes_for_file(settings, filename, registry.rule_codes())
    out.write(f"enabled-rules = {toml_value(enabled)}\n")
    for name, table in tables:
        out.write(f"\n[{name}]\n")
        for pattern, codes in table.items():
            out.write(f"{json.dumps(pattern)} = {toml_value(tuple(codes))}\n")


# Fields that are no setting of the file: where it came from, and discovery's own mark.
_NOT_SHOWN = ("config_file", "named")


def toml_value(value: object, *, one_line: bool = False) -> str:
    """`value` in TOML: strings and paths quoted, tuples as arrays (one string a line
    unless `one_line`), selection layers (the command line's) as inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (str, Path)):
        return json.dumps(str(value))  # a JSON string is a TOML basic string
    if isinstance(value, RuleSelection):
        fields = (("select", value.select), ("extend-select", value.extend_select), ("ignore", value.ignore))
        parts = [f"{key} = {toml_value(codes, one_line=True)}" for key, codes in fields if codes is not None]
        return "{ " + ", ".join(parts) + " }"
    if isinstance(value, (tuple, list, frozenset)):
        items = list(value)
        if items and not one_line and all(isinstance(v, str) for v in items):
            return "[\n" + "".join(f"    {json.dumps(v)},\n" for v in items) + "]"
        return "[" + ", ".join(toml_value(v) for v in items) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")
