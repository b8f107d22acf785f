"""Settings and where they come from: `[tool.streamlint]` in the nearest pyproject.toml.

Like ruff, a pyproject.toml without a `[tool.streamlint]` table is not ours and the
search walks on upwards. `--config` names one file for every checked path (a
pyproject.toml, or any other TOML file whose top level holds the same keys).
Patterns in `exclude`, `extend-exclude` and `per-file-ignores` are gitignore-style and
relative to the directory of the file that defines them.
"""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from streamlint import selection
from streamlint.selection import RuleSelection, SelectorError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

# ruff's defaults, plus our own cache and the build/__pycache__ folders.
DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype",
    ".ruff_cache", ".streamlint_cache", ".svn", ".tox", ".venv", ".vscode",
    "__pycache__", "__pypackages__", "_build", "buck-out", "build", "dist",
    "node_modules", "site-packages", "venv",
)  # fmt: skip

CONFIG_FILE = "pyproject.toml"
_LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude")
_SELECTOR_KEYS = ("select", "ignore", "extend-select")
KNOWN_KEYS = (*_LIST_KEYS, "per-file-ignores", "respect-gitignore", "timeout", "cache-dir")
# Seconds one file's analysis may take before it is given up with SL000.
DEFAULT_TIMEOUT = 30.0


class ConfigError(Exception):
    """Invalid or unreadable configuration; the CLI prints it and exits 2."""


@dataclass(frozen=True)
class Settings:
    # None means the default: every rule.
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    # (glob, selectors) pairs, in file order.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    timeout: float = DEFAULT_TIMEOUT
    # Where the result cache lives (relative paths are relative to the config file's
    # directory); None: `.streamlint_cache` in the project root.
    cache_dir: Path | None = None
    # The directory the patterns are relative to (the config file's); None: no config.
    root: Path | None = None
    config_file: Path | None = None
    # Later layers of rule selection (the command line's), applied over the config's.
    overrides: tuple[RuleSelection, ...] = ()

    @classmethod
    def default(cls) -> Settings:
        return cls()

    @property
    def layers(self) -> tuple[RuleSelection, ...]:
        own = RuleSelection(self.select, self.extend_select, self.ignore)
        return (own, *self.overrides)

    @property
    def all_excludes(self) -> tuple[str, ...]:
        return self.exclude + self.extend_exclude

    def with_overrides(self, layer: RuleSelection | None) -> Settings:
        if layer is None or layer.is_empty:
            return self
        return replace(self, overrides=(*self.overrides, layer))


def load_settings(path_or_dir: Path | str, explicit_config: Path | None = None) -> Settings:
    """Settings for one path: from `explicit_config`, else the nearest config, else defaults."""
    if explicit_config is not None:
        return settings_from_file(Path(explicit_config))
    found = find_config(Path(path_or_dir))
    return settings_from_file(found) if found else Settings.default()


def find_config(path: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.streamlint] table, walking up from `path`."""
    start = Path(os.path.abspath(path))
    directory = start if start.is_dir() else start.parent
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / CONFIG_FILE
        if candidate.is_file() and _has_own_table(candidate):
            return candidate
    return None


def settings_from_file(path: Path) -> Settings:
    data = _read_toml(path)
    if path.name == CONFIG_FILE:
        tool = data.get("tool", {})
        table = tool.get("streamlint", {}) if isinstance(tool, dict) else {}
    else:
        table = data
    return settings_from_table(table, source=path)


def settings_from_table(table: Mapping[str, Any], source: Path) -> Settings:
    """Validated Settings from the keys of one `[tool.streamlint]` table."""
    where = f"{source} [tool.streamlint]" if source.name == CONFIG_FILE else str(source)
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
    if "per-file-ignores" in table:
        values["per_file_ignores"] = _per_file_ignores(table["per-file-ignores"], where)
    if "respect-gitignore" in table:
        flag = table["respect-gitignore"]
        if not isinstance(flag, bool):
            raise ConfigError(f"{where}: respect-gitignore must be true or false")
        values["respect_gitignore"] = flag
    if "timeout" in table:
        values["timeout"] = parse_timeout(table["timeout"], f"{where}: timeout")
    root = Path(os.path.abspath(source)).parent
    if "cache-dir" in table:
        value = table["cache-dir"]
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where}: cache-dir must be a path (a non-empty string)")
        values["cache_dir"] = root / os.path.expanduser(value)
    return Settings(**values, root=root, config_file=source)


def parse_timeout(value: Any, what: str) -> float:
    """A per-file time bound in seconds: a positive, finite number (raises ConfigError)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e9:
        raise ConfigError(f"{what}: expected a positive number of seconds, got {value!r}")
    return float(value)


def parse_selectors(items: list[str], what: str) -> tuple[str, ...]:
    """Validated selectors from the command line or a config (raises ConfigError)."""
    return _selectors(items, what)


class SettingsResolver:
    """Settings for each checked path, each config file read once per run.

    `overrides` (the command line's selection) is layered over whatever config applies;
    `timeout` (the command line's) replaces the config's.
    """

    def __init__(
        self,
        explicit_config: Path | None = None,
        overrides: RuleSelection | None = None,
        timeout: float | None = None,
    ):
        self._overrides = overrides
        self._timeout = timeout
        self._fixed: Settings | None = None
        if explicit_config is not None:
            if not Path(explicit_config).is_file():
                raise ConfigError(f"config file not found: {explicit_config}")
            self._fixed = self._command_line(settings_from_file(Path(explicit_config)))
        self._by_dir: dict[Path, Settings] = {}
        self._by_config: dict[Path | None, Settings] = {}

    def for_path(self, path: Path | str) -> Settings:
        if self._fixed is not None:
            return self._fixed
        start = Path(os.path.abspath(path))
        directory = start if start.is_dir() else start.parent
        return self.for_dir(directory)

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
            candidate = candidate_dir / CONFIG_FILE
            if candidate.is_file() and _has_own_table(candidate):
                found = self._load(candidate)
                break
        if found is None:
            found = self._load(None)
        for d in visited:
            self._by_dir[d] = found
        return found

    def _load(self, config: Path | None) -> Settings:
        if config not in self._by_config:
            base = settings_from_file(config) if config else Settings.default()
            self._by_config[config] = self._command_line(base)
        return self._by_config[config]

    def _command_line(self, settings: Settings) -> Settings:
        settings = settings.with_overrides(self._overrides)
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


def _per_file_ignores(value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: per-file-ignores must be a table of glob = [codes]")
    out = []
    for pattern, codes in value.items():
        what = f"{where}: per-file-ignores[{pattern!r}]"
        out.append((pattern, _selectors(_string_list(codes, what), what)))
    return tuple(out)
