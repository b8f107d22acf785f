"""Baselines: record today's findings once, then report only the new ones.

A finding's key is its file (relative to the baseline's directory, `/`-separated), its
code, a fingerprint of its source line and its message, with line numbers in the
message blanked out. Row numbers are not part of it, so findings whose line moved
(code added or removed above them) still match; editing the flagged line makes its
finding new. Keys are counted: two identical findings need two entries.

The file is JSON, sorted and indented so that it diffs well:

    {
      "version": 1,
      "findings": [
        {"path": "pkg/train.py", "code": "SL103", "fingerprint": "3f2a...", "message": "...", "count": 1}
      ]
    }

`fingerprint` is the first 16 hex digits of the SHA-256 of the flagged line without
its comment, with every run of whitespace made one space and the ends stripped.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from streamlint.atomic_write import write_atomic
from streamlint.diagnostics import Diagnostic
from streamlint.selection import SOURCE_ERROR
from streamlint.suppression import comments as suppression

VERSION = 1
_LINE_NUMBER = re.compile(r"\b(lines?) \d+")

# (filename, notebook cell or None) -> the lines of its source (None when it cannot
# be read); for a notebook's finding, the lines of its cell.
SourceLines = Callable[[str, "int | None"], "list[str] | None"]


class BaselineError(Exception):
    """The baseline file cannot be read or is not a streamlint baseline (exit 2)."""


@dataclass(frozen=True, order=True)
class Key:
    path: str
    code: str
    fingerprint: str
    message: str


@dataclass
class Comparison:
    new: list[Diagnostic]  # not in the baseline: reported
    matched: int  # in the baseline: not reported
    stale: int  # baseline entries of the checked files that match no finding now


def fingerprint(line: str) -> str:
    normalized = " ".join(line.split())
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()[:16]


def key_of(diag: Diagnostic, root: Path, lines: list[str] | None) -> Key:
    """`lines`: the file's lines without their comments (see `code_lines`)."""
    line = lines[diag.row - 1] if lines and 0 < diag.row <= len(lines) else ""
    message = _LINE_NUMBER.sub(r"\1 _", diag.message)
    return Key(relative_path(diag.filename, root), diag.code, fingerprint(line), message)


def code_lines(source: SourceLines) -> SourceLines:
    """`source` with comments cut off the lines: adding `# TODO` or `# noqa: E501` to a
    flagged line does not make its finding new. Comments are found with tokenize."""
    cache: dict[tuple[str, int | None], list[str] | None] = {}

    def load(filename: str, cell: int | None = None) -> list[str] | None:
        if (filename, cell) not in cache:
            lines = source(filename, cell)
            if lines is not None:
                comments = suppression.scan("\n".join(lines)).comments
                lines = [
                    line[: comments[row][0]] if row in comments else line
                    for row, line in enumerate(lines, start=1)
                ]
            cache[filename, cell] = lines
        return cache[filename, cell]

    return load


def relative_path(filename: str, root: Path) -> str:
    """`filename` relative to `root`, `/`-separated; `-` (unnamed stdin) stays `-`."""
    if filename == "-":
        return filename
    return Path(os.path.relpath(os.path.abspath(filename), root)).as_posix()


def load(path: Path) -> Counter[Key]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise BaselineError(f"cannot read baseline {path}: {err.strerror or err}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BaselineError(f"baseline {path} is not valid JSON: {err}") from None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        found = data.get("version") if isinstance(data, dict) else None
        raise BaselineError(
            f"baseline {path}: expected a streamlint baseline with version {VERSION}, "
            f"found version {found!r}; record it again with --update-baseline"
        )
    counts: Counter[Key] = Counter()
    try:
        for entry in data["findings"]:
            key = Key(*(str(entry[f]) for f in ("path", "code", "fingerprint", "message")))
            counts[key] += int(entry["count"])
    except (KeyError, TypeError, ValueError) as err:
        raise BaselineError(f"baseline {path}: malformed entry ({err!r})") from None
    return counts


def dumps(counts: Counter[Key]) -> str:
    """The file's text: one finding per line, sorted, so that a diff shows one line
    per finding recorded or dropped."""
    rows = [
        json.dumps(
            {"path": k.path, "code": k.code, "fingerprint": k.fingerprint,
             "message": k.message, "count": n},
            ensure_ascii=False,
        )
        for k, n in sorted(counts.items()) if n > 0
    ]  # fmt: skip
    body = ",\n".join(f"    {row}" for row in rows)
    findings = f"[\n{body}\n  ]" if rows else "[]"
    return f'{{\n  "version": {VERSION},\n  "findings": {findings}\n}}\n'


def save(path: Path, counts: Counter[Key]) -> None:
    try:
        write_atomic(path, dumps(counts).encode("utf-8"))
    except OSError as err:
        raise BaselineError(f"cannot write baseline {path}: {err.strerror or err}") from None


def count_findings(
    diagnostics: Iterable[Diagnostic], root: Path, source: SourceLines
) -> Counter[Key]:
    """The baseline entries for `diagnostics`. SL000 is never recorded: a file that
    cannot be read or parsed is always reported."""
    source = code_lines(source)
    return Counter(
        key_of(d, root, source(d.filename, d.cell)) for d in diagnostics if d.code != SOURCE_ERROR
    )


def compare(
    diagnostics: Iterable[Diagnostic],
    baseline: Counter[Key],
    root: Path,
    source: SourceLines,
    checked: Iterable[str],
) -> Comparison:
    """Split `diagnostics` (sorted) into new ones and those in `baseline`. `checked`:
    the filenames of this run, for counting stale entries."""
    source = code_lines(source)
    left = Counter(baseline)
    new, matched = [], 0
    for diag in diagnostics:
        key = key_of(diag, root, source(diag.filename, diag.cell)) if diag.code != SOURCE_ERROR else None
        if key is not None and left[key] > 0:
            left[key] -= 1
            matched += 1
        else:
            new.append(diag)
    checked_paths = {relative_path(f, root) for f in checked}
    stale = sum(
        n for k, n in left.items() if k.path in checked_paths or not _exists(root, k.path)
    )
    return Comparison(new, matched, stale)


def updated(
    baseline: Counter[Key], current: Counter[Key], root: Path, checked: Iterable[str]
) -> Counter[Key]:
    """The baseline after a run over `checked`: their entries replaced by `current`;
    entries of files not checked this time kept while those files exist."""
    checked_paths = {relative_path(f, root) for f in checked}
    kept = Counter(
        {
            k: n
            for k, n in baseline.items()
            if k.path not in checked_paths and _exists(root, k.path)
        }
    )
    return kept + current


def _exists(root: Path, path: str) -> bool:
    return path == "-" or (root / path).exists()
