"""SL900: the suppression comments that suppress nothing, each with a fix removing it.

`apply.py` calls `find` after the other rules ran, with their findings before
suppression, so that a comment counts as used exactly when it hides a finding.
The rule's docs (rules/sl900_unused_suppression.py) say what is reported and why.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from streamlint.diagnostics import Diagnostic
from streamlint.fixes.model import Applicability, Edit, Fix
from streamlint.rules.sl900_unused_suppression import UnusedSuppression
from streamlint.selection import SOURCE_ERROR, matches
from streamlint.source import split_lines
from streamlint.suppression.comments import Code, Directive, Malformed, Suppressions

CODE = UnusedSuppression.code
_OWN_SELECTOR = re.compile(r"SL\d*")  # streamlint's codes and prefixes; others are not ours
_WHERE = {"noqa": "`# noqa`", "ignore": "`# streamlint: ignore`",
          "ignore-file": "`# streamlint: ignore-file`"}  # fmt: skip


def find(
    text: str,
    filename: str,
    findings: Iterable[Diagnostic],
    found: Suppressions,
    enabled: Iterable[str],
    known: Sequence[str],
) -> list[Diagnostic]:
    """SL900 diagnostics for `text`. `findings`: every finding of the enabled rules,
    before suppression; `enabled`: the codes of the rules that ran on this file;
    `known`: every registered rule code."""
    findings = list(findings)
    if not found.directives or any(d.code == SOURCE_ERROR for d in findings):
        return []
    if _covers_sl900(found.file):
        return []
    enabled = frozenset(enabled)
    used = _used(findings, found)
    silenced_rows = {
        d.row for d in found.directives
        if d.kind != "ignore-file" and d.codes and any(matches(c.selector, CODE) for c in d.codes)
    }  # fmt: skip
    lines = split_lines(text)
    out = []
    for index, directive in enumerate(found.directives):
        if directive.kind != "ignore-file" and directive.row in silenced_rows:
            continue
        if directive.malformed is Malformed.MISSING_COLON:
            out.append(_missing_colon(filename, lines, directive))
            continue
        if directive.malformed is Malformed.NO_CODES:
            out.append(_no_codes(filename, lines, found, directive))
            continue
        if directive.malformed is Malformed.LOWER_CASE:
            # A lower-case list of another tool's codes (`e501`) is that tool's to judge (and hides none of ours).
            if any(_OWN_SELECTOR.fullmatch(c.selector) for c in directive.codes or ()):
                out.append(_lower_case(filename, lines, directive))
            continue
        if directive.malformed is Malformed.NOT_OWN_LINE:
            out.append(_not_own_line(filename, directive))
            continue
        if directive.codes is None:
            # A bare noqa comment also silences other tools: it is never reported.
            if directive.kind == "ignore" and (index, None) not in used:
                out.append(_diagnostic(filename, lines, found, directive, None))
            continue
        unused = [
            code for number, code in enumerate(directive.codes)
            if (index, number) not in used and _known_to_be_unused(code.selector, enabled, known)
        ]  # fmt: skip
        if unused:
            out.append(_diagnostic(filename, lines, found, directive, unused))
    return out


# Text without which no directive can be reported: a `streamlint:` directive, a code of
# ours (SL900 speaks only of streamlint's selectors, and of `noqa SL...` without its
# colon), or a colon with no code right after it (an empty `noqa:` list). A superset
# test on the raw text: comments are only found by tokenizing, which costs far more.
_REPORTABLE = re.compile(r"streamlint|sl[a-z]*[0-9]|noqa:(?!\s)", re.IGNORECASE)


def could_report(text: str) -> bool:
    """False when no comment of `text` can give an SL900 without findings to hide."""
    return _REPORTABLE.search(text) is not None


def _used(findings: list[Diagnostic], found: Suppressions) -> set[tuple[int, int | None]]:
    """(directive index, code index) pairs that suppress a finding; code index None
    for a directive without codes."""
    by_row: dict[int, list[int]] = {}
    file_level = []
    for index, directive in enumerate(found.directives):
        if directive.kind == "ignore-file":
            file_level.append(index)
        else:
            by_row.setdefault(directive.row, []).append(index)
    used: set[tuple[int, int | None]] = set()
    for diag in findings:
        candidates = list(file_level)
        for row in found.rows(diag):
            candidates.extend(by_row.get(row, ()))
        for index in candidates:
            codes = found.directives[index].codes
            if codes is None:
                used.add((index, None))
                continue
            used.update((index, n) for n, c in enumerate(codes) if matches(c.selector, diag.code))
    return used


def _known_to_be_unused(selector: str, enabled: frozenset[str], known: Sequence[str]) -> bool:
    """True for a streamlint selector all of whose rules ran on the file."""
    if not _OWN_SELECTOR.fullmatch(selector):
        return False
    covered = [code for code in known if matches(selector, code)]
    return bool(covered) and all(code in enabled for code in covered)


def _covers_sl900(selectors: frozenset[str] | None) -> bool:
    return selectors is None or any(matches(s, CODE) for s in selectors)


def _diagnostic(
    filename: str,
    lines: list[str],
    found: Suppressions,
    directive: Directive,
    unused: list[Code] | None,
) -> Diagnostic:
    where = "in this file" if directive.kind == "ignore-file" else "here"
    if unused is None:
        message = f"Unused {_WHERE[directive.kind]}: nothing to suppress {where}"
        what = "Remove the unused suppression"
    else:
        names = ", ".join(c.text for c in unused)
        plural = "s" if len(unused) > 1 else ""
        message = f"Unused {_WHERE[directive.kind]} code{plural} {names}: nothing to suppress {where}"
        what = f"Remove unused code{plural} {names}"
    row = directive.row
    return Diagnostic(
        filename, row, directive.start + 1, CODE, message, row, directive.end + 1, row,
        UnusedSuppression.name,
        fix=Fix(what, Applicability.SAFE, (_removal(lines, found, directive, unused),)),
    )  # fmt: skip


def _missing_colon(filename: str, lines: list[str], directive: Directive) -> Diagnostic:
    """ruff's PGH004 (blanket-noqa): a colon turns the comment into what it says. The
    fix is unsafe: the comment stops suppressing the other codes of its line."""
    row = directive.row
    codes = lines[row - 1][directive.codes_start : directive.codes_end]
    message = f"`# noqa {codes}` has no colon, so it suppresses every code here: write `# noqa: {codes}`"
    insert = Edit(row, directive.end + 1, row, directive.end + 1, ":")
    return Diagnostic(
        filename, row, directive.start + 1, CODE, message, row, directive.end + 1, row,
        UnusedSuppression.name, fix=Fix("Add a colon", Applicability.UNSAFE, (insert,)),
    )  # fmt: skip


def _no_codes(filename: str, lines: list[str], found: Suppressions, directive: Directive) -> Diagnostic:
    """ruff's warning for an invalid noqa: the colon promises codes that are not there."""
    row = directive.row
    message = "`# noqa:` names no code, so it suppresses nothing: name the codes after the colon"
    return Diagnostic(
        filename, row, directive.start + 1, CODE, message, row, directive.end + 1, row,
        UnusedSuppression.name,
        fix=Fix("Remove the empty suppression", Applicability.SAFE, (_removal(lines, found, directive, None),)),
    )  # fmt: skip


