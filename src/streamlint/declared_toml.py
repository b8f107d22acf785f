"""The declared models' TOML format (the README's "Modelling your own wrappers"), checked when a
config or a models file is loaded: a ModelError names the model and the key. Config parsing only:
the models and what they mean are model/declared.py's."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from streamlint.model.declared import FRAMEWORKS, KINDS, NAMESPACES, RETURNS, Model, from_table, parse_ref

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

NAMESPACE_KEYS = ("target", "namespace", "doc")
EFFECT_KEYS = ("target", "kind", "framework", "stream", "reads", "writes", "blocking", "returns", "host",
               "target-arg", "doc")


class ModelError(Exception):
    """An invalid declared model; the CLI prints it as a config error (exit 2)."""


def _name(spelled: str) -> bool:
    return spelled.isascii() and spelled.isidentifier()


def _is_target(target: str) -> bool:
    """A dotted name of two parts or more; a part between may be an instance, `Class()`."""
    parts = target.split(".")
    middle = [p.removesuffix("()") for p in parts[1:-1]]
    return len(parts) > 1 and _name(parts[0]) and _name(parts[-1]) and all(map(_name, middle))


def parse_models(entries: Any, where: str) -> tuple[Model, ...]:
    """Checked models from a TOML array of tables; `where` names it in messages."""
    if not isinstance(entries, list):
        raise ModelError(f"{where}: expected an array of tables ([[...model]]), got {type(entries).__name__}")
    return tuple(parse_model(entry, f"{where}[{i}]") for i, entry in enumerate(entries))


def parse_model(entry: Any, where: str) -> Model:
    if not isinstance(entry, Mapping):
        raise ModelError(f"{where}: expected a table, got {entry!r}")
    target = entry.get("target")
    if not isinstance(target, str) or not _is_target(target):
        raise ModelError(f"{where}: key 'target': expected a dotted name such as 'mylib.copy_async' "
                         f"(or 'mylib.Buffer().copy' for a method), got {target!r}")
    where = f"{where} (target {target!r})"
    if "namespace" in entry and "kind" in entry:
        raise ModelError(f"{where}: a model has either 'namespace' or 'kind', not both")
    _check_keys(entry, NAMESPACE_KEYS if "namespace" in entry else EFFECT_KEYS, where)
    if "namespace" in entry:
        _one_of(entry, "namespace", NAMESPACES, None, where)
    else:
        _check_effect(entry, target, where)
    return from_table(entry, where)


def _check_keys(entry: Mapping, allowed: tuple[str, ...], where: str) -> None:
    for key in entry:
        if key not in allowed:
            hint = difflib.get_close_matches(key, allowed, n=1)
            extra = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise ModelError(f"{where}: unknown key {key!r}{extra}; valid keys: {', '.join(allowed)}")


def _one_of(entry: Mapping, key: str, allowed: Sequence[str], default: Any, where: str) -> Any:
    value = entry.get(key, default)
    if value not in allowed:
        raise ModelError(f"{where}: key {key!r}: expected one of {', '.join(allowed)}, got {value!r}")
    return value


def _check_effect(entry: Mapping, target: str, where: str) -> None:
    if "kind" not in entry:
        raise ModelError(f"{where}: missing key 'kind' (or 'namespace'); kinds: {', '.join(KINDS)}")
    kind = _one_of(entry, "kind", tuple(KINDS), None, where)
    _one_of(entry, "framework", FRAMEWORKS, "torch", where)
    _check_stream(entry.get("stream", "none"), where)
    reads = _refs(entry.get("reads", []), f"{where}: key 'reads'", self_ok=True)
    writes = _refs(entry.get("writes", []), f"{where}: key 'writes'", self_ok=True)
    blocking = entry.get("blocking")
    if blocking is not None and not isinstance(blocking, bool):
        raise ModelError(f"{where}: key 'blocking': expected true or false, got {blocking!r}")
    _one_of(entry, "returns", tuple(RETURNS), "none", where)
    if ("reads" in entry or "writes" in entry) and KINDS[kind] is None:
        raise ModelError(f"{where}: kind 'value' does no device work: it has no 'reads' or 'writes'")
    if "self" in reads + writes and "()." not in target:
        raise ModelError(f"{where}: 'self' names the receiver of a method: write the target as 'pkg.Class().method'")
    for key in ("host", "target-arg"):
        if key in entry:
            _refs([entry[key]], f"{where}: key {key!r}")


def _check_stream(spec: Any, where: str) -> None:
    ok = isinstance(spec, str) and (
        spec in ("none", "current", "legacy", "self")
        or parse_ref(spec.removesuffix("|current")) is not None
    )
    if not ok:
        raise ModelError(f"{where}: key 'stream': expected 'current', 'legacy', 'none', 'self', an argument "
                         f"('arg2', 'arg2:stream', 'stream') or '<argument>|current', got {spec!r}")


def _refs(value: Any, what: str, self_ok: bool = False) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list):
        raise ModelError(f"{what}: expected a list of argument references ('arg0', 'arg1:src', 'dst'), got {value!r}")
    for ref in value:
        if not isinstance(ref, str) or not (parse_ref(ref) is not None or (self_ok and ref == "self")):
            raise ModelError(f"{what}: {ref!r} is not an argument reference ('arg0', 'arg1:src', a keyword name"
                             + (", or 'self')" if self_ok else ")"))
    return tuple(value)


def load_file(path: Path, where: Optional[str] = None) -> tuple[Model, ...]:
    """Models from a models file (`[[model]]` tables at its top level)."""
    where = where or str(path)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as err:
        raise ModelError(f"{where}: cannot read models file: {err.strerror or err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ModelError(f"{where}: invalid TOML: {err}") from None
    extra = [k for k in data if k != "model"]
    if extra:
        raise ModelError(f"{where}: unknown top-level key {extra[0]!r}; a models file holds [[model]] tables")
    return parse_models(data.get("model", []), f"{where}: model")
