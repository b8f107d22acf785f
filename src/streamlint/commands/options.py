"""The settings a checking command takes from its options: the rule selection layer,
the fixable layer (`--fixable`, `--unfixable`, `--extend-fixable`), `--ignore-noqa`,
`--timeout`, `--config` (a file, or `KEY=VALUE` overrides), `--isolated`, and the
file options `--exclude`, `--extend-exclude`, `--per-file-ignores` and
`--extend-per-file-ignores`; and the run-level switches a config may set (`fix`,
`unsafe-fixes`, `show-fixes`, `output-format`) where the command line did not."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from streamlint.commands.exit import UsageError
from streamlint.config import SettingsResolver, parse_inline
from streamlint.config_table import parse_selectors, parse_timeout
from streamlint.selection import RuleSelection

# `--add-noqa=REASON` (ruff's form) is split in two, so that a bare `--add-noqa` never
# takes the path after it for its reason.
NOQA_REASON = "--add-noqa-reason"


def split_noqa_reason(arg: str) -> list[str]:
    if arg.startswith("--add-noqa="):
        return ["--add-noqa", f"{NOQA_REASON}={arg.partition('=')[2]}"]
    return [arg]


def add_fixable_options(group) -> None:
    """`--fixable`, `--unfixable`, `--extend-fixable`: a selection layer for fixes."""
    add = group.add_argument
    add("--fixable", action="append", metavar="CODES", help="rules whose fixes may be applied (default: all)")
    add("--unfixable", action="append", metavar="CODES", help="rules whose fixes are never applied")
    add("--extend-fixable", action="append", metavar="CODES", help="like --fixable, on top of the config's")


def resolver_from(args: argparse.Namespace) -> SettingsResolver:
    layer = RuleSelection(
        select=_selectors(args.select, "--select"),
        extend_select=_selectors(args.extend_select, "--extend-select") or (),
        ignore=_selectors(args.ignore, "--ignore") or (),
    )
    fix_layer = RuleSelection(
        select=_selectors(args.fixable, "--fixable"),
        extend_select=_selectors(args.extend_fixable, "--extend-fixable") or (),
        ignore=_selectors(args.unfixable, "--unfixable") or (),
    )
    timeout = None if args.timeout is None else parse_timeout(_number(args.timeout), "invalid value for --timeout")
    config_file, inline = _config_options(args.config or [])
    if config_file is not None and args.isolated:
        raise UsageError(f"--config {config_file} cannot be used with --isolated (which ignores config files)")
    inline.update(_file_options(args))
    return SettingsResolver(
        explicit_config=config_file, overrides=layer, timeout=timeout,
        inline=inline, isolated=args.isolated, fix_overrides=fix_layer, ignore_noqa=args.ignore_noqa,
    )  # fmt: skip


def _config_options(values: list[str]) -> tuple[Path | None, dict[str, Any]]:
    """(the one config file named, the KEY=VALUE overrides): as in ruff, a value that
    names an existing file (or does not look like `key = value`) is a file."""
    path: Path | None = None
    inline: dict[str, Any] = {}
    for value in values:
        if "=" in value and not Path(value).is_file():
            inline.update(parse_inline(value))
            continue
        if path is not None:
            raise UsageError(f"--config names two files ({path} and {value}); give one")
        path = Path(value)
    return path, inline


def _file_options(args: argparse.Namespace) -> dict[str, Any]:
    table: dict[str, Any] = {}
    if args.exclude:
        table["exclude"] = _split(args.exclude)
    if args.extend_exclude:
        table["extend-exclude"] = _split(args.extend_exclude)
    if args.per_file_ignores:
        table["per-file-ignores"] = _per_file_ignores(args.per_file_ignores, "--per-file-ignores")
    if args.extend_per_file_ignores:
        table["extend-per-file-ignores"] = _per_file_ignores(args.extend_per_file_ignores, "--extend-per-file-ignores")
    return table


def _per_file_ignores(values: list[str], flag: str) -> dict[str, list[str]]:
    """`PATTERN:CODES` items (ruff's form) as a per-file-ignores table."""
    table: dict[str, list[str]] = {}
    for value in values:
        pattern, colon, codes = value.rpartition(":")
        if not colon or not pattern or not codes.strip():
            raise UsageError(f"invalid value for {flag}: {value!r} (expected PATTERN:CODES)")
        table.setdefault(pattern, []).extend(c.strip() for c in codes.split(",") if c.strip())
    return table


def _split(values: list[str]) -> list[str]:
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def _selectors(values: list[str] | None, flag: str) -> tuple[str, ...] | None:
    if values is None:
        return None
    if any(not value.strip(" ,") for value in values):
        # As in ruff: `--select ""` (a CI line whose variable is unset) is an error, not
        # "check nothing and pass".
        raise UsageError(f'{flag} "" names no rule: give codes, prefixes (SL1) or ALL')
    return parse_selectors(_split(values), f"invalid value for {flag}")


def _number(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text  # parse_timeout names the bad value


# The output format when neither the command line nor a config names one.
DEFAULT_FORMAT = "full"  # as output.DEFAULT_FORMAT (ruff: full; concise is one line per finding)
# The run-level switches: (option's dest, the Settings field a config sets, default).
RUN_SWITCHES = (
    ("fix", "fix", False),
    ("unsafe_fixes", "unsafe_fixes", False),
    ("show_fixes", "show_fixes", False),
    ("format", "output_format", DEFAULT_FORMAT),
)


def apply_run_config(args: argparse.Namespace, resolver: SettingsResolver) -> None:
    """Fill the switches the command line left unset (None) from the configuration of
    the working directory (ruff's project settings), else from the defaults."""
    project = resolver.for_path(os.getcwd())
    for dest, field, default in RUN_SWITCHES:
        if getattr(args, dest, None) is None:
            configured = getattr(project, field)
            setattr(args, dest, default if configured is None else configured)
