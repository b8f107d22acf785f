"""Lint one open document's text with the configuration its path gets on disk: the
server reports what `streamlint check` would for the same text saved at the same path
(excludes and per-file-ignores included).
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

from pygls.uris import to_fs_path

from streamlint.config import SettingsResolver
from streamlint.diagnostics import Diagnostic
from streamlint.discovery import PY_SUFFIXES, discover
from streamlint.engine.run import lint_bytes
from streamlint.source import SourceKind

PYTHON_LANGUAGE_IDS = ("python",)


def path_of(uri: str) -> str | None:
    """The file system path of a `file:` URI; None for others (`untitled:`, ...)."""
    if urlparse(uri).scheme != "file":
        return None
    path = to_fs_path(uri)
    return os.path.normpath(path) if path else None


def is_python(uri: str, language_id: str | None) -> bool:
    """Python source, by language id or by name. Notebooks (.ipynb, JSON) are not
    checked here: editors send their cells through notebook sync, not handled yet."""
    path = path_of(uri) or urlparse(uri).path
    if SourceKind.of(path) is SourceKind.NOTEBOOK:
        return False
    return language_id in PYTHON_LANGUAGE_IDS or path.endswith(PY_SUFFIXES)


def lint_document(uri: str, text: str, resolver: SettingsResolver | None = None) -> list[Diagnostic]:
    """Findings in `text`; [] for a path the configuration excludes. Raises ConfigError
    for a broken configuration."""
    resolver = resolver or SettingsResolver()
    path = path_of(uri)
    if path is None:
        filename, settings = "-", resolver.for_path(os.getcwd())
    else:
        found = discover([path], resolver, force_exclude=True)
        if not found.files:
            return []
        filename, settings = path, found.files[0][1]
    return lint_bytes(text.encode("utf-8", "surrogatepass"), filename, settings).diagnostics
