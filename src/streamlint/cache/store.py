"""The cache on disk: one shard file per checked directory, under `<cache-dir>/results-*/`.

A shard maps file names to entries: the content hash and configuration key the entry
was made for, the dependencies the analysis read (streamlint/reads.py), and the result.
A dependency noted with a summary note whose module's text changed makes the entry
`Conditional`: the engine computes the digest of what the result used there now (and, for a
note stored with its digest DEFERRED, then: from the module's text kept in `texts-*/`,
cache/texts.py) and settles it with `confirm` (model/interproc/digests.py).
A shard is one header line (format, tool fingerprint, directory, hash of the body)
and a JSON body. Shards are written whole, to a temporary file renamed over the old
one (atomic_write.py, without fsync: a shard lost in a crash costs a re-check), so a
reader sees the old shard or the new one, never half of one; a shard whose
header does not match (another version, another directory, a damaged body) is
ignored and replaced on the next write. Concurrent runs: the last writer wins.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from streamlint import __version__, reads, syntax_notes
from streamlint.atomic_write import write_atomic
from streamlint.cache import codec
from streamlint.cache.keys import FORMAT, tool_fingerprint
from streamlint.cache.texts import TextStore
from streamlint.diagnostics import Diagnostic

CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by streamlint.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/\n"
)
GITIGNORE = "# Automatically created by streamlint.\n*\n"
RESULTS_PREFIX = "results-"
TEXTS_PREFIX = "texts-"


class Cached(NamedTuple):
    diagnostics: list[Diagnostic]
    analysed: bool
    lines: int


class SummaryCheck(NamedTuple):
    """A module whose text changed since a result was stored, and what the result used
    of it: the result still holds if those names give the same digest now (`digest`: theirs
    then, or DEFERRED: made from the text of content hash `content_then`, kept by the cache)."""

    path: str
    digest: str
    names: tuple[str, ...]
    content_now: str
    content_then: str


class Conditional(NamedTuple):
    """A stored result that holds if `checks` pass (see `confirm`)."""

    cached: Cached
    checks: tuple[SummaryCheck, ...]
    path: str  # the checked file (absolute)


@dataclass
class _Shard:
    entries: dict[str, Any] = field(default_factory=dict)
    touched: set[str] = field(default_factory=set)  # names looked up or stored this run
    dirty: bool = False


class ResultCache:
    """Lookups and stores of one run; `save()` writes what changed."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = os.path.abspath(directory)
        self.results_dir = os.path.join(self.directory, f"{RESULTS_PREFIX}{FORMAT}-{__version__}")
        self.hits = 0
        self.misses = 0
        self.warnings: list[str] = []
        self._shards: dict[str, _Shard] = {}
        self._current: dict[tuple[str, bool], reads.Note] = {}
        self.texts = TextStore(os.path.join(self.directory, f"{TEXTS_PREFIX}{FORMAT}-{__version__}"))

    # ------------------------------------------------------------------ lookups
    def lookup(self, path: str, filename: str, digest: str, config: str) -> Optional[Cached | Conditional]:
        """The stored result for the file at absolute `path`, shown as `filename`, when it
        was made for this content, this configuration, and dependencies as they are now;
        a `Conditional` when it holds only if some modules' summaries did not change
        (counted as a hit or a miss by `confirm`)."""
        directory, name = os.path.split(path)
        shard = self._shard(directory)
        shard.touched.add(name)
        found = self._valid(shard.entries.get(name), filename, digest, config, path)
        if found is None:
            self.misses += 1
        elif isinstance(found, Cached):
            self.hits += 1
        return found

    def confirm(
        self, conditional: Conditional, holds: bool, digests: Optional[dict[str, Optional[str]]] = None
    ) -> Optional[Cached]:
        """Settle a `Conditional`: when its checks held, the entry is kept with the
        modules' current content hashes and `digests` (path -> the digest made now; the next run
        takes it at once)."""
        if not holds:
            self.misses += 1
            return None
        self.hits += 1
        directory, name = os.path.split(conditional.path)
        shard = self._shard(directory)
        entry = shard.entries.get(name)
        if isinstance(entry, dict) and isinstance(entry.get("deps"), dict):
            deps = dict(entry["deps"])
            for check in conditional.checks:
                digest = (digests or {}).get(check.path) or check.digest
                deps[check.path] = reads.summary_note(check.content_now, digest, check.names)
            shard.entries[name] = {**entry, "deps": deps}
            shard.dirty = True
        return conditional.cached

    def _valid(self, entry: Any, filename: str, digest: str, config: str, path: str) -> Optional[Cached | Conditional]:
        if not isinstance(entry, dict) or entry.get("hash") != digest or entry.get("config") != config:
            return None
        deps = entry.get("deps")
        if not isinstance(deps, dict):
            return None
        checks: list[SummaryCheck] = []
        for dep, note in deps.items():
            if not (note is None or isinstance(note, str)):
                return None
            summary = reads.parse_summary_note(note)
            if self._holds(dep, summary.content if summary is not None else note):
                continue
            if summary is None:
                return None
            now = self._note_now(dep, summary.content)
            if not now:
                return None  # gone (or unreadable): resolved again by a new analysis
            checks.append(SummaryCheck(dep, summary.digest, summary.names, now, _content_of(summary.content)))
        analysed, lines, raw = entry.get("analysed"), entry.get("lines"), entry.get("diagnostics")
        if not isinstance(analysed, bool) or type(lines) is not int or not isinstance(raw, list):
            return None
        try:
            diagnostics = [codec.decode_diagnostic(filename, d) for d in raw]
        except codec.DecodeError:
            return None
        cached = Cached(diagnostics, analysed, lines)
        return Conditional(cached, tuple(checks), path) if checks else cached

    def _holds(self, path: str, recorded: reads.Note) -> bool:
        """Whether what the analysis noted about `path` holds now: its existence, its content,
        or for a syntax note its content or else its tokens but comments and blank lines."""
        if recorded is None or not recorded.startswith(syntax_notes.SYNTAX_PREFIX):
            return self._note_now(path, recorded) == recorded
        content, syntax = syntax_notes.syntax_part(recorded)
        if self._note_now(path, content) == content:
            syntax_notes.remember(recorded)  # (these bytes' note: a re-check that reads them need not make it again)
            return True
        if syntax == syntax_notes.DEFERRED:  # (made now from the text the cache kept)
            then = self.texts.text_of(content)
            made = syntax_notes.syntax_of(then) if then is not None else ""
            if not made.startswith(syntax_notes.SYNTAX_PREFIX):
                return False
            syntax = syntax_notes.syntax_part(made)[1]
        now = self._note_now(path, recorded)
        return bool(now) and now.startswith(syntax_notes.SYNTAX_PREFIX) and syntax_notes.syntax_part(now)[1] == syntax

    def _note_now(self, path: str, recorded: reads.Note) -> reads.Note:
        """What the analysis would note about `path` now, of the kind `recorded` is (its
        existence, its content hash, its syntax note: streamlint/reads.py), memoized for the run."""
        wants = "syntax" if recorded and recorded.startswith(syntax_notes.SYNTAX_PREFIX) else "hash" if recorded else ""
        key = (path, wants)
        if key not in self._current:
            if not wants:
                now = reads.PRESENT if os.path.isfile(path) else reads.ABSENT
            else:
                try:
                    with open(path, "rb") as fh:
                        data = fh.read()
                except OSError:
                    now = reads.ABSENT
                else:
                    now = syntax_notes.syntax_of(data) if wants == "syntax" else reads.content_hash(data)
            self._current[key] = now
        return self._current[key]

    # ------------------------------------------------------------------ stores
    def store(
        self,
        path: str,
        digest: str,
        config: str,
        diagnostics: list[Diagnostic],
        analysed: bool,
        lines: int,
        deps: dict[str, reads.Note],
    ) -> None:
        try:
            encoded = [codec.encode_diagnostic(d) for d in diagnostics]
        except TypeError:
            return  # a value the cache cannot hold: this file is simply re-checked next time
        directory, name = os.path.split(path)
        shard = self._shard(directory)
        deps = {dep: self._kept_for(dep, note) for dep, note in sorted(deps.items())}
        shard.entries[name] = {
            "hash": digest, "config": config, "deps": deps,
            "analysed": analysed, "lines": lines, "diagnostics": encoded,
        }  # fmt: skip
        shard.touched.add(name)
        shard.dirty = True

    def _kept_for(self, dep: str, note: reads.Note) -> reads.Note:
        """A note whose digest or syntax hash is deferred, with its module's text kept; where the
        text cannot be kept (changed since it was read), its content hash alone."""
        summary = reads.parse_summary_note(note)
        content = summary.content if summary is not None else note
        deferred = summary is not None and summary.digest == reads.DEFERRED
        if content and content.startswith(syntax_notes.SYNTAX_PREFIX):
            deferred = deferred or syntax_notes.syntax_part(content)[1] == syntax_notes.DEFERRED
        if not deferred or self.texts.keep(dep, _content_of(content)):
            return note
        return _content_of(content)  # (the exact content: holds only while the text is the same)

    def save(self) -> None:
        """Write the shards that changed; a failure becomes a warning, never an error."""
        dirty = [(d, s) for d, s in sorted(self._shards.items()) if s.dirty]
        if not dirty:
            return
        try:
            self._prepare()
            self.texts.save()  # (before the entries that need them)
            for directory, shard in dirty:
                self._write(directory, shard)
                shard.dirty = False
        except OSError as err:
            self.warnings.append(
                f"cannot write the cache in {self.directory}: {err.strerror or err}"
            )

    # ------------------------------------------------------------------ files
    def _shard(self, directory: str) -> _Shard:
        shard = self._shards.get(directory)
        if shard is None:
            shard = self._shards[directory] = _Shard(self._read(directory))
        return shard

    def _shard_path(self, directory: str) -> str:
        return os.path.join(self.results_dir, reads.content_hash(os.fsencode(directory)) + ".json")

    def _read(self, directory: str) -> dict[str, Any]:
        try:
            with open(self._shard_path(directory), "rb") as fh:
                raw = fh.read()
        except OSError:
            return {}
        head, _, body = raw.partition(b"\n")
        try:
            header = json.loads(head)
            if not isinstance(header, dict) or header != self._header(directory, body):
                return {}
            entries = json.loads(body)
        except ValueError:  # not JSON, not UTF-8
            return {}
        return entries if isinstance(entries, dict) else {}

    def _header(self, directory: str, body: bytes) -> dict[str, Any]:
        return {
            "streamlint-cache": FORMAT,
            "tool": tool_fingerprint(),
            "dir": directory,
            "body": reads.content_hash(body),
        }

    def _write(self, directory: str, shard: _Shard) -> None:
        # Entries of files that are gone (deleted or renamed since) are dropped.
        entries = {
            name: entry
            for name, entry in sorted(shard.entries.items())
            if name in shard.touched or os.path.isfile(os.path.join(directory, name))
        }
        body = json.dumps(entries, separators=(",", ":")).encode("utf-8")
        head = json.dumps(self._header(directory, body)).encode("utf-8")
        write_atomic(self._shard_path(directory), head + b"\n" + body, durable=False)

    def _prepare(self) -> None:
        os.makedirs(self.results_dir, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", GITIGNORE)):
            path = os.path.join(self.directory, name)
            if not os.path.exists(path):
                write_atomic(path, text.encode("utf-8"), durable=False)


def _content_of(note: str) -> str:
    """The content hash of a content note or a syntax note."""
    return syntax_notes.syntax_part(note)[0] if note.startswith(syntax_notes.SYNTAX_PREFIX) else note
