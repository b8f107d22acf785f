"""Lint (and fix) one open document's text with the configuration its path gets on
disk: the server reports what `streamlint check` would for the same text saved at the
same path (excludes and per-file-ignores included).
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

from pygls.uris import to_fs_path

from streamlint.config import Settings, SettingsResolver
from streamlint.diagnostics import Diagnostic
from streamlint.discovery import PY_SUFFIXES, discover
from streamlint.engine.lint import lint_fix
from streamlint.engine.run import lint_bytes
from streamlint.source import SourceKind, universal_newlines

PYTHON_LANGUAGE_IDS = ("python",)
NOTEBOOK_SUFFIX = ".ipynb"


def path_of(uri: str) -> str | None:
    """The file system path of a `file:` URI; None for others (`untitled:`, ...)."""
    if urlparse(uri).scheme != "file":
        return None
    path = to_fs_path(uri)
    return os.path.normpath(path) if path else None


def is_python(uri: str, language_id: str | None) -> bool:
    """Python source, by language id or by name. A .ipynb opened as a text document is
    its JSON: notebooks are checked when the editor sends them as notebook documents."""
    path = path_of(uri) or urlparse(uri).path
    if SourceKind.of(path) is SourceKind.NOTEBOOK:
        return False
    return language_id in PYTHON_LANGUAGE_IDS or path.endswith(PY_SUFFIXES)


def target(uri: str, resolver: SettingsResolver, *, notebook: bool = False) -> tuple[str, Settings] | None:
    """The filename and settings to lint the document with; None when the
    configuration excludes its path. Raises ConfigError for a broken configuration."""
    path = path_of(uri)
    if path is None:  # unsaved: the settings of the working directory
        return ("-" + NOTEBOOK_SUFFIX if notebook else "-"), resolver.for_path(os.getcwd())
    found = discover([path], resolver, force_exclude=True)
    if not found.files:
        return None
    return path, found.files[0][1]


def lint_document(
    uri: str, text: str, resolver: SettingsResolver | None = None, *, notebook: bool = False
) -> list[Diagnostic]:
    """Findings in `text` (a notebook's JSON when `notebook`); [] for an excluded path."""
    where = target(uri, resolver or SettingsResolver(), notebook=notebook)
    if where is None:
        return []
    filename, settings = where
    data = text.encode("utf-8", "surrogatepass")
    return lint_bytes(data, filename, settings).diagnostics


def fix_document(uri: str, text: str, resolver: SettingsResolver | None = None) -> str | None:
    """`text` with every safe fix applied and checked, as `streamlint check --fix`
    does; None when nothing changes, the path is excluded or the fixes fail the check."""
    where = target(uri, resolver or SettingsResolver())
    if where is None:
        return None
    filename, settings = where
    outcome = lint_fix(universal_newlines(text), filename, settings, unsafe=False)
    if outcome.error is not None or not outcome.applied or outcome.source == text:
        return None
    return outcome.source
