"""Which files a run checks: *.py, *.pyi and *.ipynb under the given paths.

Directories are walked with ruff's default excludes (or the config's `exclude`), the
config's `extend-exclude`, and the `.gitignore` files of the tree and of its ancestors
up to the repository root. As in ruff, an exclude pattern matches an entry's own name
or, when it contains a slash, its path relative to the config's directory; what is
below an excluded directory is left out because the walk never enters it.

Paths named explicitly are checked even when excluded or inside an excluded directory
(a named directory is walked), unless `force_exclude` (what pre-commit needs, since
it passes every file by name). A named file is analysed even without CUDA words (its
settings say `named`), so that a syntax error there is reported. A directory the walk
cannot read is skipped with a warning; a named one that cannot be read is an SL000.
Symlinked directories are followed once each, so a symlink loop cannot hang the walk.
Paths are printed relative to the working directory when inside it, else absolute.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

import pathspec

from streamlint.config import Settings, SettingsResolver
from streamlint.model.prefilter import may_have_findings
from streamlint.model.syntax.prefilter import imported_modules, may_set_default_device
from streamlint.source import read_bytes

PY_SUFFIXES = (".py", ".pyi", ".ipynb")  # notebooks are checked cell by cell
GITIGNORE = ".gitignore"

# (directory the file sits in, its compiled patterns), outermost first.
IgnoreChain = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]


@dataclass
class Discovery:
    files: list[tuple[Path, Settings]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Directories named on the command line that cannot be read: (as named, why). Each
    # is reported as one SL000, like a named file that cannot be read.
    unreadable: list[tuple[str, str]] = field(default_factory=list)


def discover(
    paths: Sequence[Path | str],
    resolver: SettingsResolver | None = None,
    *,
    force_exclude: bool = False,
) -> Discovery:
    """Files to check, sorted by path, each with the settings that apply to it."""
    resolver = resolver or SettingsResolver()
    walker = _Walker(resolver)
    cwd = os.getcwd()
    for raw in paths:
        absolute = os.path.abspath(str(raw))
        shown = shown_path(absolute, cwd)
        settings = resolver.for_path(absolute)
        if os.path.isdir(absolute):
            chain = walker.ancestor_chain(os.path.dirname(absolute))
            if force_exclude and walker.excluded_with_parents(absolute, True, settings, chain):
                continue
            walker.walk(shown, absolute, _without_blankets(chain, absolute))
        else:
            # Named files are checked whatever their suffix; a missing one gets SL000.
            chain = walker.ancestor_chain(os.path.dirname(absolute))
            if force_exclude and walker.excluded_with_parents(absolute, False, settings, chain):
                continue
            walker.add(shown, absolute, replace(settings, named=True))
    files = _with_gpu_importers(sorted(walker.files.values(), key=lambda item: str(item[0])))
    return Discovery(files=files, warnings=walker.warnings, unreadable=walker.unreadable)


# The word a file without CUDA words spells where it moves tensors or names their device (`x.to(model.device)`).
DEVICE_WORD = b"device"


def _with_gpu_importers(files: list[tuple[Path, Settings]]) -> list[tuple[Path, Settings]]:
    """Mark the .py files without CUDA words that import a module of the run that has some, or that such a module
    imports (resolved to the run's files by path): models, devices and tensors pass between them (a model moved to
    CUDA, a decoder handed CUDA tensors), so the prefilter must not skip them. A package's `__init__` is no such
    module for its importers (every module of a package imports it). Only a file that spells `device` (it moves
    tensors or names where they are): the rest stay skipped, which keeps a large library's run near the
    prefilter's cost (on PyTorch's own tree, 270 files more instead of 956)."""
    texts: dict[int, bytes] = {}
    modules = _ModuleFiles()
    for index, (path, _) in enumerate(files):
        if path.suffix == ".py":
            try:
                texts[index] = read_bytes(path)  # (never waits on a FIFO named `.py`)
            except OSError:
                continue
            modules.add(index, path)
    gpu = {i for i, data in texts.items() if files[i][1].named or may_have_findings(data, files[i][1].assume_device)}
    imports = {i: modules.resolved(files[i][0], data) for i, data in texts.items()}
    imported_by_gpu = set().union(*(imports[i] for i in gpu)) if gpu else set()
    gpu_modules = gpu - modules.packages
    # (a run that makes CUDA PyTorch's default device: a helper's `torch.zeros(n)` is CUDA memory, spelled or not)
    cuda_default = any(may_set_default_device(data) and b"cuda" in data for data in texts.values())
    marked = list(files)
    for index, data in texts.items():
        if index not in gpu and (DEVICE_WORD in data or cuda_default) \
                and (index in imported_by_gpu or imports[index] & gpu_modules):
            path, settings = files[index]
            marked[index] = (path, replace(settings, imports_gpu_module=True))
    return marked


class _ModuleFiles:
    """The run's .py files by module path: the full path (for relative imports), and its dotted tails of two or
    more parts (for absolute ones: `pkg.model` names `.../pkg/model.py` wherever the root is)."""

    def __init__(self) -> None:
        self.by_path: dict[tuple[str, ...], int] = {}
        self.by_tail: dict[tuple[str, ...], set[int]] = {}
        self.packages: set[int] = set()

    def add(self, index: int, path: Path) -> None:
        parts = Path(os.path.abspath(path)).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
            self.packages.add(index)
        self.by_path[parts] = index
        for start in range(max(0, len(parts) - 8), len(parts) - 1):
            self.by_tail.setdefault(parts[start:], set()).add(index)

    def resolved(self, path: Path, data: bytes) -> set[int]:
        here = Path(os.path.abspath(path)).parent.parts
        found: set[int] = set()
        for level, dotted in imported_modules(data):
            names = tuple(dotted.split("."))
            if level:
                index = self.by_path.get(here[:len(here) - level + 1] + names)
                found.update(() if index is None else (index,))
            else:
                found.update(self.by_tail.get(names, ()))
                beside = self.by_path.get(here + names)  # (a script's module beside it: `from helpers import f`)
                found.update(() if beside is None else (beside,))
        return found


def shown_path(absolute: str, cwd: str) -> str:
    """How a path is printed, as ruff prints it: relative to the working directory when
    it is inside it (however it was typed), else absolute."""
    inside = _relative(absolute, cwd)
    return absolute if inside is None else os.path.normpath(inside)


class _Walker:
    def __init__(self, resolver: SettingsResolver) -> None:
        self.resolver = resolver
        self.files: dict[str, tuple[Path, Settings]] = {}
        self.warnings: list[str] = []
        self.unreadable: list[tuple[str, str]] = []
        self._seen_dirs: set[tuple[int, int]] = set()
        self._chains: dict[str, IgnoreChain] = {}

    def add(self, shown: str, absolute: str, settings: Settings) -> None:
        self.files.setdefault(absolute, (Path(shown), settings))

    def walk(self, shown_root: str, abs_root: str, chain: IgnoreChain) -> None:
        # An explicit stack, not recursion: trees can be deeper than the recursion limit.
        stack = [(shown_root, abs_root, chain)]
        while stack:
            shown, absolute, chain = stack.pop()
            if not self._first_visit(absolute):
                continue
            settings = self.resolver.for_dir(Path(absolute))
            try:
                with os.scandir(absolute) as it:
                    entries = sorted(it, key=lambda e: e.name)
                if entries:  # readable but not searchable: names without files
                    os.stat(entries[0].path, follow_symlinks=False)
            except OSError as err:
                why = err.strerror or str(err)
                if absolute == abs_root:  # named on the command line: a finding, not a warning
                    self.unreadable.append((shown, why))
                else:  # found by the walk: skipped, and the rest is checked
                    self.warnings.append(f"cannot read directory {shown}: {why}; skipped")
                continue
            if settings.respect_gitignore and any(e.name == GITIGNORE for e in entries):
                spec = self._load_gitignore(os.path.join(absolute, GITIGNORE))
                if spec is not None:
                    chain = (*chain, (absolute, spec))
            subdirs = []
            for entry in entries:
                child_abs = os.path.join(absolute, entry.name)
                child_shown = entry.name if shown == "." else os.path.join(shown, entry.name)
                is_dir = _is_dir(entry)
                if self.excluded(child_abs, is_dir, settings, chain):
                    continue
                if is_dir:
                    subdirs.append((child_shown, child_abs, chain))
                elif entry.name.endswith(PY_SUFFIXES):
                    self.add(child_shown, child_abs, settings)
            stack.extend(reversed(subdirs))

    def excluded(self, absolute: str, is_dir: bool, settings: Settings, chain: IgnoreChain) -> bool:
        root = str(settings.root) if settings.root else os.getcwd()
        rel = _relative(absolute, root)
        if _exclude_matches(settings.all_excludes, rel, os.path.basename(absolute), is_dir):
            return True
        if settings.respect_gitignore:
            for base, spec in reversed(chain):  # the innermost .gitignore that matches decides
                rel_git = _relative(absolute, base)
                if rel_git is None:
                    continue
                verdict = spec.check_file(rel_git + "/" if is_dir else rel_git).include
                if verdict is not None:
                    return verdict
        return False

    def excluded_with_parents(
        self, absolute: str, is_dir: bool, settings: Settings, chain: IgnoreChain
    ) -> bool:
        """`absolute` or one of its parents up to the project's top is excluded."""
        if self.excluded(absolute, is_dir, settings, chain):
            return True
        top = self._top(absolute, settings)
        parent = os.path.dirname(absolute)
        while parent != top and parent != os.path.dirname(parent):
            if self.excluded(parent, True, settings, chain):
                return True
            parent = os.path.dirname(parent)
        return False

    def _top(self, absolute: str, settings: Settings) -> str | None:
        # The config's directory, else the repository root, else the working directory;
        # None (check every ancestor, as ruff does) for a path outside all of them.
        if settings.root and _relative(absolute, str(settings.root)) is not None:
            return str(settings.root)
        current = os.path.dirname(absolute)
        while current != os.path.dirname(current):
            if os.path.exists(os.path.join(current, ".git")):
                return current
            current = os.path.dirname(current)
        cwd = os.getcwd()
        return cwd if _relative(absolute, cwd) is not None else None

    def ancestor_chain(self, directory: str) -> IgnoreChain:
        """The .gitignore files from the repository root down to `directory` inclusive."""
        if directory in self._chains:
            return self._chains[directory]
        dirs = []
        current = directory
        while True:
            dirs.append(current)
            if os.path.exists(os.path.join(current, ".git")):
                break
            parent = os.path.dirname(current)
            if parent == current:
                dirs = []  # not in a repository: only the checked tree's own files count
                break
            current = parent
        chain: IgnoreChain = ()
        for d in reversed(dirs):
            path = os.path.join(d, GITIGNORE)
            if os.path.isfile(path):
                spec = self._load_gitignore(path)
                if spec is not None:
                    chain = (*chain, (d, spec))
        self._chains[directory] = chain
        return chain

    def _load_gitignore(self, path: str) -> pathspec.GitIgnoreSpec | None:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return pathspec.GitIgnoreSpec.from_lines(fh.read().splitlines())
        except (OSError, ValueError) as err:
            self.warnings.append(f"ignoring {path}: {err}")
            return None

    def _first_visit(self, directory: str) -> bool:
        try:
            st = os.stat(directory)
        except OSError:
            return True  # scandir will report it
        key = (st.st_dev, st.st_ino)
        if key in self._seen_dirs:
            return False
        self._seen_dirs.add(key)
        return True


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()  # follows symlinks; loops are cut by _first_visit
    except OSError:
        return False


