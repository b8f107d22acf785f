"""Where settings come from: the nearest config file, `extend`, and the command line.

In each directory, from the checked path upwards, the first of `.streamlint.toml`,
`streamlint.toml` and a `pyproject.toml` with a `[tool.streamlint]` table is the
config (ruff's order: `.ruff.toml` > `ruff.toml` > `pyproject.toml`); a pyproject.toml
without our table is not ours and the search walks on. A streamlint.toml holds the
keys at its top level. `extend = "PATH"` reads another config first and overrides its
keys (patterns stay relative to the directory of the config that was found).
`--config PATH` names one file for every checked path; `--config KEY=VALUE` and the
command line's `--exclude`, `--extend-exclude`, `--per-file-ignores` override keys
of whatever config applies; `--isolated` ignores every config file.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

from streamlint.config_table import (
    KNOWN_KEYS,
    ConfigError,
    parse_selectors,
    parse_timeout,
    settings_from_table,
)
from streamlint.selection import RuleSelection
from streamlint.settings import DEFAULT_EXCLUDES, DEFAULT_TIMEOUT, Settings

__all__ = [
    "DEFAULT_EXCLUDES", "DEFAULT_TIMEOUT", "KNOWN_KEYS", "ConfigError", "Settings",
    "SettingsResolver", "parse_selectors", "parse_timeout",
]  # fmt: skip

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

PYPROJECT = "pyproject.toml"
# In precedence order within one directory.
CONFIG_FILES = (".streamlint.toml", "streamlint.toml", PYPROJECT)
# How many `extend` links one config may follow (a loop is an error before that).
MAX_EXTEND = 16


def load_settings(path_or_dir: Path | str, explicit_config: Path | None = None) -> Settings:
    """Settings for one path: from `explicit_config`, else the nearest config, else defaults."""
    if explicit_config is not None:
        return settings_from_file(Path(explicit_config))
    found = find_config(Path(path_or_dir))
    return settings_from_file(found) if found else Settings.default()


def find_config(path: Path) -> Path | None:
    """The nearest config file, walking up from `path`."""
    directory = _directory_of(Path(os.path.abspath(path)))
    for candidate_dir in (directory, *directory.parents):
        found = config_in(candidate_dir)
        if found is not None:
            return found
    return None


def config_in(directory: Path) -> Path | None:
    """The config file of one directory, if it has one (none in a directory that
    cannot be searched: discovery skips it with a warning)."""
    for name in CONFIG_FILES:
        candidate = directory / name
        if _is_file(candidate) and (name != PYPROJECT or _has_own_table(candidate)):
            return candidate
    return None


def _is_file(path: Path) -> bool:
    try:  # Path.is_file raises PermissionError for an entry of an unsearchable directory
        return path.is_file()
    except OSError:
        return False


def _directory_of(path: Path) -> Path:
    try:
        return path if path.is_dir() else path.parent
    except OSError:  # in a directory that cannot be searched: not a directory we can walk
        return path.parent


def settings_from_file(path: Path, inline: Mapping[str, Any] | None = None) -> Settings:
    """Settings from a config file (following `extend`), with `inline` keys on top."""
    table = dict(config_table(path))
    table.pop("extend", None)
    for key, value in (inline or {}).items():
        # The command line's --extend-exclude and --extend-per-file-ignores extend the
        # config's, as in ruff.
        if key == "extend-exclude" and isinstance(table.get(key), list):
            value = [*table[key], *value]
        elif key == "extend-per-file-ignores" and isinstance(table.get(key), dict):
            value = {**table[key], **{k: [*table[key].get(k, []), *v] for k, v in value.items()}}
        table[key] = value
    where = f"{path} [tool.streamlint]" if path.name == PYPROJECT else str(path)
    return settings_from_table(table, source=path, where=where)


def config_table(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A config file's keys, merged over those of the file it `extend`s."""
    data = _read_toml(path)
    if path.name == PYPROJECT:
        tool = data.get("tool", {})
        table = tool.get("streamlint", {}) if isinstance(tool, dict) else {}
    else:
        table = data
    if not isinstance(table, dict) or "extend" not in table:
        return table
    base = table["extend"]
    if not isinstance(base, str) or not base.strip():
        raise ConfigError(f"{path}: extend must be the path of another config file")
    base_path = Path(os.path.abspath(path.parent / os.path.expanduser(base)))
    if base_path in seen or len(seen) >= MAX_EXTEND:
        raise ConfigError(f"{path}: extend forms a loop through {base_path}")
    if not base_path.is_file():
        raise ConfigError(f"{path}: extend names a missing file: {base}")
    merged = config_table(base_path, (*seen, Path(os.path.abspath(path))))
    merged.pop("extend", None)
    return {**merged, **table}


