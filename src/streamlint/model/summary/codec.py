"""Summaries to text and back: canonical JSON (sorted, position-free), so a digest is stable
and a summary can live in the cache and cross process boundaries."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from enum import Enum
from typing import Any

from streamlint.model.domain import order, paths, streams, values
from streamlint.model.summary import effects, function_summary

# Every type a summary may hold, by name: the codec refuses anything else.
_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        paths.Root, paths.RootKind, paths.Index, paths.IndexKind, paths.Path,
        streams.StreamRef, streams.StreamRefKind,
        values.AbsValue, values.ValueKind, values.Memory,
        order.AccessEvent, order.ConflictKind,
        effects.Effect, effects.EffectKind, effects.Guard, effects.GuardKind, effects.Operation,
        function_summary.FunctionSummary,
    )
}


def encode(value: Any) -> Any:
    if isinstance(value, Enum):
        return {"~e": type(value).__name__, "v": value.value}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if _TYPES.get(name) is not type(value):
            raise TypeError(f"not a summary type: {name}")
        # a field marked `omit_default` is left out at its default, so that adding one changes no digest
        return {"~d": name, **{f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)
                               if not (f.metadata.get("omit_default") and getattr(value, f.name) == f.default)}}
    if isinstance(value, frozenset):
        items = [encode(v) for v in value]
        return {"~s": sorted(items, key=lambda item: json.dumps(item, sort_keys=True))}
    if isinstance(value, (tuple, list)):
        return [encode(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot encode {type(value).__name__}")


def decode(data: Any) -> Any:
    if isinstance(data, list):
        return tuple(decode(v) for v in data)
    if not isinstance(data, dict):
        return data
    if "~e" in data:
        return _TYPES[data["~e"]](data["v"])
    if "~s" in data:
        return frozenset(decode(v) for v in data["~s"])
    cls = _TYPES[data["~d"]]
    return cls(**{k: decode(v) for k, v in data.items() if k != "~d"})


def dumps(value: Any) -> str:
    """The canonical text (sorted, position-free)."""
    return json.dumps(encode(value), sort_keys=True, separators=(",", ":"))


def sealed(summary: "function_summary.FunctionSummary") -> "function_summary.FunctionSummary":
    """The summary with its digest: a hash of what its callers can observe. Sites are ordinals, not
    lines, so an edit elsewhere in the file keeps it; and the function's own sites are named in the
    order they first appear, not by their ordinals (walk-internal numbers: a callee's site is only
    ever compared for equality), so a body edit with the same effects keeps it too (D-34)."""
    encoded = _own_sites_renamed(encode(dataclasses.replace(summary, digest="")), summary.qualname + "#", {})
    text = json.dumps(encoded, sort_keys=True, separators=(",", ":"))
    return dataclasses.replace(summary, digest=hashlib.sha256(text.encode()).hexdigest()[:16])


def _own_sites_renamed(data: Any, own: str, names: dict) -> Any:
    """The encoded summary with each site of the function's own (`own` + ordinal, also as a part of a
    site made through calls, `a#1>b#2`) renamed by first appearance, in the canonical text's order."""
    if isinstance(data, dict):
        return {k: _own_sites_renamed(data[k], own, names) for k in sorted(data)}
    if isinstance(data, list):
        return [_own_sites_renamed(v, own, names) for v in data]
    if isinstance(data, str) and own in data:
        return ">".join(names.setdefault(part, f"{own}{len(names)}") if part.startswith(own) else part
                        for part in data.split(">"))
    return data


def loads(data: str) -> "function_summary.FunctionSummary":
    summary = decode(json.loads(data))
    if not isinstance(summary, function_summary.FunctionSummary):
        raise TypeError("not a FunctionSummary")
    return summary
