"""Check one source text: parse once, analyse once, run every selected rule over the analysis.

This module knows nothing about files, configuration or suppression comments: the
engine feeds it text and turns its `SourceError` into an SL000 diagnostic.
"""

from __future__ import annotations

import ast
import gc
import sys
import warnings
from contextlib import contextmanager
from typing import Iterator, Sequence

import libcst as cst

from streamlint import memory
from streamlint.checked_file import CheckedFile
from streamlint.diagnostics import Diagnostic
from streamlint.rules import Rule

# Deeply nested code can exhaust the recursion limit of the parser or the analysis;
# that is reported as SL000 for the file, never as a traceback.
_RECURSION_LIMIT = 6000


class SourceError(Exception):
    """The file could not be parsed or analysed. Row and column are 1-based."""

    def __init__(self, message: str, row: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.row = row
        self.column = column


def parse(source: str) -> cst.Module:
    try:
        with memory.parsing(len(source)):
            return cst.parse_module(source)
    except cst.ParserSyntaxError as err:
        message = str(err.message) if hasattr(err, "message") else str(err)
        python = python_syntax_error(source)
        if python is not None:
            raise python from None
        message = f"SyntaxError: {message} (Python accepts this file; libcst cannot parse it)"
        raise SourceError(message, err.raw_line, err.raw_column + 1) from None
    except RecursionError:
        raise SourceError("file too deeply nested to parse") from None
    except Exception as err:  # libcst can raise plain exceptions on odd input
        raise SourceError(f"cannot parse file: {err}") from None


def python_syntax_error(source: str) -> SourceError | None:
    """CPython's own report of a syntax error, or None when it parses the text.

    Its messages and positions beat libcst's, whose tokenizer errors (tabs, unterminated
    strings, stray characters) all point at 1:1. Only called once libcst has failed, on
    text that the nesting guard (nesting.py) has let through (CPython raises on deep nesting).
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are not ours to show
            ast.parse(source)
    except SyntaxError as err:  # IndentationError and TabError included
        return SourceError(f"{type(err).__name__}: {err.msg}", err.lineno or 1, err.offset or 1)
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


_checked = 0
# The cyclic garbage collector would rescan every live syntax tree node over and over
# while a file is analysed and its rules run (measured on PyTorch's sources: 22 s of
# 115 s, three quarters of it in the rules' allocations after the analysis, when the
# whole tree sat in the young generations). The trees are acyclic and freed by reference
# counting; the few cycles of the analysis are collected every so many files.
_COLLECT_EVERY = 32


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No automatic collection inside (nested uses are fine)."""
    global _checked
    gc_enabled = gc.isenabled()
    gc.disable()
    if gc_enabled:
        _checked += 1
        if _checked % _COLLECT_EVERY == 0:
            # The previous files' cycles are garbage by now; the young generations hold
            # them (long-lived objects, like other modules' summaries, are not rescanned).
            gc.collect(1)
    try:
        yield
    finally:
        if gc_enabled:
            gc.enable()


def analyze(source: str, path: str = "") -> CheckedFile:
    """Parse; the stream model (`CheckedFile.v3`, model/file_model.py) is built by the first
    rule that asks for it. Exposed for tests and tools that inspect the model. `path` lets
    imports of other modules of the project be followed."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, _RECURSION_LIMIT))
    try:
        with _collector_paused():
            return CheckedFile(parse(source), path, source)
    finally:
        sys.setrecursionlimit(old)


def _findings(analysis: CheckedFile, rules: Sequence[type[Rule]]) -> list:
    """Each rule's findings; the first rule that needs the v3 model builds it here (lazily),
    under the same recursion allowance as the parse."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, _RECURSION_LIMIT))
    try:
        return [(rule, f) for rule in rules for f in rule().check(analysis)]
    except RecursionError:
        raise SourceError("file too deeply nested for the stream analysis") from None
    finally:
        sys.setrecursionlimit(old)


def _at_method(analysis, node, rng):
    """A method call whose receiver is written over several lines (`(a if c else b).to(d)`)
    is pointed at from the method's name, where the line shows what the finding names."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)) or rng.start.line == rng.end.line:
        return rng
    name = analysis.position(node.func.attr)
    if name is None or name.start.line == rng.start.line:
        return rng
    return type(rng)(name.start, rng.end)


def check_source(source: str, filename: str, rules: Sequence[type[Rule]]) -> list[Diagnostic]:
    """Diagnostics of the given rules for one source text, sorted by position."""
    with _collector_paused():  # the rules allocate too, while the whole tree is alive
        return _check(source, filename, rules)


def _check(source: str, filename: str, rules: Sequence[type[Rule]]) -> list[Diagnostic]:
    analysis = analyze(source, filename)
    findings = _findings(analysis, rules)
    if not findings:
        return []
    out: dict[tuple[int, str, str], Diagnostic] = {}
    for rule, finding in findings:
        rng = analysis.position(finding.node)
        if rng is None:
            continue
        rng = _at_method(analysis, finding.node, rng)
        diag = Diagnostic(
            filename=filename,
            row=rng.start.line,
            column=rng.start.column + 1,
            code=rule.code,
            message=finding.message,
            end_row=rng.end.line,
            end_column=rng.end.column + 1,
            noqa_row=rng.start.line,
            name=rule.name,
            fix=finding.fix,
            help=finding.help,
        )
        # One finding per line and problem.
        out.setdefault((diag.row, diag.code, diag.message), diag)
    return sorted(out.values())

