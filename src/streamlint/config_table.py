"""One configuration table (`[tool.streamlint]`, or a streamlint.toml's top level, or
the command line's `--config KEY=VALUE`s) validated into Settings."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any, Mapping

from streamlint import declared_toml, selection
from streamlint.model import declared
from streamlint.model.declared import Model
from streamlint.selection import SelectorError
from streamlint.settings import DEFAULT_PER_FILE_IGNORES, Settings

_SELECTOR_KEYS = ("select", "ignore", "extend-select", "fixable", "unfixable", "extend-fixable")
_LIST_KEYS = (*_SELECTOR_KEYS, "exclude", "extend-exclude")
# Run-level switches (ruff's keys): the command line's --fix/--no-fix and friends win.
_BOOL_KEYS = ("respect-gitignore", "fix", "unsafe-fixes", "show-fixes")
KNOWN_KEYS = (*_LIST_KEYS, "per-file-ignores", "extend-per-file-ignores", *_BOOL_KEYS, "output-format", "timeout",
              "cache-dir", "extend", "model", "models", "per-thread-default-stream",
              "assume-device")


class ConfigError(Exception):
    """Invalid or unreadable configuration; the CLI prints it and exits 2."""


def settings_from_table(table: Mapping[str, Any], source: Path, where: str | None = None) -> Settings:
    """Validated Settings from the keys of one table; patterns and `cache-dir` are
    relative to `source`'s directory; `where` names the table in messages."""
    where = where or str(source)
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: expected a table")
    for key in table:
        if key not in KNOWN_KEYS:
            hint = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            extra = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise ConfigError(
                f"{where}: unknown key {key!r}{extra}; valid keys: {', '.join(KNOWN_KEYS)}"
            )
    values: dict[str, Any] = {}
    for key in _LIST_KEYS:
        if key in table:
            items = _string_list(table[key], f"{where}: {key}")
            if key in _SELECTOR_KEYS:
                items = _selectors(items, f"{where}: {key}")
            values[key.replace("-", "_")] = items
    if "per-file-ignores" in table or "extend-per-file-ignores" in table:
        # the file's own base replaces the defaults (test and benchmark files); an extension adds to the base
        pairs = _per_file_ignores(table["per-file-ignores"], where, "per-file-ignores") \
            if "per-file-ignores" in table else DEFAULT_PER_FILE_IGNORES
        if "extend-per-file-ignores" in table:
            pairs += _per_file_ignores(table["extend-per-file-ignores"], where, "extend-per-file-ignores")
        values["per_file_ignores"] = pairs
    for key in _BOOL_KEYS:
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(f"{where}: {key} must be true or false")
            values[key.replace("-", "_")] = table[key]
    if "output-format" in table:
        values["output_format"] = _output_format(table["output-format"], where)
    if "timeout" in table:
        values["timeout"] = parse_timeout(table["timeout"], f"{where}: timeout")
    root = Path(os.path.abspath(source)).parent
    if "cache-dir" in table:
        value = table["cache-dir"]
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where}: cache-dir must be a path (a non-empty string)")
        values["cache_dir"] = root / os.path.expanduser(value)
    if "model" in table or "models" in table:
        values["models"] = _models(table, root, where)
    if "per-thread-default-stream" in table:
        what = f"{where}: per-thread-default-stream"
        frameworks = _string_list(table["per-thread-default-stream"], what)
        for name in frameworks:
            if name not in declared.PER_THREAD_FRAMEWORKS:
                raise ConfigError(f"{what}: expected frameworks among {', '.join(declared.PER_THREAD_FRAMEWORKS)}, "
                                  f"got {name!r}")
        values["per_thread_default_stream"] = frameworks
    if "assume-device" in table:
        device = table["assume-device"]
        if device not in declared.ASSUMABLE_DEVICES:
            expected = ", ".join(map(repr, declared.ASSUMABLE_DEVICES))
            raise ConfigError(f"{where}: assume-device: expected one of {expected}, got {device!r}")
        values["assume_device"] = device
    config_file = source if source.is_file() else None
    return Settings(**values, root=root, config_file=config_file)


def _models(table: Mapping[str, Any], root: Path, where: str) -> tuple[Model, ...]:
    """Declared API models: the table's own `[[model]]` entries, then those of the files
    that `models` names (relative to the config's directory)."""
    try:
        out = declared_toml.parse_models(table["model"], f"{where}: model") if "model" in table else ()
        if "models" in table:
            for name in _string_list(table["models"], f"{where}: models"):
                path = root / os.path.expanduser(name)
                if not path.is_file():
                    raise ConfigError(f"{where}: models names a missing file: {name}")
                out += declared_toml.load_file(path, f"{where}: models file {name}")
    except declared_toml.ModelError as err:
        raise ConfigError(str(err)) from None
    return out


def parse_timeout(value: Any, what: str) -> float:
    """A per-file time bound in seconds: a positive, finite number (raises ConfigError)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e9:
        raise ConfigError(f"{what}: expected a positive number of seconds, got {value!r}")
    return float(value)


def parse_selectors(items: list[str], what: str) -> tuple[str, ...]:
    """Validated selectors from the command line or a config (raises ConfigError)."""
    return _selectors(items, what)


def _string_list(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list):
        raise ConfigError(f"{what}: expected a list of strings, got {value!r}")
    if not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{what}: expected a list of strings, got {value!r}")
    return tuple(value)


def _selectors(items: tuple[str, ...] | list[str], what: str) -> tuple[str, ...]:
    try:
        return tuple(selection.validate(item) for item in items)
    except SelectorError as err:
        raise ConfigError(f"{what}: {err}") from None


def _output_format(value: Any, where: str) -> str:
    from streamlint import output  # lazy: the formats import their writers

    if not isinstance(value, str) or output.canonical(value) not in output.FORMATS:
        raise ConfigError(f"{where}: output-format must be one of {', '.join(output.FORMATS)}, got {value!r}")
    return output.canonical(value)


def _per_file_ignores(value: Any, where: str, key: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: {key} must be a table of glob = [codes]")
    out = []
    for pattern, codes in value.items():
        what = f"{where}: {key}[{pattern!r}]"
        out.append((pattern, _selectors(_string_list(codes, what), what)))
    return tuple(out)
