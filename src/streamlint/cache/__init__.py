"""The result cache: a file's diagnostics are reused while its content, streamlint, the
configuration that applies to it and the other files its analysis read are unchanged
(for modules whose summaries it used: while what it used of them is unchanged).

`store.py` keeps the entries on disk, `keys.py` computes what they are keyed by,
`codec.py` turns diagnostics into JSON and back; this module says where the cache
lives and removes it (`streamlint clean`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Mapping, Optional

from streamlint.cache.store import (
    CACHEDIR_TAG,
    GITIGNORE,
    RESULTS_PREFIX,
    TEXTS_PREFIX,
    Cached,
    Conditional,
    ResultCache,
)

__all__ = ["Cached", "Conditional", "ResultCache", "DEFAULT_DIR", "cache_dir", "clean", "disabled_by_env"]

DEFAULT_DIR = ".streamlint_cache"
ENV_DIR = "STREAMLINT_CACHE_DIR"
ENV_OFF = "STREAMLINT_NO_CACHE"


def cache_dir(
    option: Optional[Path],
    configured: Optional[Path],
    project_root: Optional[Path],
    env: Mapping[str, str] = os.environ,
) -> Path:
    """Where the cache lives: `--cache-dir`, else $STREAMLINT_CACHE_DIR, else the
    `cache-dir` setting, else `.streamlint_cache` in the project root (the directory of
    the configuration that applies to the working directory, or the working directory)."""
    if option is not None:
        return Path(option)
    if env.get(ENV_DIR):
        return Path(env[ENV_DIR])
    if configured is not None:
        return configured
    return (project_root or Path(os.getcwd())) / DEFAULT_DIR


def disabled_by_env(env: Mapping[str, str] = os.environ) -> bool:
    return env.get(ENV_OFF, "").strip().lower() not in ("", "0", "false", "no")


def clean(directory: Path) -> tuple[bool, str]:
    """Remove what streamlint put in `directory` and the directory itself when nothing
    else is left. Returns (anything removed, a sentence for the user). Only our own files
    are touched, so a `--cache-dir` pointing somewhere unexpected loses nothing else."""
    if not directory.is_dir():
        return False, f"no cache at {directory}"
    ours = [
        entry
        for entry in sorted(directory.iterdir())
        if entry.name.startswith((RESULTS_PREFIX, TEXTS_PREFIX)) and entry.is_dir() and not entry.is_symlink()
        or entry.name == "CACHEDIR.TAG" and _has_text(entry, CACHEDIR_TAG)
        or entry.name == ".gitignore" and _has_text(entry, GITIGNORE)
    ]
    if not ours:
        return False, f"{directory} is not a streamlint cache: nothing removed"
    for entry in ours:
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    try:
        directory.rmdir()
    except OSError:
        return True, f"removed the cache files in {directory} (other files left in place)"
    return True, f"removed {directory}"


def _has_text(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False
