"""Happens-before over the program text: vector clocks per stream, as CSAN does at run time.

Each operation queued on a stream ticks that stream's clock. Every stream (and the
host) keeps a vector of the latest operation on each other stream it has waited for.
Edges: `wait_stream`, event record + wait, host synchronizations, blocking copies,
and the legacy default stream's implicit barrier with blocking streams. Buffer
accesses are checked against the last writes and the reads since, per buffer key.

The walker (flow.py) drives this state along the program: it is copied at branches,
met at joins (a wait on only one path orders nothing), and run several times around
loops so that one iteration's work meets the next one's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Optional

import libcst as cst

from streamlint.model.values import OWN_AMBIENT_SITE, Stream, StreamKind

HOST = "host"
LEGACY = "legacy"
# PyTorch's current stream at entry (the caller's): not known to be the legacy default
# stream (a caller's side stream, a CUDA-graph capture stream), so waiting on
# `torch.cuda.default_stream()` does not order it. CuPy and Numba code keep the legacy key.
AMBIENT = "ambient"
# Keys of streams the walk could not identify: hazards involving them are unsure (silent).
UNSURE_PREFIX = "~"


def unsure(key: str) -> bool:
    return key.startswith(UNSURE_PREFIX)

# Access spaces: which memory an access touches, when the text says so.
DEVICE, HOSTMEM, ANY = "device", "host", "any"
UNSURE = "unsure"  # a copy whose direction the text does not tell: never a device read of a parameter


@dataclass(frozen=True)
class Access:
    key: tuple  # buffer identity: ("b", site[, region]) or ("n", name)
    label: str  # how the source names it
    write: bool
    space: str = ANY
    assumed: bool = False  # a write we assume because we cannot read the kernel body
    fresh: bool = False  # the result of the call: new memory, whatever earlier runs of it did


@dataclass(frozen=True)
class Ev:
    """One access by one operation: where, on which stream, at which clock."""

    node: cst.CSTNode = field(compare=False)
    stream: str
    clock: int
    label: str = field(compare=False, default="")  # the stream's label
    api: str = field(compare=False, default="")
    param: bool = False  # a parameter produced on the caller's stream before entry
    space: str = ANY
    via: object = field(default=None, compare=False)  # HelperRef when a called function did it
    carried: bool = field(default=False, compare=False)  # left pending by an earlier call of a method (classes.py)
    # A side stream's access an earlier call left pending after that call made the stream
    # wait for its caller's stream (a fork) with no wait back: that wait, and the helper
    # it was made in (HelperRef) when the call reached it through one.
    fork: object = field(default=None, compare=False)
    fork_via: object = field(default=None, compare=False)


class HazardKind(Enum):
    """What went wrong between two accesses (rules map kinds to codes and messages)."""

    READ_AFTER_WRITE = "a stream reads what another stream may still be writing"
    WRITE_AFTER_READ = "a buffer is overwritten while another stream may still use it"
    HOST_READ_BEFORE_SYNC = "the host reads what an asynchronous copy may still be writing"
    RELEASE_WITHOUT_RECORD = "memory used on another stream is released without record_stream"
    OUTSIDE_READ_BEFORE_SYNC = "a library outside the streams reads what a stream may still be writing"


HOST_LABEL = "the host"  # the later (or earlier) side of a hazard when it is the host

RAW = HazardKind.READ_AFTER_WRITE
WAR = HazardKind.WRITE_AFTER_READ
HOST_RAW = HazardKind.HOST_READ_BEFORE_SYNC
RELEASE = HazardKind.RELEASE_WITHOUT_RECORD
OUTSIDE_RAW = HazardKind.OUTSIDE_READ_BEFORE_SYNC


@dataclass(frozen=True)
class Hazard:
    kind: HazardKind
    node: cst.CSTNode = field(compare=False)  # where it is reported
    other: Optional[cst.CSTNode] = field(compare=False)  # the conflicting access
    buffer: str
    first: str  # stream (or "the host") of the earlier access
    second: str  # stream (or "the host") of the later access
    framework: str
    first_api: str = ""
    release: Optional[cst.CSTNode] = field(default=None, compare=False)
    param: bool = False
    key: tuple = ()
    via: object = field(default=None, compare=False)  # the later access happened inside a helper
    other_via: object = field(default=None, compare=False)  # ... the earlier one
    handed_out: bool = False  # released by the caller, after this function returned it
    owned: bool = False  # the reading stream waits for something here: this body owns its ordering
    waits_on_default: bool = False  # reported at a wait on the default stream, not the current one
    joins_default: bool = False  # the default stream, not the current one, waits for a side stream here
    wrong_wait: bool = False  # the current stream waits here for another stream than the one that wrote
    # Reported at the earlier access (`node`, `via`), which an earlier call left pending
    # (`other` is the later one): the host refills what that call's copy may still read.
    carried: bool = False
    # Queued on the current stream by a method its callers hand this non-blocking stream
    # (a parameter) for its work: the callers' work there is unordered with it.
    given_stream: str = ""
    # Left on a holder by another function, together with a tensor this function records
    # on the stream it uses it on (`peers.py`): the sibling's `record_stream` call.
    peer: Optional[cst.CSTNode] = field(default=None, compare=False)
    # Reported at a helper's asynchronous copy to the host whose result it returns unfinished
    # (`node`), as every caller of this file that reads it does so before a wait: those reads.
    returned_to: tuple = field(default=(), compare=False)
    # Stored in a container the object keeps (`self.<attr>[k] = t`) whose entries a public
    # method hands to the caller (`handed_by`, returning at `release`): reported at the
    # allocation.
    kept_in: str = ""
    handed_by: str = ""

    @property
    def identity(self) -> tuple:
        if self.kind is HOST_RAW:
            # One report per pending copy: the first read, where the fix goes.
            return (self.kind, id(self.other), self.key)
        return (self.kind, id(self.node), self.key)


def stream_key(stream: Stream) -> str:
    if stream.kind is StreamKind.AMBIENT and stream.site == OWN_AMBIENT_SITE:
        return AMBIENT
    if stream.kind in (StreamKind.LEGACY, StreamKind.AMBIENT):
        return LEGACY
    if stream.kind is StreamKind.PER_THREAD:
        return "ptds"
    if stream.uncertain:
        return f"{UNSURE_PREFIX}{stream.framework}:{stream.site}"
    label = stream.keyed_as or stream.label
    if label.startswith("self.") and label.count(".") == 1 and not stream.one_of:
        # `self.stream` is one object in every method (syntactic paths, as RacerD),
        # whether this walk saw its creation or only its name.
        return f"{stream.framework}:{label}"
    return f"{stream.framework}:{stream.site}"


def _merge(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        if into.get(k, 0) < v:
            into[k] = v


def _meet(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: min(v, b[k]) for k, v in a.items() if k in b}


@dataclass
class Alloc:
    stream: str
    stream_label: str
    node: cst.CSTNode
    name: str = ""
    uses: list[Ev] = field(default_factory=list)
    recorded: set[str] = field(default_factory=set)
    after_entry: bool = False  # its stream had waited for the caller's stream: earlier uses there are ordered


class HB:
    """The ordering state at one program point."""

    def __init__(self) -> None:
        self.clock: dict[str, int] = {}
        self.vc: dict[str, dict[str, int]] = {}
        self.host: dict[str, int] = {}
        self.events: dict[int, dict[str, int]] = {}
        self.legacy_vc: dict[str, int] = {}
        self.blocking: dict[str, Optional[bool]] = {LEGACY: True}
        self.writes: dict[tuple, tuple[Ev, ...]] = {}
        self.reads: dict[tuple, tuple[Ev, ...]] = {}
        self.allocs: dict[tuple, Alloc] = {}
        # Events made in the walked code: until recorded, waiting on one orders nothing.
        self.created_events: set[int] = set()
        self.waiters: set[str] = set()  # streams this body makes wait (it owns their ordering)
        # stream -> its wait on the legacy default stream (PyTorch: not the current stream)
        self.default_waits: dict[str, cst.CSTNode] = {}
        # Every stream's clock when the host last synchronized a stream it cannot tell
        # apart from the producers (a parameter): it may have been the one that wrote.
        self.maybe_synced: dict[str, int] = {}

    # ------------------------------------------------------------ state algebra
    def copy(self) -> "HB":
        new = HB.__new__(HB)
        new.clock = dict(self.clock)
        new.vc = {k: dict(v) for k, v in self.vc.items()}
        new.host = dict(self.host)
        new.events = {k: dict(v) for k, v in self.events.items()}
        new.legacy_vc = dict(self.legacy_vc)
        new.blocking = dict(self.blocking)
        new.writes = dict(self.writes)
        new.reads = dict(self.reads)
        new.allocs = {k: replace(a, uses=list(a.uses), recorded=set(a.recorded)) for k, a in self.allocs.items()}
        new.created_events = set(self.created_events)
        new.waiters = set(self.waiters)
        new.default_waits = dict(self.default_waits)
        new.maybe_synced = dict(self.maybe_synced)
        return new

    def meet(self, other: "HB", must: bool = False) -> None:
        """Two paths join: keep the waits either made (a *may* order: a wait under a
        condition such as `if wait: s.wait_stream(t)` may be the one that runs, and a
        linter that is unsure stays silent), and every access either made.

        `must`: keep only the waits both made. For a periodic guard in a loop
        (`if step % 8 == 0: ev.synchronize()`) the last steps are known to skip it."""
        for k, v in other.clock.items():
            self.clock[k] = max(self.clock.get(k, 0), v)
        if must:
            self._must_meet(other)
        else:
            for k, v in other.vc.items():
                _merge(self.stream_vc(k), v)
            _merge(self.host, other.host)
            for k, v in other.events.items():
                _merge(self.events.setdefault(k, {}), v)
            _merge(self.legacy_vc, other.legacy_vc)
        if must:
            self.maybe_synced = _meet(self.maybe_synced, other.maybe_synced)
        else:
            _merge(self.maybe_synced, other.maybe_synced)
        self.created_events |= other.created_events
        self.waiters |= other.waiters
        for k, v in other.default_waits.items():
            self.default_waits.setdefault(k, v)
        self._meet_accesses(other)

    def _must_meet(self, other: "HB") -> None:
        # Work queued from now on also starts after what the host has waited for, so
        # a path that synchronized the host orders as much as one that made a stream wait.
        for k in set(self.vc) | set(other.vc):
            mine, theirs = dict(self.vc.get(k, {})), dict(other.vc.get(k, {}))
            _merge(mine, self.host)
            _merge(theirs, other.host)
            self.vc[k] = _meet(mine, theirs)
        for k in set(self.clock) | set(other.clock):
            if k not in self.vc:
                self.vc[k] = _meet(dict(self.host), dict(other.host))
        self.host = _meet(self.host, other.host)
        self.events = {k: _meet(v, other.events[k]) for k, v in self.events.items() if k in other.events}
        self.legacy_vc = _meet(self.legacy_vc, other.legacy_vc)

    def _meet_accesses(self, other: "HB") -> None:
        self.blocking.update(other.blocking)
        for table_name in ("writes", "reads"):
            mine, theirs = getattr(self, table_name), getattr(other, table_name)
            for base in set(mine) | set(theirs):
                a, b = mine.get(base, {}), theirs.get(base, {})
                if a is b:
                    continue
                parts = {}
                for region in set(a) | set(b):
                    merged = tuple(dict.fromkeys(a.get(region, ()) + b.get(region, ())))
                    parts[region] = merged[-8:]  # bounded: enough to name the conflict
                mine[base] = parts
        for key, alloc in other.allocs.items():
            mine_alloc = self.allocs.get(key)
            if mine_alloc is None:
                self.allocs[key] = alloc
            else:
                mine_alloc.uses.extend(u for u in alloc.uses if u not in mine_alloc.uses)
                mine_alloc.recorded |= alloc.recorded  # recorded on either path may protect it

    # ------------------------------------------------------------ ordering edges
    def stream_vc(self, key: str) -> dict[str, int]:
        return self.vc.setdefault(key, {})

    def full_vc(self, key: str) -> dict[str, int]:
        """What finishing everything queued on `key` so far implies: its own work
        (a stream runs in order, whatever path queued it) and all it waited for."""
        vc = dict(self.stream_vc(key))
        if self.clock.get(key, 0) > vc.get(key, 0):
            vc[key] = self.clock[key]
        return vc

    def host_sync(self, key: Optional[str]) -> None:
        """The host waited for everything queued so far on `key` (None: on every stream)."""
        if key is None:
            for v in self.vc.values():
                _merge(self.host, v)
            _merge(self.host, self.clock)
        else:
            _merge(self.host, self.full_vc(key))

    def maybe_sync(self) -> None:
        """The host synchronized a stream that may be any of the producers (a parameter)."""
        _merge(self.maybe_synced, self.clock)

    def event_created(self, site: int) -> None:
        """A new event (or the name rebound to one): nothing recorded on it yet."""
        self.created_events.add(site)
        self.events.pop(site, None)

    def host_sync_event(self, site: Optional[int]) -> None:
        if site is not None and site in self.created_events and site not in self.events:
            return  # never recorded: synchronizing on it waits for nothing
        if site is not None and site in self.events:
            _merge(self.host, self.events[site])
        elif site is None:
            self.host_sync(None)

    def record_event(self, site: int, stream: str) -> None:
        self.events[site] = self.full_vc(stream)

    def wait_event(self, stream: str, site: Optional[int]) -> None:
        self.waiters.add(stream)
        if site is not None and site in self.created_events and site not in self.events:
            return  # never recorded: waiting on it orders nothing
        if site is not None and site in self.events:
            _merge(self.stream_vc(stream), self.events[site])
        else:
            # An event we cannot follow: assume it orders everything (stay silent).
            for v in list(self.vc.values()):
                _merge(self.stream_vc(stream), v)
            _merge(self.stream_vc(stream), self.clock)

    def wait_stream(self, stream: str, other: Optional[str], node: Optional[cst.CSTNode] = None) -> None:
        self.waiters.add(stream)
        if other is None or unsure(other):
            # A stream we cannot identify (`for s in producers: side.wait_stream(s)`): it
            # may be any of them, so the wait is taken to order everything (stay silent).
            self.wait_event(stream, None)
        else:
            _merge(self.stream_vc(stream), self.full_vc(other))
            if other == LEGACY and node is not None:
                self.default_waits.setdefault(stream, node)

    def tick(self, key: str, blocking: Optional[bool]) -> int:
        """Queue one operation on `key`; returns its clock."""
        self.blocking.setdefault(key, blocking)
        vc = self.stream_vc(key)
        # Work queued now starts after everything the host has already seen finish.
        _merge(vc, self.host)
        if key == LEGACY:
            # The legacy default stream first waits for every blocking stream.
            for other in list(self.vc):
                # A stream whose flags we cannot see may be blocking: assume it is
                # ordered (a linter that is unsure stays silent).
                if other != LEGACY and self.blocking.get(other) is not False:
                    _merge(vc, self.full_vc(other))
        elif self.blocking.get(key) is not False:
            # ... and blocking streams wait for the legacy stream's earlier work.
            _merge(vc, self.legacy_vc)
        clock = self.clock.get(key, 0) + 1
        self.clock[key] = clock
        vc[key] = clock
        if key == LEGACY:
            self.legacy_vc = dict(vc)
        return clock

    def unordered_side_writes(self, stream: str, besides: str) -> list[tuple[tuple, Ev]]:
        """Writes to buffers that outlive the body (parameters, attributes, names it did not
        allocate), queued on an explicit stream other than `besides`, not ordered before `stream`."""
        out = []
        for base, parts in self.writes.items():
            if base[0] != "n":
                continue
            for evs in parts.values():
                for ev in evs:
                    if ev.stream in (HOST, LEGACY, AMBIENT, besides) or ev.param or unsure(ev.stream) \
                            or ev.stream == "ptds" or self.ordered(stream, ev):
                        continue
                    out.append((base, ev))
        return out

    def ordered(self, stream: str, ev: Ev) -> bool:
        """Is the earlier access `ev` ordered before new work on `stream`?"""
        if ev.stream == stream or ev.stream == HOST:
            return True
        if stream == HOST:
            return self.host.get(ev.stream, 0) >= ev.clock
        return self.stream_vc(stream).get(ev.stream, 0) >= ev.clock

    # ------------------------------------------------------------ buffer accesses
    def _entries(self, table: dict, key: tuple) -> tuple[Ev, ...]:
        """Accesses that may overlap `key`: the whole buffer and any part of it."""
        base, region = key[:-1], key[-1]
        parts = table.get(base, {})
        if region == "":
            return tuple(ev for evs in parts.values() for ev in evs)
        found = parts.get("", ()) + parts.get(region, ())
        axis = _axis(region)
        for other, evs in parts.items():
            if other and other != region and _axis(other) != axis:
                found += evs  # slices along different axes cross
        return found

    def _set(self, table: dict, key: tuple, evs: tuple[Ev, ...]) -> None:
        base, region = key[:-1], key[-1]
        parts = dict(table.get(base, {}))
        if region == "":
            parts = {"": evs} if evs else {}
        elif evs:
            parts[region] = evs
        else:
            parts.pop(region, None)
        table[base] = parts

    def _add(self, table: dict, key: tuple, ev: Ev) -> None:
        base, region = key[:-1], key[-1]
        current = table.get(base, {}).get(region, ())
        parts = dict(table.get(base, {}))
        parts[region] = (current + (ev,))[-8:]
        table[base] = parts

    def add_write(self, key: tuple, ev: Ev) -> None:
        """A write made before this walk began (another method's, still pending)."""
        self._add(self.writes, key, ev)

    def add_read(self, key: tuple, ev: Ev) -> None:
        """A read made before this walk began (another method's copy, still pending)."""
        self._add(self.reads, key, ev)

    def pending_writes(self, key: tuple) -> tuple[Ev, ...]:
        return self._entries(self.writes, key)

    def produced_before_entry(self, key: tuple, node: cst.CSTNode, clock: int, stream: str = LEGACY,
                              label: str = "the caller's current stream") -> None:
        """A parameter: taken as produced on the caller's current stream (or the stream
        the callers hand in for the work, `label`)."""
        self._set(self.writes, key, (Ev(node, stream, clock, label=label, param=True),))

    def forget(self, key: tuple) -> None:
        """A name now holds something else: its old accesses no longer apply to it."""
        base = key[:-1]
        self.writes.pop(base, None)
        self.reads.pop(base, None)

    def has_history(self, key: tuple) -> bool:
        return bool(self._entries(self.writes, key) or self._entries(self.reads, key))

    def device_access(self, acc: Access, ev: Ev, framework: str) -> list[Hazard]:
        hazards = []
        if unsure(ev.stream):
            # A stream we could not identify: record the access, report nothing about it.
            self._add(self.reads, acc.key, ev) if not acc.write else self._set(self.writes, acc.key, (ev,))
            return hazards
        if not acc.write:
            for w in self._entries(self.writes, acc.key):
                if unsure(w.stream):
                    continue
                if w.stream == HOST or (w.param and acc.space in (HOSTMEM, UNSURE)):
                    continue
                if w.space == HOSTMEM and acc.space != HOSTMEM:
                    continue
                if not self.ordered(ev.stream, w):
                    misdirected = self.default_waits.get(ev.stream) if w.stream == AMBIENT else None
                    hazards.append(Hazard(RAW, misdirected or ev.node, w.node, acc.label, w.label, ev.label,
                                          framework, w.api, param=w.param, key=acc.key, via=ev.via,
                                          other_via=w.via, owned=ev.stream in self.waiters,
                                          waits_on_default=misdirected is not None))
            self._add(self.reads, acc.key, ev)
        else:
            # A fresh allocation is new memory: earlier uses of what this call made in
            # an earlier iteration do not touch it (allocator reuse is SL404's business).
            priors = () if acc.fresh else self._entries(self.reads, acc.key) + self._entries(self.writes, acc.key)
            for prior in priors:
                if prior.stream == HOST or prior.param or unsure(prior.stream):
                    continue
                if not self.ordered(ev.stream, prior):
                    if prior.carried and prior.fork is not None:
                        # The previous call's side stream may still use what this call
                        # overwrites: reported at the one-way wait (the fork) that call made,
                        # where the wait back belongs, once for all the overwrites it races.
                        hazards.append(Hazard(WAR, prior.fork, ev.node, acc.label, prior.label, ev.label, framework,
                                              prior.api, key=acc.key, via=prior.fork_via, carried=True))
                        continue
                    misdirected = self.default_waits.get(ev.stream) if prior.stream == AMBIENT else None
                    if misdirected is not None:
                        # The writer meant to wait for the current stream's work, and waited on another.
                        hazards.append(Hazard(RAW, misdirected, prior.node, acc.label, prior.label, ev.label,
                                              framework, prior.api, key=acc.key, via=ev.via,
                                              other_via=prior.via, waits_on_default=True))
                        continue
                    hazards.append(Hazard(WAR, ev.node, prior.node, acc.label, prior.label, ev.label,
                                          framework, prior.api, key=acc.key, via=ev.via, other_via=prior.via))
            self._set(self.writes, acc.key, (ev,))
            self._set(self.reads, acc.key, ())
        return hazards

    def host_read(self, acc: Access, node: cst.CSTNode, framework: str) -> list[Hazard]:
        """The host reads a buffer: an async copy into it must have been waited for."""
        hazards = []
        for w in self._entries(self.writes, acc.key):
            if w.stream == HOST or w.param or w.space != HOSTMEM or unsure(w.stream):
                continue
            if not self.ordered(HOST, w):
                hazards.append(Hazard(HOST_RAW, node, w.node, acc.label, w.label, HOST_LABEL, framework, w.api,
                                      key=acc.key, other_via=w.via))
        return hazards

    def outside_read(self, acc: Access, node: cst.CSTNode, framework: str) -> list[Hazard]:
        """A library outside the streams (CUDA-aware MPI) reads device memory now: every
        stream that wrote it, the caller's included, must have been synchronized. A sync
        of a stream the body cannot tell apart from the writer counts (stay silent)."""
        hazards = []
        for w in self._entries(self.writes, acc.key):
            if w.stream == HOST or w.space == HOSTMEM or unsure(w.stream):
                continue
            if self.ordered(HOST, w) or self.maybe_synced.get(w.stream, 0) >= w.clock:
                continue
            hazards.append(Hazard(OUTSIDE_RAW, node, w.node, acc.label, w.label, "MPI", framework, w.api,
                                  param=w.param, key=acc.key, other_via=w.via))
        # One report per read: name the write this body made, if it made one.
        return [h for h in hazards if not h.param][:1] or hazards[:1]

    def host_write(self, acc: Access, node: cst.CSTNode, framework: str, check: bool = True) -> list[Hazard]:
        """The host overwrites a buffer an async copy may still be reading or writing."""
        hazards = []
        priors = self._entries(self.reads, acc.key) + self._entries(self.writes, acc.key) if check else ()
        for prior in priors:
            if prior.stream == HOST or prior.param or prior.space != HOSTMEM or unsure(prior.stream):
                continue
            if not self.ordered(HOST, prior):
                if prior.carried:
                    # Left pending by an earlier call: reported at that copy (`via`: inside
                    # the helper that made it), where the missing wait is, once for all the
                    # refills it races.
                    hazards.append(Hazard(WAR, prior.node, node, acc.label, prior.label, HOST_LABEL, framework,
                                          prior.api, key=acc.key, via=prior.via, carried=True))
                    continue
                hazards.append(Hazard(WAR, node, prior.node, acc.label, prior.label, HOST_LABEL, framework,
                                      prior.api, key=acc.key, other_via=prior.via))
        self._set(self.writes, acc.key, (Ev(node, HOST, 0, label=HOST_LABEL),))
        self._set(self.reads, acc.key, ())
        return hazards

    # ------------------------------------------------------------ allocator (SL404)
    def allocated(self, key: tuple, stream: str, label: str, node: cst.CSTNode, after_entry: bool = False) -> None:
        self.allocs[key] = Alloc(stream, label, node, after_entry=after_entry)

    def used(self, key: tuple, ev: Ev) -> None:
        alloc = self.allocs.get(key)
        if alloc is not None and ev.stream != alloc.stream and ev.stream != HOST:
            if all(u.stream != ev.stream for u in alloc.uses):
                alloc.uses.append(ev)

    def record_stream(self, key: tuple, stream: str) -> None:
        alloc = self.allocs.get(key)
        if alloc is not None:
            alloc.recorded.add(stream)

    def released(self, key: tuple, node: cst.CSTNode, label: str) -> list[Hazard]:
        alloc = self.allocs.pop(key, None)
        if alloc is None:
            return []
        hazards = []
        for use in alloc.uses:
            if use.stream in alloc.recorded or unsure(use.stream) or unsure(alloc.stream):
                continue
            if self.host.get(use.stream, 0) >= use.clock:
                continue  # the host waited for the use to finish before the release
            if self.stream_vc(alloc.stream).get(use.stream, 0) >= use.clock:
                continue  # the allocating stream waited for the use before the release
            hazards.append(Hazard(RELEASE, use.node, alloc.node, label, alloc.stream_label, use.label,
                                  "torch", release=node, key=key))
        return hazards


def _axis(region: str) -> int:
    """The axis a region's slice is along (`@2:a:b`); plain regions are along the first."""
    if region.startswith("@"):
        return int(region[1:].split(":", 1)[0])
    return 0
