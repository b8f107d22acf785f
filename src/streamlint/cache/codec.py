"""Diagnostics to JSON and back, for the cache. Decoding checks every value's type: a
cache file is input like any other, and one that does not decode exactly is a miss."""

from __future__ import annotations

import dataclasses
from typing import Any

from streamlint.diagnostics import Diagnostic
from streamlint.fixes.model import Applicability, Edit, Fix

# The filename is left out: entries are keyed by absolute path and the name a run
# shows depends on how the file was named on the command line.
_FIELDS = tuple(f for f in dataclasses.fields(Diagnostic) if f.name != "filename")
_INT_FIELDS = frozenset({"row", "column", "end_row", "end_column", "noqa_row"})
_STR_FIELDS = frozenset({"code", "message", "name"})


class DecodeError(ValueError):
    """The entry is not one this version wrote."""


def encode_diagnostic(diag: Diagnostic) -> list[Any]:
    """A JSON list of the fields after the filename (TypeError for a value JSON cannot hold)."""
    out: list[Any] = []
    for f in _FIELDS:
        value = getattr(diag, f.name)
        if f.name == "fix":
            value = None if value is None else _encode_fix(value)
        elif value is not None and not isinstance(value, (int, str)):
            raise TypeError(f"cannot cache {f.name}={value!r}")
        out.append(value)
    return out


def decode_diagnostic(filename: str, raw: Any) -> Diagnostic:
    if not isinstance(raw, list) or len(raw) != len(_FIELDS):
        raise DecodeError("diagnostic")
    values: dict[str, Any] = {}
    for f, value in zip(_FIELDS, raw):
        if f.name in _INT_FIELDS:
            _expect(_is_int(value))
        elif f.name in _STR_FIELDS:
            _expect(isinstance(value, str))
        elif f.name == "fix":
            value = None if value is None else _decode_fix(value)
        elif f.name == "cell":
            _expect(value is None or _is_int(value))
        else:  # a field added later: plain values only
            _expect(value is None or isinstance(value, (int, str)))
        values[f.name] = value
    return Diagnostic(filename=filename, **values)


def _encode_fix(fix: Fix) -> list[Any]:
    edits = [[e.row, e.column, e.end_row, e.end_column, e.content] for e in fix.edits]
    return [fix.message, fix.applicability.value, edits]


def _decode_fix(raw: Any) -> Fix:
    _expect(isinstance(raw, list) and len(raw) == 3)
    message, applicability, edits = raw
    _expect(isinstance(message, str) and isinstance(edits, list))
    try:
        level = Applicability(applicability)
    except ValueError:
        raise DecodeError("fix applicability") from None
    decoded = []
    for edit in edits:
        _expect(isinstance(edit, list) and len(edit) == 5)
        _expect(all(_is_int(v) for v in edit[:4]) and isinstance(edit[4], str))
        decoded.append(Edit(*edit))
    return Fix(message, level, tuple(decoded))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _expect(condition: bool) -> None:
    if not condition:
        raise DecodeError("malformed cache entry")
