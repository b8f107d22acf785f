"""`streamlint rule CODE|NAME` (a rule's documentation) and `streamlint rule --all`."""

from __future__ import annotations

import argparse
import difflib
import json
from typing import TextIO

from streamlint import rules as registry
from streamlint.commands.exit import EXIT_CLEAN, UsageError
from streamlint.selection import SOURCE_ERROR, SOURCE_ERROR_NAME

# SL000 is no rule class (nothing queries the model for it): its documentation is here.
SOURCE_ERROR_SUMMARY = "A file that cannot be checked"
SOURCE_ERROR_DOCS = """\
## What it does
Reports a file that streamlint cannot check: unreadable, not text, not UTF-8, a syntax
error, nested deeper than Python allows, or an analysis that timed out or crashed.

## Why is this bad?
Nothing in such a file is checked, so it could hide any finding. The message says why
the file could not be checked, at the position of the problem when there is one.

SL000 is always reported: it cannot be deselected or suppressed with a comment."""


def run_rule(args: argparse.Namespace, out: TextIO) -> int:
    if args.all:
        return _list(args.format, out)
    code, name, summary, docs = _lookup(args.code)
    if args.format == "json":
        data = {"code": code, "name": name, "summary": summary, "docs": docs}
        out.write(json.dumps(data, indent=2) + "\n")
    else:
        out.write(f"# {name} ({code})\n\n{summary}\n\n{docs}\n")
    return EXIT_CLEAN


def _lookup(wanted: str) -> tuple[str, str, str, str]:
    """(code, name, summary, docs) of a rule given by code or by name."""
    if wanted in (SOURCE_ERROR, SOURCE_ERROR_NAME):
        return SOURCE_ERROR, SOURCE_ERROR_NAME, SOURCE_ERROR_SUMMARY, SOURCE_ERROR_DOCS
    for rule in registry.all_rules():
        if wanted in (rule.code, rule.name):
            return rule.code, rule.name, rule.summary, rule.docs()
    known = [SOURCE_ERROR, *(r.code for r in registry.all_rules())]
    names = [SOURCE_ERROR_NAME, *(r.name for r in registry.all_rules())]
    hint = difflib.get_close_matches(wanted, known + names, n=1)
    extra = f"; did you mean {hint[0]}?" if hint else ""
    raise UsageError(f"unknown rule {wanted!r}: give a code (like SL101) or a name{extra} "
                     "(`streamlint rule --all` lists them)")


def _list(fmt: str, out: TextIO) -> int:
    rows = [(SOURCE_ERROR, SOURCE_ERROR_NAME, SOURCE_ERROR_SUMMARY)]
    rows += [(r.code, r.name, r.summary) for r in registry.all_rules()]
    if fmt == "json":
        data = [{"code": c, "name": n, "summary": s} for c, n, s in rows]
        out.write(json.dumps(data, indent=2) + "\n")
        return EXIT_CLEAN
    width = max(len(n) for _, n, _ in rows)
    for code, name, summary in rows:
        out.write(f"{code}  {name:<{width}}  {summary}\n")
    return EXIT_CLEAN
