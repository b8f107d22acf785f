"""`check --baseline FILE`: report only the findings not recorded in FILE, recording
it first when it does not exist (or with `--update-baseline`). The file's format and
matching are `baseline.py`'s."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Sequence, TextIO

from streamlint import baseline
from streamlint.commands.report import plural
from streamlint.diagnostics import Diagnostic
from streamlint.engine.lint import FileResult


def apply(
    args: argparse.Namespace,
    results: Sequence[FileResult],
    diagnostics: list[Diagnostic],
    source: baseline.SourceLines,
    err: TextIO,
) -> list[Diagnostic]:
    """The findings of `diagnostics` that are not in the baseline; records or updates
    the baseline first when asked to (or when it does not exist yet)."""
    path: Path = args.baseline
    root = path.absolute().parent
    checked = [r.path for r in results]
    say = (lambda line: None) if args.quiet else (lambda line: err.write(f"streamlint: {line}\n"))
    recording = args.update_baseline or not path.exists()
    if recording:
        old = baseline.load(path) if path.exists() else Counter()
        current = baseline.count_findings(diagnostics, root, source)
        recorded = baseline.updated(old, current, root, checked)
        baseline.save(path, recorded)
        total = plural(sum(recorded.values()), "finding")
        if old:
            added, dropped = sum((recorded - old).values()), sum((old - recorded).values())
            say(f"updated the baseline {path}: {total} ({added} added, {dropped} dropped)")
        else:
            say(f"recorded {total} in the baseline {path}; only new findings are reported from now on")
    else:
        recorded = baseline.load(path)
    comparison = baseline.compare(diagnostics, recorded, root, source, checked)
    if comparison.matched and not recording:
        say(f"{plural(comparison.matched, 'finding')} in the baseline not shown")
    if comparison.stale:
        entries = "entry no longer matches" if comparison.stale == 1 else "entries no longer match"
        say(
            f"{comparison.stale} baseline {entries} a finding (fixed or changed); "
            "--update-baseline drops stale entries"
        )
    return comparison.new