def _relative(path: str, base: str) -> str | None:
    """`path` relative to `base` in POSIX form, or None when it is not inside it."""
    if path == base:
        return "."
    prefix = base.rstrip(os.sep) + os.sep
    if not path.startswith(prefix):
        return None
    return path[len(prefix) :].replace(os.sep, "/")


def _without_blankets(chain: IgnoreChain, root: str) -> IgnoreChain:
    """The chain without the .gitignore files that ignore `root` itself or a directory
    above it: the user named `root`, so what would hide all of it does not apply."""
    kept = []
    for base, spec in chain:
        rel = _relative(root, base)
        parts = rel.split("/") if rel not in (None, ".") else []
        prefixes = ["/".join(parts[: i + 1]) + "/" for i in range(len(parts))]
        if not any(spec.check_file(prefix).include for prefix in prefixes):
            kept.append((base, spec))
    return tuple(kept)


def _exclude_matches(patterns: tuple[str, ...], rel: str | None, name: str, is_dir: bool) -> bool:
    by_name, by_path = _compiled_excludes(patterns)[is_dir]
    if by_name is not None and by_name.fullmatch(name):
        return True
    return rel is not None and by_path is not None and by_path.fullmatch(rel) is not None


Joined = Optional[re.Pattern]


@lru_cache(maxsize=64)
def _compiled_excludes(patterns: tuple[str, ...]) -> dict[bool, tuple[Joined, Joined]]:
    """Per kind of entry (is_dir), one regex for the patterns that match a name and one
    for those that match a relative path: a walk tests every entry against every
    pattern, so they are joined once instead of tried one by one."""
    out = {}
    for is_dir in (False, True):
        names, paths = [], []
        for raw in patterns:
            pattern = raw[2:] if raw.startswith("./") else raw
            if pattern.endswith("/"):
                if not is_dir:
                    continue
                pattern = pattern.rstrip("/")
            if "/" in pattern:
                paths.append(_glob(pattern.lstrip("/")).pattern)
            else:
                names.append(_glob(pattern).pattern)
        out[is_dir] = (_alternation(names), _alternation(paths))
    return out


def _alternation(regexes: list[str]) -> Joined:
    return re.compile("|".join(f"(?:{r})" for r in regexes)) if regexes else None


@lru_cache(maxsize=512)
def _glob(pattern: str) -> re.Pattern[str]:
    """A glob as a regex: `*`, `?` and `[...]` stay inside one path component, `**` spans
    any number of them."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        char = pattern[i]
        end = pattern.find("]", i + 2) if char == "[" else -1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif end != -1:
            body = pattern[i + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out))
