"""`check --show-unknowns` (also `--explain-silence`): for each function with GPU work in the checked files, what the
stream model could not see where it would have mattered (a tensor's device at a host read, a copy's host memory,
a stream, a call nothing resolves), so that a run without findings can be understood and a declared model or
`assume-device` added. As `--show-files`, it lists instead of linting: the findings are `check`'s alone, and the
analysis is the one `check` runs (the same settings, models and walks)."""

from __future__ import annotations

import argparse
from typing import TextIO

from streamlint import deadline, isolation
from streamlint.checker import analyze
from streamlint.commands.exit import EXIT_CLEAN, UsageError
from streamlint.commands.unknowns_text import Entry, entries, write_json, write_text
from streamlint.config import SettingsResolver
from streamlint.discovery import discover
from streamlint.model import declared
from streamlint.model.prefilter import may_have_findings
from streamlint.model.readings.untold import unseen_in
from streamlint.settings import Settings
from streamlint.source import SourceFile, SourceKind, read_bytes


def run(args: argparse.Namespace, paths: list[str], resolver: SettingsResolver, out: TextIO) -> int:
    if "-" in paths:
        raise UsageError("--show-unknowns reads files; name them instead of stdin")
    found = discover(paths, resolver, force_exclude=args.force_exclude).files
    files: list[tuple[str, list[Entry], str]] = []
    gpu_functions = 0
    for path, settings in found:
        if SourceKind.of(path) is not SourceKind.PYTHON:
            continue
        entries, functions, error = _of_file(str(path), settings)
        gpu_functions += functions
        if entries or error:
            files.append((str(path), entries, error))
    (write_json if args.format == "json" else write_text)(files, gpu_functions, out)
    return EXIT_CLEAN


def _of_file(filename: str, settings: Settings) -> tuple[list[Entry], int, str]:
    """(its unknowns, how many of its functions do GPU work, why it was not analysed or "")."""
    try:
        data = read_bytes(filename)
    except OSError as error:
        return [], 0, error.strerror or str(error)
    if not (settings.named or settings.imports_gpu_module) and not may_have_findings(data, settings.assume_device):
        return [], 0, ""  # no GPU word: `check` does not analyse it either
    text = SourceFile(filename, data).text()
    if not isinstance(text, str):
        return [], 0, text.message
    try:
        with declared.using(settings.models, settings.per_thread_default_stream, settings.assume_device):
            return (*isolation.call_with_large_stack(_analysed, text, filename, timeout=settings.timeout), "")
    except deadline.AnalysisTimeout as error:
        return [], 0, str(error)
    except Exception as error:  # (a syntax error, a file too deep: `check` reports it as SL000)
        return [], 0, getattr(error, "message", None) or f"{type(error).__name__}: {error}"


def _analysed(text: str, filename: str) -> tuple[list[Entry], int]:
    checked = analyze(text, filename)
    functions, gpu = unseen_in(checked.v3)
    return entries(checked, functions, filename), gpu
