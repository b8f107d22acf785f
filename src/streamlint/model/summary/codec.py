"""Summaries to canonical JSON and back (sorted, position-free): a stable digest, a cache entry, a process boundary."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import typing
from enum import Enum
from typing import Any

from streamlint.model.summary import function_summary


def _types(hint: Any, found: dict) -> dict:
    """The dataclasses and enums a summary may hold, by name: those its fields name, and theirs."""
    if isinstance(hint, type) and (issubclass(hint, Enum) or dataclasses.is_dataclass(hint)) and hint.__name__ not in found:
        found[hint.__name__] = hint
        for inner in typing.get_type_hints(hint).values() if dataclasses.is_dataclass(hint) else ():
            _types(inner, found)
    for arg in typing.get_args(hint):
        _types(arg, found)
    return found


# Every type a summary may hold, by name: the codec refuses anything else.
_TYPES: dict[str, type] = _types(function_summary.FunctionSummary, {})


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
    """The summary with its digest: sites are ordinals, its own renamed by first appearance (D-34)."""
    encoded = _own_sites_renamed(encode(dataclasses.replace(summary, digest="")), summary.qualname + "#", {})
    text = json.dumps(encoded, sort_keys=True, separators=(",", ":"))
    return dataclasses.replace(summary, digest=hashlib.sha256(text.encode()).hexdigest()[:16])


def _own_sites_renamed(data: Any, own: str, names: dict) -> Any:
    """The encoded summary, each of the function's own sites (also in `a#1>b#2`) renamed by first appearance."""
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
