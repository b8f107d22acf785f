"""Check an event log with the happens-before model; report unordered conflicting pairs.

Conflicts (per byte, earlier access unordered with the current actor):

    device read  after a write                      SL401 read-after-write
    device write after a read or a write            SL402 write-after-read (a buffer overwritten
                                                     while other work may still use it)
    host read    after a device write               SL403 host read before sync
    host write   after a device read or write       SL402 (a pinned buffer refilled under a copy)
    any access to a block reused by the allocator   SL404 reuse without record_stream
      that conflicts with an access made before the
      block's free, on a stream other than its owner,
      unordered with the owner at the free and not
      announced with record_stream
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Iterable, Optional

from .clocks import HOST, Clocks
from .log import DEVICE_WORK, Event
from .memory import Access, History

SL401, SL402, SL403, SL404 = "SL401", "SL402", "SL403", "SL404"

TITLES = {
    SL401: "read after an unordered write on another stream",
    SL402: "write while an unordered access on another stream may still use the memory",
    SL403: "host read of memory an asynchronous operation writes, before a sync",
    SL404: "memory reused by the allocator while another stream's access to its previous "
           "owner was unordered (no record_stream)",
}  # fmt: skip


@dataclass(frozen=True)
class Finding:
    code: str
    current: Access
    earlier: Access
    lo: int  # the overlapping bytes
    hi: int
    freed_at: tuple[str, ...] = ()  # SL404: the free that handed the block back

    def key(self) -> tuple:
        return (self.code, self.earlier.index, self.earlier.lo, self.current.index, self.current.lo)

    def describe(self) -> str:
        def actor(a: Access) -> str:
            return "the host" if a.actor == HOST else f"stream {a.actor:#x}" if isinstance(a.actor, int) else str(a.actor)

        def side(label: str, a: Access) -> list[str]:
            what = "writes" if a.write else "reads"
            lines = [f"  {label}: {a.name or 'an operation'} on {actor(a)} {what} [{a.lo:#x}, +{a.hi - a.lo})"]
            lines += [f"      {frame}" for frame in a.stack] or ["      (no program frame)"]
            return lines

        lines = [f"{self.code} {TITLES[self.code]}: {self.hi - self.lo} bytes at {self.lo:#x}"]
        lines += side("now", self.current)
        lines += side("unordered earlier access", self.earlier)
        if self.code == SL404:
            lines += ["  freed at:"] + [f"      {frame}" for frame in self.freed_at or ("(unknown)",)]
        return "\n".join(lines)


@dataclass
class _Block:
    ptr: int
    size: int
    stream: Optional[int]
    recorded: set = field(default_factory=set)


@dataclass
class _Ghost:
    access: Access
    lo: int
    hi: int
    freed_at: tuple[str, ...]


class Checker:
    def __init__(self) -> None:
        self.clocks = Clocks()
        self.history = History()
        self.blocks: dict[int, _Block] = {}
        self.ghosts: list[_Ghost] = []
        self.findings: list[Finding] = []
        self._seen: set = set()
        self._seq = 0

    # ---------------------------------------------------------------- events
    def feed(self, events: Iterable[Event]) -> "Checker":
        for index, event in enumerate(events):
            self.step(index, event)
        return self

    def step(self, index: int, e: Event) -> None:
        c = self.clocks
        if e.kind in DEVICE_WORK:
            stream = e.stream if e.stream is not None else 0
            c.before_work(stream)
            self._seq += 1
            c.work(stream, self._seq)
            self._accesses(index, e, stream)
        elif e.kind == "host":
            self._seq += 1
            self._accesses(index, e, HOST)
        elif e.kind == "stream":
            c.declare(e.stream, bool(e.blocking))
        elif e.kind == "record":
            c.record(e.event, e.stream if e.stream is not None else 0)
        elif e.kind == "wait":
            c.wait(e.stream if e.stream is not None else 0, e.event)
        elif e.kind in ("event-create", "event-delete"):
            c.delete_event(e.event)
        elif e.kind == "sync":
            if e.scope == "device":
                c.sync_device()
            elif e.scope == "event":
                c.sync_event(e.event)
            else:
                c.sync_stream(e.stream if e.stream is not None else 0)
        elif e.kind == "alloc":
            self._alloc(e)
        elif e.kind == "free":
            self._free(e)
        elif e.kind == "record-stream":
            block = self._block_at(e.ptr)
            if block is not None:
                block.recorded.add(e.stream)

    # ---------------------------------------------------------------- accesses
    def _accesses(self, index: int, e: Event, actor: Hashable) -> None:
        written = set(e.writes)
        stack = tuple(e.stack)
        for ptr, size in e.writes:
            self._access(Access(self._seq, actor, True, index, e.name, stack, ptr, ptr + size))
        for ptr, size in e.reads:
            if (ptr, size) not in written:
                self._access(Access(self._seq, actor, False, index, e.name, stack, ptr, ptr + size))

    def _access(self, a: Access) -> None:
        ordered = self.clocks.ordered
        if a.actor != HOST:
            self._check_ghosts(a)
        for seg in self.history.segments(a.lo, a.hi, create=True):
            w = seg.write
            if w is not None and not ordered(w.actor, w.seq, a.actor):
                code = SL403 if a.actor == HOST and not a.write else SL402 if a.write else SL401
                self._report(code, a, w, seg.lo, seg.hi)
            if a.write:
                for r in seg.reads:
                    if not ordered(r.actor, r.seq, a.actor):
                        self._report(SL402, a, r, seg.lo, seg.hi)
                seg.write, seg.reads = a, []
            else:
                # The latest read of an actor stands for its earlier ones.
                seg.reads = [r for r in seg.reads if r.actor != a.actor] + [a]

    def _report(self, code: str, current: Access, earlier: Access, lo: int, hi: int,
                freed_at: tuple[str, ...] = ()) -> None:
        finding = Finding(code, current, earlier, lo, hi, freed_at)
        key = finding.key()
        if key in self._seen:
            for i, old in enumerate(self.findings):  # widen the reported overlap
                if old.key() == key:
                    self.findings[i] = Finding(code, current, earlier, min(old.lo, lo), max(old.hi, hi), freed_at)
            return
        self._seen.add(key)
        self.findings.append(finding)

    # ---------------------------------------------------------------- allocator
    def _block_at(self, ptr: Optional[int]) -> Optional[_Block]:
        if ptr is None:
            return None
        block = self.blocks.get(ptr)
        if block is not None:
            return block
        for block in self.blocks.values():
            if block.ptr <= ptr < block.ptr + block.size:
                return block
        return None

    def _alloc(self, e: Event) -> None:
        size = e.size or 0
        for old in [b for b in self.blocks.values() if b.ptr < e.ptr + size and e.ptr < b.ptr + b.size]:
            # Its free was not recorded: a driver free (cuMemFree synchronizes), not a
            # caching allocator's, so no access of the old block can race the new one.
            del self.blocks[old.ptr]
        self.history.forget(e.ptr, e.ptr + size)
        self.blocks[e.ptr] = _Block(e.ptr, size, e.stream)

    def _free(self, e: Event) -> None:
        block = self.blocks.get(e.ptr)
        if block is None:
            if e.size:
                self.history.forget(e.ptr, e.ptr + e.size)
            return
        self._release(block, tuple(e.stack))

    def _release(self, block: _Block, freed_at: tuple[str, ...]) -> None:
        """The caching allocator may hand the block to new work on its owner stream at once;
        accesses of other streams not ordered before the owner's current point and not
        announced with record_stream live on as ghosts that later work there can race."""
        del self.blocks[block.ptr]
        lo, hi = block.ptr, block.ptr + block.size
        owner = block.stream if block.stream is not None else 0
        for access in self.history.forget(lo, hi):
            if access.actor in (HOST, owner) or access.actor in block.recorded:
                continue
            if not self.clocks.ordered(access.actor, access.seq, owner):
                self.ghosts.append(_Ghost(access, max(lo, access.lo), min(hi, access.hi), freed_at))

    def _check_ghosts(self, a: Access) -> None:
        kept = []
        for g in self.ghosts:
            if g.hi <= a.lo or a.hi <= g.lo:
                kept.append(g)
            elif self.clocks.ordered(g.access.actor, g.access.seq, a.actor):
                kept.append(g)  # ordered for this actor; another may still race it
            elif a.write or g.access.write:
                self._report(SL404, a, g.access, max(a.lo, g.lo), min(a.hi, g.hi), g.freed_at)
            else:
                kept.append(g)
        self.ghosts = kept


def check(events: Iterable[Event]) -> list[Finding]:
    return Checker().feed(events).findings
