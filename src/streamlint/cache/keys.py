"""What a cached result is keyed by, besides the file's content and its dependencies:
the tool that produced it and the configuration that applied to the file."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import sys
from functools import cache, lru_cache

import streamlint
from streamlint.config import Settings
from streamlint.diagnostics import Diagnostic

# Bumped when the layout of a cache entry changes.
FORMAT = 2

# Settings that do not change a stored result: those that decide which files a run
# checks, and the time-out (a result that timed out is never stored).
_NOT_IN_RESULTS = frozenset(
    {"exclude", "extend_exclude", "respect_gitignore", "root", "config_file", "cache_dir",
     "timeout"}
)  # fmt: skip


@cache
def tool_fingerprint() -> str:
    """streamlint's version, the Python and libcst it runs on, and the size and mtime of
    every source file of the package: an editable install that changes under a cache
    then misses instead of serving results of older code."""
    parts = [f"format={FORMAT}", streamlint.__version__, sys.implementation.cache_tag or "",
             sys.version, ",".join(f.name for f in dataclasses.fields(Diagnostic))]
    parts += _source_stats(os.path.dirname(os.path.abspath(streamlint.__file__)))
    spec = importlib.util.find_spec("libcst")  # found, not imported
    if spec is not None and spec.origin:
        parts += _source_stats(os.path.dirname(spec.origin), top_only=True)
    return _digest("\n".join(parts))


def _source_stats(root: str, top_only: bool = False) -> list[str]:
    out = []
    for directory, subdirs, files in os.walk(root):
        if top_only:
            subdirs.clear()
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".so", ".pyd", ".json", ".toml")):  # .toml: built-in models
                try:
                    st = os.stat(os.path.join(directory, name))
                except OSError:
                    continue
                rel = os.path.relpath(os.path.join(directory, name), root)
                out.append(f"{rel}:{st.st_size}:{st.st_mtime_ns}")
    return out


def config_key(settings: Settings, codes: tuple[str, ...]) -> str:
    """The configuration as far as one file's result depends on it: the rules enabled for
    it (after select, ignore and per-file-ignores) and every other setting but those
    known not to change a result (new settings count by default)."""
    return _settings_part(settings) + ":" + _digest(",".join(codes))


@lru_cache(maxsize=64)
def _settings_part(settings: Settings) -> str:
    fields = (
        f"{f.name}={getattr(settings, f.name)!r}"
        for f in dataclasses.fields(settings)
        if f.name not in _NOT_IN_RESULTS
    )
    return _digest(tool_fingerprint() + "\n" + "\n".join(fields))


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()