def _lower_case(filename: str, lines: list[str], directive: Directive) -> Diagnostic:
    """ruff's warning for `# noqa: e711`: codes are upper case, so the comment is not a
    list of codes and suppresses nothing. The fix (upper case) is unsafe: it starts
    suppressing."""
    row = directive.row
    written = lines[row - 1][directive.codes_start : directive.codes_end]
    message = f"`# noqa: {written}` suppresses nothing: codes are upper case; write `# noqa: {written.upper()}`"
    edit = Edit(row, directive.codes_start + 1, row, directive.codes_end + 1, written.upper())
    return Diagnostic(
        filename, row, directive.start + 1, CODE, message, row, directive.end + 1, row,
        UnusedSuppression.name, fix=Fix("Write the codes in upper case", Applicability.UNSAFE, (edit,)),
    )  # fmt: skip


def _not_own_line(filename: str, directive: Directive) -> Diagnostic:
    """ruff's warning for `# ruff: noqa` after code: a file's suppression must be on a
    line of its own."""
    row = directive.row
    message = ("`# streamlint: ignore-file` after code suppresses nothing: put it on a line of its own "
               "(or use `# streamlint: ignore[...]` for this line)")
    return Diagnostic(
        filename, row, directive.start + 1, CODE, message, row, directive.end + 1, row, UnusedSuppression.name,
    )  # fmt: skip


def _removal(
    lines: list[str], found: Suppressions, directive: Directive, unused: list[Code] | None
) -> Edit:
    """The edit that drops `unused` from the directive, or the whole directive when no
    code would be left."""
    row = directive.row
    line = lines[row - 1].rstrip("\r")
    kept = [c for c in directive.codes or () if unused is not None and c not in unused]
    if kept:
        content = ", ".join(c.text for c in kept)
        return Edit(row, directive.codes_start + 1, row, directive.codes_end + 1, content)
    comment_col, comment = found.comments[row]
    before = comment[: directive.start - comment_col]
    after = comment[directive.end - comment_col :]
    if not before.strip() and not after.strip():  # the comment is this directive alone
        code = line[:comment_col].rstrip()
        if code:
            return Edit(row, len(code) + 1, row, len(line) + 1, "")
        if row < len(lines):  # a comment on a line of its own: drop the line
            return Edit(row, 1, row + 1, 1, "")
        return Edit(row, 1, row, len(line) + 1, "")
    if not before.strip():  # more comment follows: keep it a comment
        rest = after.lstrip()
        end = directive.end + len(after) - len(rest)
        return Edit(row, directive.start + 1, row, end + 1, "" if rest.startswith("#") else "# ")
    keep_to = comment_col + len(before.rstrip())
    end = len(line) if not after.strip() else directive.end
    return Edit(row, keep_to + 1, row, end + 1, "")
