"""One Python text: lint only, or lint and fix, side by side (ruff's `lint_only` and
`lint_fix`). Both run the checker once over the text as given (to fix, with every rule:
a fix must not add a finding of any rule, selected or not); `lint_fix` then applies the
fixes and lints only the fixed text, to verify them and to find what remains.

Every failure about the text (unparsable, too deeply nested, timed out, a crash in the
analysis or a rule) becomes one SL000 diagnostic and the run goes on. Checked code is
only ever read: never imported, executed or written.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Sequence

from streamlint import deadline, isolation
from streamlint import rules as registry
from streamlint.diagnostics import Diagnostic
from streamlint.fixes.apply import FixOutcome
from streamlint.fixes.rounds import FixRounds
from streamlint.fixes.verify import Linted
from streamlint.model.prefilter import may_have_findings
from streamlint.nesting import nesting_problem
from streamlint.rules import Rule
from streamlint.selection import SOURCE_ERROR
from streamlint.settings import Settings, fixable_codes, rules_for_file
from streamlint.source import SourceFile, line_count, source_error, universal_newlines
from streamlint.suppression.apply import apply_suppressions

CheckFn = Callable[[str, str, Sequence[type[Rule]]], "list[Diagnostic]"]


@dataclass(frozen=True)
class FixRequest:
    """Fix what is linted (`--fix`): safe fixes, and with `unsafe` the unsafe ones too."""

    unsafe: bool = False


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic]
    analysed: bool  # False when the prefilter skipped the file (or it could not be read)
    lines: int
    # With --fix: what fixing did (None when the file was only linted).
    fixed: Optional[FixOutcome] = field(default=None, compare=False)
    # The bytes that were checked, kept when a fix is to be written over them.
    data: Optional[bytes] = field(default=None, compare=False, repr=False)


def load_checker() -> tuple[CheckFn, type[Exception]]:
    """The checker and its error type; loaded on first use (and swappable in tests)."""
    # lazy: the checker imports libcst and the stream model, which a run served
    # entirely from the cache never needs.
    from streamlint import checker

    return checker.check_source, checker.SourceError


def lint_text(
    text: str, filename: str, settings: Settings, *, rules: Sequence[type[Rule]] | None = None
) -> list[Diagnostic]:
    """Lint only: diagnostics for one source text after selection and suppression, sorted."""
    text = universal_newlines(text)
    enabled = rules_for_file(settings, filename, rules)
    found = _check(text, filename, settings, [r for r in enabled if not r.meta])
    if _failed(found):
        return found
    return settle(found, text, filename, {rule.code for rule in enabled}, settings)


def lint_every(
    text: str, filename: str, settings: Settings, *, rules: Sequence[type[Rule]] | None = None
) -> Linted:
    """The selected rules' diagnostics (as `lint_text`) and, from the same run of the
    checker, every rule's whatever the selection: what a fix must not add to."""
    text = universal_newlines(text)
    enabled = rules_for_file(settings, filename, rules)
    every_rule = registry.all_rules()
    found = _check(text, filename, settings, [r for r in every_rule if not r.meta])
    if _failed(found):
        return Linted(found, found)
    codes = {rule.code for rule in enabled}
    shown = settle([d for d in found if d.code in codes], text, filename, codes, settings)
    every = settle(found, text, filename, {rule.code for rule in every_rule}, settings)
    return Linted(shown, every)


def _failed(found: list[Diagnostic]) -> bool:
    return len(found) == 1 and found[0].code == SOURCE_ERROR