class SettingsResolver:
    """Settings for each checked path, each config file read once per run.

    `overrides` (the command line's selection) is layered over whatever config applies;
    `timeout` (the command line's) replaces the config's; `inline` keys (the command
    line's `--config KEY=VALUE` and file options) replace the config's keys;
    `isolated` ignores every config file.
    """

    def __init__(
        self,
        explicit_config: Path | None = None,
        overrides: RuleSelection | None = None,
        timeout: float | None = None,
        *,
        fixed: Settings | None = None,
        inline: Mapping[str, Any] | None = None,
        isolated: bool = False,
        fix_overrides: RuleSelection | None = None,
        ignore_noqa: bool = False,
    ):
        self._overrides = overrides
        self._fix_overrides = fix_overrides
        self._ignore_noqa = ignore_noqa
        self._timeout = timeout
        self._inline = dict(inline or {})
        self._by_dir: dict[Path, Settings] = {}
        self._by_config: dict[Path | None, Settings] = {}
        # One Settings for every path (an API caller's own, or --config's).
        self._fixed: Settings | None = fixed
        if explicit_config is not None and not isolated:
            if not Path(explicit_config).is_file():
                raise ConfigError(f"config file not found: {explicit_config}")
            self._fixed = self._command_line(settings_from_file(Path(explicit_config), self._inline))
        elif isolated:
            self._fixed = self._load(None)

    def for_path(self, path: Path | str) -> Settings:
        if self._fixed is not None:
            return self._fixed
        return self.for_dir(_directory_of(Path(os.path.abspath(path))))

    def for_dir(self, directory: Path) -> Settings:
        if self._fixed is not None:
            return self._fixed
        directory = Path(os.path.abspath(directory))
        visited: list[Path] = []
        found: Settings | None = None
        for candidate_dir in (directory, *directory.parents):
            if candidate_dir in self._by_dir:
                found = self._by_dir[candidate_dir]
                break
            visited.append(candidate_dir)
            candidate = config_in(candidate_dir)
            if candidate is not None:
                found = self._load(candidate)
                break
        if found is None:
            found = self._load(None)
        for d in visited:
            self._by_dir[d] = found
        return found

    def _load(self, config: Path | None) -> Settings:
        if config not in self._by_config:
            if config is not None:
                base = settings_from_file(config, self._inline)
            elif self._inline:  # no config file: the command line's keys, relative to here
                here = Path(os.getcwd()) / "(command line)"
                base = settings_from_table(self._inline, source=here, where="--config")
            else:
                base = Settings.default()
            self._by_config[config] = self._command_line(base)
        return self._by_config[config]

    def _command_line(self, settings: Settings) -> Settings:
        settings = settings.with_overrides(self._overrides)
        if self._fix_overrides is not None and not self._fix_overrides.is_empty:
            settings = replace(settings, fix_overrides=(*settings.fix_overrides, self._fix_overrides))
        if self._ignore_noqa:
            settings = replace(settings, ignore_noqa=True)
        return settings if self._timeout is None else replace(settings, timeout=self._timeout)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: invalid TOML: {err}") from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read config: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: config is not valid UTF-8: {err}") from None


def _has_own_table(pyproject: Path) -> bool:
    tool = _read_toml(pyproject).get("tool")
    return isinstance(tool, dict) and "streamlint" in tool


def parse_inline(option: str) -> dict[str, Any]:
    """`--config KEY=VALUE` as a one-key table (VALUE in TOML syntax), as in ruff."""
    try:
        table = tomllib.loads(option)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"--config {option!r}: not a path and not a TOML `key = value` ({err})") from None
    for key in table:
        if key not in KNOWN_KEYS or key == "extend":
            raise ConfigError(f"--config {option!r}: unknown key {key!r}; valid keys: "
                              + ", ".join(k for k in KNOWN_KEYS if k != "extend"))
    return table
