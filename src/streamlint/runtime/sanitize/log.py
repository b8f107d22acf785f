"""The sanitizer's event log: one JSON object per line, in program order.

Every event has `kind`; the others are present where they mean something:

    stream         int: the CUDA stream (cudaStream_t as an int; 0 the legacy default)
    reads, writes  [[ptr, size], ...]: byte ranges the operation reads and writes
    name           what ran (an aten op, a kernel's name, "memcpyHtoDAsync", ...)
    stack          ["file:line in function", ...], the program's frames, innermost last
    event          int: a CUDA event's id (record, wait, sync with scope event, event-create/-delete)
    ptr, size      the block of an alloc / free / record-stream
    blocking       bool, for `stream`: whether it synchronizes with the legacy default stream
    scope          for `sync`: "stream" (that stream), "event" (that event), "device"

Kinds: launch, copy, memset (device work on `stream`); host (the host reads or writes
memory: `reads`/`writes`, e.g. a host read of a pinned buffer an async copy fills);
alloc, free, record-stream; record, wait, sync, event-create and event-delete (both forget
what the event recorded); stream (a stream's creation).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Optional

DEVICE_WORK = ("launch", "copy", "memset")
KINDS = DEVICE_WORK + ("host", "alloc", "free", "record-stream", "record", "wait", "sync",
                       "event-create", "event-delete", "stream")  # fmt: skip
SCOPES = ("stream", "event", "device")

Range = tuple[int, int]  # (ptr, size)


@dataclass
class Event:
    kind: str
    stream: Optional[int] = None
    reads: list[Range] = field(default_factory=list)
    writes: list[Range] = field(default_factory=list)
    name: str = ""
    stack: list[str] = field(default_factory=list)
    event: Optional[int] = None
    ptr: Optional[int] = None
    size: Optional[int] = None
    blocking: Optional[bool] = None
    scope: Optional[str] = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown event kind {self.kind!r}")
        if self.kind == "sync" and self.scope not in SCOPES:
            raise ValueError(f"a sync's scope is one of {SCOPES}, not {self.scope!r}")
        self.reads = [(int(p), int(s)) for p, s in self.reads]
        self.writes = [(int(p), int(s)) for p, s in self.writes]

    def to_json(self) -> dict:
        out: dict = {"kind": self.kind}
        for key in ("stream", "event", "ptr", "size", "blocking", "scope"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        for key in ("reads", "writes"):
            value = getattr(self, key)
            if value:
                out[key] = [list(r) for r in value]
        if self.name:
            out["name"] = self.name
        if self.stack:
            out["stack"] = list(self.stack)
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Event":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def dumps(events: Iterable[Event]) -> str:
    return "".join(json.dumps(e.to_json(), separators=(",", ":")) + "\n" for e in events)


def write(path: Path, events: Iterable[Event]) -> None:
    path.write_text(dumps(events))


def parse(lines: Iterable[str]) -> Iterator[Event]:
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            yield Event.from_json(json.loads(line))
        except (ValueError, TypeError) as bad:
            raise ValueError(f"event log line {number}: {bad}") from None


def read(path: Path) -> list[Event]:
    """A log file; a name ending in .gz is read through gzip."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return list(parse(f))
