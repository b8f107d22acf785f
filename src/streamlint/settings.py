"""The settings that apply to one file, and the choice they make: which rules run on it.

Settings come from a config file (config.py) with the command line's layers on top;
the per-file choice (selection layers, then `per-file-ignores`) lives here, beside
them, so that the engine, the cache key and `--show-settings` all ask one place.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import pathspec

from streamlint import rules as registry
from streamlint import selection
from streamlint.model.declared import Model
from streamlint.rules import Rule
from streamlint.selection import RuleSelection

# ruff's defaults, plus our own cache and the build/__pycache__ folders.
DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype",
    ".ruff_cache", ".streamlint_cache", ".svn", ".tox", ".venv", ".vscode",
    "__pycache__", "__pypackages__", "_build", "buck-out", "build", "dist",
    "node_modules", "site-packages", "venv",
)  # fmt: skip
# Test and benchmark code synchronizes, uploads and reads back on purpose (to check and to measure): there only
# the race rules (SL4) apply unless a config's `per-file-ignores` replaces these (`extend-per-file-ignores` adds).
PERFORMANCE_RULES: tuple[str, ...] = ("SL1", "SL2", "SL3", "SL5")
DEFAULT_PER_FILE_IGNORES: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (pattern, PERFORMANCE_RULES) for pattern in (
        "**/test_*.py", "**/*_test.py", "**/test.py", "**/tests.py", "**/conftest.py", "**/tests/**", "**/test/**",
        "**/*_tests/**",
        "**/benchmarks/**", "**/benchmark/**", "**/benchmark.py", "**/benchmark_*.py", "**/*_benchmark.py",
        "**/bench_*.py", "**/*_bench.py",
    ))
# Seconds one file's analysis may take before it is given up with SL000.
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class Settings:
    # None means the default: every rule.
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    # (glob, selectors) pairs, in file order.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = DEFAULT_PER_FILE_IGNORES
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
    # Declared API models (`[[tool.streamlint.model]]` and the `models` files), checked;
    # part of the cache key like every other setting (model/declared.py).
    models: tuple[Model, ...] = ()
    # Frameworks whose stream 0 is the per-thread default stream in this project
    # (CUPY_CUDA_PER_THREAD_DEFAULT_STREAM and friends set outside the code).
    per_thread_default_stream: tuple[str, ...] = ()
    # The device of the tensors whose device the code never shows ("cuda"), for a GPU-only
    # project; None: not assumed (such tensors stay unknown, and silent).
    assume_device: str | None = None
    # Which findings' fixes `--fix` may apply (ruff's fixable / unfixable /
    # extend-fixable; None: every rule's), with the command line's layers on top.
    fixable: tuple[str, ...] | None = None
    unfixable: tuple[str, ...] = ()
    extend_fixable: tuple[str, ...] = ()
    fix_overrides: tuple[RuleSelection, ...] = ()
    # `--ignore-noqa`: suppression comments are not honoured.
    ignore_noqa: bool = False
    # Run-level defaults (ruff's keys of the same names), read from the configuration
    # of the working directory; the command line's options win. None: not set.
    fix: bool | None = None
    unsafe_fixes: bool | None = None
    show_fixes: bool | None = None
    output_format: str | None = None
    # A file named on the command line: analysed even without CUDA words (the prefilter
    # would skip it), so that a syntax error in it is reported. Set by discovery.
    named: bool = False
    # A file without CUDA words that imports a module of the run that has some (its tensors may come from there:
    # a model moved to CUDA, a device helper): analysed too. Set by discovery.
    imports_gpu_module: bool = False

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

    @property
    def fix_layers(self) -> tuple[RuleSelection, ...]:
        own = RuleSelection(self.fixable, self.extend_fixable, self.unfixable)
        return (own, *self.fix_overrides)

    def with_overrides(self, layer: RuleSelection | None) -> Settings:
        if layer is None or layer.is_empty:
            return self
        return replace(self, overrides=(*self.overrides, layer))


def rules_for_file(
    settings: Settings, filename: str, rules: Sequence[type[Rule]] | None = None
) -> tuple[type[Rule], ...]:
    """The rules selected for one file: settings' layers, then per-file-ignores."""
    pool = tuple(rules) if rules is not None else registry.all_rules()
    enabled = enabled_codes_for_file(settings, filename, tuple(r.code for r in pool))
    return tuple(r for r in pool if r.code in enabled)


def enabled_codes_for_file(
    settings: Settings, filename: str, codes: tuple[str, ...]
) -> tuple[str, ...]:
    """Which of `codes` run on one file (the same choice as `rules_for_file`, from
    codes alone, so that the cache can be keyed without importing any rule)."""
    return _codes_after(settings.layers, codes, per_file_ignored(settings, filename))


@lru_cache(maxsize=256)
def _codes_after(
    layers: tuple[RuleSelection, ...], codes: tuple[str, ...], ignored: tuple[str, ...]
) -> tuple[str, ...]:
    enabled = selection.enabled_codes(layers, codes)
    return tuple(c for c in codes if c in enabled and not selection.is_ignored(ignored, c))


def fixable_codes(settings: Settings, codes: tuple[str, ...]) -> frozenset[str]:
    """Which of `codes` may have their fixes applied (fixable, unfixable, extend-fixable)."""
    return selection.enabled_codes(settings.fix_layers, codes)


def per_file_ignored(settings: Settings, filename: str) -> tuple[str, ...]:
    """The selectors that `per-file-ignores` turn off for `filename`."""
    if not settings.per_file_ignores:
        return ()
    # Patterns are relative to the config's directory; a file outside it can still
    # match a pattern by its path as given or by its base name.
    root = str(settings.root) if settings.root else os.getcwd()
    absolute = os.path.abspath(filename)
    rel = os.path.relpath(absolute, root).replace(os.sep, "/")
    if rel.startswith("../"):
        rel = filename.replace(os.sep, "/")
    candidates = (rel, os.path.basename(absolute))
    out: list[str] = []
    for pattern, selectors in settings.per_file_ignores:
        spec = _glob_spec(pattern)
        if any(spec.match_file(c) for c in candidates):
            out.extend(selectors)
    return tuple(out)


@lru_cache(maxsize=256)
def _glob_spec(pattern: str) -> pathspec.GitIgnoreSpec:
    # `./x.py` means x.py in the config's directory, as in ruff (a gitignore pattern
    # would take `./` literally and match nothing).
    while pattern.startswith("./"):
        pattern = "/" + pattern[2:].lstrip("/")
    return pathspec.GitIgnoreSpec.from_lines([pattern])