def _check(text: str, filename: str, settings: Settings, checked: Sequence[type[Rule]]) -> list[Diagnostic]:
    """The checker's findings before suppression, or one SL000 when it failed."""
    try:
        check, error_type = load_checker()
    except Exception as err:  # e.g. a broken install: report it per file, not a traceback
        return [source_error(filename, f"internal error: cannot load the checker: {err}")]
    problem = nesting_problem(text)
    if problem is not None:
        message, row, column = problem
        return [source_error(filename, message, row, column)]
    # lazy: only a file that is analysed needs the models (and the model package).
    from streamlint.model import declared

    # the project's API models, per-thread streams and assumed device
    try:
        with declared.using(settings.models, settings.per_thread_default_stream, settings.assume_device):
            return isolation.call_with_large_stack(check, text, filename, checked, timeout=settings.timeout)
    except deadline.AnalysisTimeout as err:
        message = f"{err}; raise `timeout` in [tool.streamlint] or pass --timeout"
        return [source_error(filename, message)]
    except error_type as err:
        message = getattr(err, "message", str(err))
        return [source_error(filename, message, getattr(err, "row", 1), getattr(err, "column", 1))]
    except RecursionError:
        return [source_error(filename, "file too deeply nested to analyse")]
    except Exception as err:
        return [source_error(filename, f"internal error: {type(err).__name__}: {err}")]


def settle(
    found: Sequence[Diagnostic], text: str, filename: str, codes: set[str], settings: Settings
) -> list[Diagnostic]:
    """The checker's findings as the settings show them: the suppression comments
    applied (none with `--ignore-noqa`) and, as in ruff, no fix on a finding whose rule
    is not fixable (fixable / unfixable / extend-fixable): `--fix` leaves it alone and
    the report does not offer it."""
    shown = apply_suppressions(found, text, filename, codes, honour_comments=not settings.ignore_noqa)
    fixable = fixable_codes(settings, tuple(sorted({d.code for d in shown if d.fix is not None})))
    return [d if d.fix is None or d.code in fixable else replace(d, fix=None) for d in shown]


def lint_fix(
    text: str,
    filename: str,
    settings: Settings,
    *,
    unsafe: bool = False,
    rules: Sequence[type[Rule]] | None = None,
    linted: Linted | None = None,
) -> FixOutcome:
    """Lint and fix: apply every applicable fix whose edits do not overlap another's,
    lint the result with every rule, and repeat (up to MAX_PASSES). A round whose
    result is wrong (fixes/verify.py) is undone, each of its fixes is tried alone, and
    those wrong alone are refused and named; the others are applied. `linted`: the
    text's own findings, when the caller has them already (it is then not linted again)."""
    rounds = FixRounds(lambda t: lint_every(t, filename, settings, rules=rules), unsafe)
    return rounds.run(text, linted if linted is not None else rounds.relint(text))


def has_fix(diagnostics: Sequence[Diagnostic], unsafe: bool) -> bool:
    return any(d.fix is not None and d.fix.applies(unsafe) for d in diagnostics)


def lint_python(
    source: SourceFile,
    settings: Settings,
    *,
    rules: Sequence[type[Rule]] | None = None,
    fix: Optional[FixRequest] = None,
) -> FileResult:
    """A .py file's result: decoded, prefiltered, linted; with `fix`, fixed in the
    same pass."""
    text = source.text()
    if isinstance(text, Diagnostic):
        return FileResult(source.path, [text], analysed=False, lines=0)
    lines = line_count(text)
    analysed_anyway = settings.named or settings.imports_gpu_module  # (discovery's answer for this file)
    if not analysed_anyway and not may_have_findings(source.data, settings.assume_device):
        return FileResult(source.path, [], analysed=False, lines=lines)
    try:
        if fix is None:
            return FileResult(source.path, lint_text(text, source.path, settings, rules=rules), True, lines)
        linted = lint_every(text, source.path, settings, rules=rules)
        if not has_fix(linted.shown, fix.unsafe):
            return FileResult(source.path, linted.shown, analysed=True, lines=lines)
        outcome = lint_fix(text, source.path, settings, unsafe=fix.unsafe, rules=rules, linted=linted)
    except Exception as err:  # selection/suppression bugs must not abort the run either
        diagnostics = [source_error(source.path, f"internal error: {type(err).__name__}: {err}")]
        return FileResult(source.path, diagnostics, analysed=True, lines=lines)
    return FileResult(source.path, outcome.remaining, True, lines, fixed=outcome, data=source.data)
