"""Happens-before as PyTorch's CUDA sanitizer orders it: a conflict only where even the may clock shows no order."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from operator import itemgetter
from enum import Enum
from typing import Iterable, Optional

from streamlint.model.domain.paths import Path
from streamlint.model.domain.persistent import EMPTY, PMap
from streamlint.model.domain.sides import configuration_sides, exclusive
from streamlint.model.domain.streams import StreamRef, StreamRefKind

# The host, as the side of an access (a host read of a copy's destination, a refill).
HOST = StreamRef(StreamRefKind.PATH, "host")
# In a clock: the access is complete as far as the host knows (on some path; in the must clock, on every path).
DONE = StreamRef(StreamRefKind.UNKNOWN, "done")  # (equal to no stream: a PATH ref without a path is HOST)


class ConflictKind(Enum):
    READ_AFTER_WRITE = "read_after_write"  # a stream reads what another may still write
    WRITE_AFTER_READ = "write_after_read"  # a stream overwrites what another may still read
    WRITE_AFTER_WRITE = "write_after_write"
    HOST_READ_BEFORE_SYNC = "host_read_before_sync"  # the host reads an asynchronous copy's destination
    HOST_WRITE_BEFORE_SYNC = "host_write_before_sync"  # the host refills what a queued copy may still read
    RELEASE_WITHOUT_RECORD = "release_without_record"  # memory freed for reuse while another stream may use it


@dataclass(frozen=True)
class AccessEvent:
    """One access by one operation."""

    path: Path
    write: bool
    stream: StreamRef  # HOST for the host's own reads and writes
    site: str  # the operation's site key ("qualname#ordinal")
    chain: tuple[str, ...] = ()  # call sites it came through, outermost first (provenance)
    host_memory: bool = False  # an access to host memory (the host side of a copy, the host's own)
    # an entry assumption (a parameter made on the caller's current stream): meets device memory only
    assumed: bool = False
    branch: tuple[str, ...] = ()  # the sides of the tests it ran under (Effect.branch)
    handed: tuple[StreamRef, ...] = ()  # (Effect.handed)
    # made on one of two streams by the path taken (D-14): `stream` this path's, `either` the may-set
    either: Optional[StreamRef] = field(default=None, metadata={"omit_default": True})
    # memory of a device not told when accessed: a later access to it as device memory tells (D-11)
    untold: bool = field(default=False, metadata={"omit_default": True})


def on_paths(access: AccessEvent) -> tuple[AccessEvent, ...]:
    """The access once per stream it may run on (one of two streams by the path taken)."""
    if access.stream.kind is not StreamRefKind.EITHER:
        return (access,)
    return tuple(replace(access, stream=m, either=access.stream) for m in access.stream.members)


def _on_paths_after(earlier: AccessEvent, later: AccessEvent) -> tuple[AccessEvent, ...]:
    """The later access per stream it may run on, on the paths where `earlier` ran (D-14)."""
    if later.stream.kind is StreamRefKind.EITHER and earlier.either == later.stream:
        return (replace(later, stream=earlier.stream, either=later.stream),)
    return on_paths(later)


def access_key(a: AccessEvent) -> tuple:
    """What names one pending access in the order (and in what an event captured)."""
    return (a.site, a.chain, a.path, a.stream, a.write)


# The clocks' stream sets and the accesses' streams, interned so that clocks compare by identity.
_STREAM_SETS: dict = {}
_STREAMS: dict = {}


@dataclass(frozen=True)
class Pending:
    access: AccessEvent
    seen: frozenset[StreamRef]  # the may clock: streams ordered after it on some path (and DONE)
    seen_on_every_path: frozenset[StreamRef]  # the must clock
    # the may clock of waits made under sides of configuration tests (D-18): (stream, sides)
    seen_under: frozenset = field(default=frozenset(), metadata={"omit_default": True})

    def __post_init__(self) -> None:
        for name in ("seen", "seen_on_every_path", "seen_under"):
            value = getattr(self, name)
            object.__setattr__(self, name, _STREAM_SETS.setdefault(value, value))

    @cached_property
    def key(self) -> tuple:
        return access_key(self.access)

    @cached_property
    def clock(self) -> tuple:
        """What an ordering operation decides by: equal clocks move alike (by identity, for speed)."""
        stream = _STREAMS.setdefault(self.access.stream, self.access.stream)
        return (id(self.seen), id(self.seen_on_every_path), id(stream), id(self.seen_under))

    def __getstate__(self) -> dict:
        """Without the cached clock: its identities mean nothing in a copy or another process."""
        return {name: value for name, value in self.__dict__.items() if name not in ("clock", "key")}

    @property
    def done(self) -> bool:
        return DONE in self.seen

    def ordered_before(self, stream: StreamRef, branch: Iterable[str] = ()) -> bool:
        """Ordered before `stream`'s later work on the sides `branch` (an exclusive side's wait orders none: D-18)."""
        if stream.kind is StreamRefKind.EITHER:
            return any(self.ordered_before(m, branch) for m in stream.members)  # on some path: the may clock
        if self.done or stream == self.access.stream or stream.pools_with(self.access.stream):
            return True  # (a pool of streams and one of its items: what one names may be the other)
        return _reaches(stream, self.seen) or _reaches(stream, (s for s, sides in self.seen_under
                                                               if not exclusive(sides, branch)))

    def with_seen(self, stream: StreamRef, may_only: bool = False, sides: frozenset = frozenset()) -> "Pending":
        """Ordered before `stream`'s later work (of one of two, or under configuration `sides`: the may clock only)."""
        streams, must = frozenset(stream.paths), not may_only and stream.kind is not StreamRefKind.EITHER
        if streams <= self.seen and (not must or streams <= self.seen_on_every_path):
            return self
        seen, under = self.seen | streams, self.seen_under
        if sides:
            seen, under = _bounded(self.seen, under | {(s, sides) for s in streams})
            if under == self.seen_under and seen == self.seen and (not must or streams <= self.seen_on_every_path):
                return self
        return Pending(self.access, seen, self.seen_on_every_path | streams if must else self.seen_on_every_path,
                       under)

    def completed(self, every_path: bool = True) -> "Pending":
        return self.with_seen(DONE, may_only=not every_path)


@dataclass(frozen=True)
class Conflict:
    kind: ConflictKind
    earlier: AccessEvent
    later: AccessEvent
    # how many accesses to the root were queued after the earlier one (for naming it, not identity)
    behind: int = field(default=0, compare=False)


# The conflict of an earlier and a later access, by (earlier writes, later writes, later is the host's).
_KINDS = {(True, False, True): ConflictKind.HOST_READ_BEFORE_SYNC, (False, True, True): ConflictKind.HOST_WRITE_BEFORE_SYNC,
          (True, True, False): ConflictKind.WRITE_AFTER_WRITE, (True, False, False): ConflictKind.READ_AFTER_WRITE,
          (False, True, False): ConflictKind.WRITE_AFTER_READ}


def _assumed_closer(assumed: AccessEvent, access: AccessEvent, same_root: list) -> bool:
    """Another entry assumption made for memory within `assumed`'s that `access` touches (D-16)."""
    depth = len(assumed.path.steps)
    return any(q.access.assumed and len(q.access.path.steps) > depth and q.access.path.may_alias(access.path)
               and assumed.path.may_alias(q.access.path) and len(q.access.path.steps) <= len(access.path.steps)
               for q in same_root)


def _may_differ(a: StreamRef, b: StreamRef) -> bool:
    if a == HOST or b == HOST:
        return a != b
    return a.distinct_from(b)


class Order:
    """The pending accesses by number, root and clock (an operation costs what it touches), and events' captures."""

    __slots__ = ("seq", "roots", "by_clock", "next", "events", "kept_for", "_pending")

    def __init__(self, pending: tuple = (), events: tuple = (), kept_for: frozenset = frozenset()) -> None:
        seq: dict = {}
        roots: dict = {}
        clocks: dict = {}
        for n, p in enumerate(pending):
            seq[n] = p
            roots.setdefault(p.access.path.root, []).append(n)
            clocks.setdefault(p.clock, {})[n] = p
        self.seq = PMap(seq)  # number -> access
        self.roots = PMap({r: tuple(ns) for r, ns in roots.items()})  # root -> its accesses' numbers, ascending
        self.by_clock = PMap({c: PMap(group) for c, group in clocks.items()})  # clock -> {number: access}
        self.next = len(seq)  # the number the next access gets
        self.events: tuple[tuple[Path, frozenset], ...] = events  # (event path, keys of the accesses it orders)
        self.kept_for: frozenset[tuple[Path, StreamRef]] = kept_for
        self._pending: Optional[tuple] = tuple(pending)

    @property
    def pending(self) -> tuple[Pending, ...]:
        if self._pending is None:
            self._pending = tuple(p for _, p in sorted(self.seq.items(), key=itemgetter(0)))
        return self._pending

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Order):
            return NotImplemented
        if self.events != other.events or self.kept_for != other.kept_for or len(self.seq) != len(other.seq):
            return False
        return self.seq == other.seq or self.pending == other.pending  # the first: numbered alike

    def __hash__(self) -> int:
        return hash((self.pending, self.events, self.kept_for))

    def __reduce__(self) -> tuple:
        """Without the maps: the clocks hold identities, which mean nothing in a copy or another process."""
        return (Order, (self.pending, self.events, self.kept_for))

    def __repr__(self) -> str:
        return f"Order(pending={self.pending!r}, events={self.events!r}, kept_for={self.kept_for!r})"

    def streams(self) -> set[StreamRef]:
        """The streams of the pending accesses."""
        return {next(iter(group.values())).access.stream for group in self.by_clock.values()}

    def has_root(self, root) -> bool:
        """Some pending access is to memory of `root`."""
        return root in self.roots

    def _same_root(self, root) -> list:
        """(number, access) of the accesses to memory of `root`, in the order they joined."""
        return [(n, self.seq[n]) for n in self.roots.get(root, ())]

    def _made(self, **changed) -> "Order":
        """This order with some of its slots changed (the accesses in order: again once they moved)."""
        made = Order.__new__(Order)
        for name in Order.__slots__:
            setattr(made, name, changed.get(name, getattr(self, name)))
        if "seq" in changed:
            made._pending = None
        return made

    def _appended(self, p: Pending, events: tuple) -> "Order":
        n, root = self.next, p.access.path.root
        return self._made(seq=self.seq.set(n, p), roots=self.roots.set(root, self.roots.get(root, ()) + (n,)),
                          by_clock=_joined(self.by_clock, p.clock, n, p), next=n + 1, events=events)

    def _removed(self, gone: list, **changed) -> "Order":
        """Each (number, access) of `gone` leaves."""
        seq, clocks, roots, by_root = self.seq, self.by_clock, self.roots, {}
        for n, p in gone:
            seq = seq.delete(n)
            clocks = _left(clocks, p.clock, n)
            by_root.setdefault(p.access.path.root, set()).add(n)
        for root, numbers in by_root.items():
            kept = tuple(n for n in roots[root] if n not in numbers)
            roots = roots.set(root, kept) if kept else roots.delete(root)
        return self._made(seq=seq, roots=roots, by_clock=clocks, **changed)

    def _replaced(self, pairs: list) -> "Order":
        """Each (number, new): the pending access of that number given a new clock, in its place."""
        if not pairs:
            return self
        seq, clocks = self.seq, self.by_clock
        for n, new in pairs:
            clocks = _joined(_left(clocks, seq[n].clock, n), new.clock, n, new)
            seq = seq.set(n, new)
        return self._made(seq=seq, by_clock=clocks)

    # -- accesses ------------------------------------------------------------------
    def conflicts(self, access: AccessEvent) -> list[Conflict]:
        found = []
        same_root = [p for _, p in self._same_root(access.path.root)]
        for place, p in enumerate(same_root):
            kind = _KINDS.get((p.access.write, access.write, access.stream == HOST))
            if kind is None or not p.access.path.may_alias(access.path):
                continue
            if (p.access.assumed or p.access.untold) and access.host_memory:
                continue  # the entry assumption speaks of device work only; so does a device not told
            if p.access.assumed and _assumed_closer(p.access, access, same_root):
                continue  # the memory's own entry assumption speaks for it (what a producer left, D-16)
            if exclusive(p.access.branch, access.branch):
                continue  # two sides of one test of one call: never both
            # on one of two streams: a race on one path is a race (D-14)
            racing = next((a for a in _on_paths_after(p.access, access)
                           if not p.ordered_before(a.stream, access.branch) and _may_differ(p.access.stream, a.stream)), None)
            if racing is not None:
                found.append(Conflict(kind, p.access, racing, behind=len(same_root) - 1 - place))
        return found

    def add(self, access: AccessEvent) -> "Order":
        if access.stream == HOST:
            return self  # the host's own accesses are done when they happen
        if access.stream.kind is StreamRefKind.EITHER:  # pending on each path's stream (D-14)
            order = self
            for one in on_paths(access):
                order = order.add(one)
            return order
        seen = frozenset({access.stream})
        entry = Pending(access, seen, seen)
        key = entry.key
        # an event recorded before this access orders nothing about it (nor an earlier one of its key)
        events = self.events
        if any(key in captured for _, captured in events):
            events = tuple((path, captured - {key}) for path, captured in events)
        replaced = [(n, p) for n, p in self._same_root(access.path.root) if p.key == key]
        return (self._removed(replaced) if replaced else self)._appended(entry, events)

    # -- ordering operations -------------------------------------------------------
    def wait(self, waiter: StreamRef, on: StreamRef, branch: Iterable[str] = ()) -> "Order":
        """`waiter.wait_stream(on)`: the waiter's later work follows all `on` has seen."""
        return self.wait_any(waiter, (on,), branch)

    def wait_any(self, waiter: StreamRef, streams: Iterable[StreamRef], branch: Iterable[str] = ()) -> "Order":
        """`waiter` waits on each of `streams` in one pass; of one of two streams, on the may clock only (D-14)."""
        streams = tuple(streams)
        ons = frozenset(m for on in streams for m in on.paths)
        if not ons:
            return self  # no wait at all
        may_only = any(on.kind is StreamRefKind.EITHER for on in streams)
        sides = configuration_sides(branch)
        return self._moved(lambda p: _waited(p, waiter, ons, may_only, sides))

    def _moved(self, f, moves=None) -> "Order":
        """Each access given `f`, decided once per clock group: the groups whose first access `moves` (or `f` moves)."""
        moves = moves or (lambda p: f(p) is not p)
        return self._replaced([(n, new) for group in self.by_clock.values() if moves(next(iter(group.values())))
                               for n, q in group.items() if (new := f(q)) is not q])

    def record(self, event: Path, stream: StreamRef, branch: Iterable[str] = ()) -> "Order":
        branch = configuration_sides(branch)
        captured = frozenset(q.key for group in self.by_clock.values()
                             if next(iter(group.values())).ordered_before(stream, branch)
                             for q in group.values())  # a group's accesses are ordered alike
        events = tuple(e for e in self.events if e[0] != event) + ((event, captured),)
        return self._made(events=events)

    def recorded(self, event: Path) -> Optional[frozenset]:
        """What the event captured (an earlier iteration's stands for every event of its site)."""
        found = None
        for path, captured in self.events:
            if path == event or (event.root.age == 1 and event.root.kind is path.root.kind and path.same_site(event)):
                found = captured if found is None else found | captured
        return found

    def wait_event(self, waiter: StreamRef, event: Path, branch: Iterable[str] = ()) -> "Order":
        sides = configuration_sides(branch)
        return self._on_captured(event, lambda p: p.with_seen(waiter, sides=sides))

    def _on_captured(self, event: Path, f) -> "Order":
        captured = self.recorded(event)
        return self if captured is None else self._map(lambda p: f(p) if p.key in captured else p)

    def synchronize_stream(self, stream: StreamRef, branch: Iterable[str] = (), may: bool = False) -> "Order":
        """The host waits for `stream`: what it saw, or cannot tell apart from it, is done (not an exclusive side's);
        `may`: only where a value of a device not told is CUDA memory (on the may clock)."""
        every_path = stream.kind is not StreamRefKind.EITHER and not may  # one of two streams: the may clock (D-14)
        sides = configuration_sides(branch)

        def synced(p: Pending) -> bool:
            seen = any(p.ordered_before(s) or not _may_differ(p.access.stream, s) for s in stream.paths)
            return seen and p.completed(every_path) is not p

        return self._moved(lambda q: q if sides and exclusive(q.access.branch, sides) else q.completed(every_path),
                           synced)

    def synchronize_event(self, event: Path) -> "Order":
        return self._on_captured(event, Pending.completed)

    def record_stream(self, path: Path, stream: StreamRef) -> "Order":
        """`t.record_stream(s)`: the allocator keeps `t` until `s`'s work queued before the release is done."""
        return self._made(kept_for=self.kept_for | {(path, stream)})

    def _recorded_for(self, p: Pending) -> bool:
        """A `record_stream(s)` keeps the memory until what `s` queued by the release is done: the accesses on `s`,
        and those `s` waited for (the allocator records its event on `s` when the memory is freed)."""
        return any(path.may_alias(p.access.path) and (p.access.stream in stream.paths or p.ordered_before(stream))
                   for path, stream in self.kept_for)

    def release(self, release: AccessEvent) -> tuple["Order", list[Conflict]]:
        """`release.path` goes back to its stream's allocator: an access that stream did not see, nor told, races."""
        racing, gone = [], []
        for n, p in self._same_root(release.path.root):
            if not release.path.may_alias(p.access.path):
                continue
            gone.append((n, p))
            covered = p.ordered_before(release.stream) or self._recorded_for(p) or p.access.untold
            if not covered and _may_differ(p.access.stream, release.stream):
                racing.append(p)
        # (named first: a use whose stream saw every other one, where one `record_stream` covers them all)
        found = [Conflict(ConflictKind.RELEASE_WITHOUT_RECORD, p.access, release,
                          behind=0 if all(q.ordered_before(p.access.stream) for q in racing) else 1) for p in racing]
        kept_for = frozenset(r for r in self.kept_for if not release.path.may_alias(r[0]))
        return self._removed(gone, kept_for=kept_for), found

    def told(self, path: Path) -> "Order":
        """The memory at `path` shown to be device memory: so were its accesses made untold (D-17)."""
        return self._map(lambda p: replace(p, access=replace(p.access, untold=False))
                         if p.access.untold and path.may_alias(p.access.path) else p)

    def replaced_at(self, path: Path) -> "Order":
        """Another value stored at `path`: the entry assumption no longer speaks of what it holds."""
        gone = [(n, p) for n, p in self._same_root(path.root) if p.access.assumed and p.access.path == path]
        return self._removed(gone) if gone else self

    def on_side(self, side: str, conjuncts: tuple = ()) -> "Order":
        """The order on one side of a configuration test (D-18); `conjuncts`: the (true, false) sides of `a and b`."""
        if not side and not conjuncts:
            return self
        gone = [(n, p) for n, p in self.seq.items() if p.access.either is not None and p.access.either.sides
                and (_chosen_elsewhere(p.access, side) if side else _off_the_other(p.access, conjuncts))]
        return self._removed(gone) if gone else self

    def synchronize_device(self, branch: Iterable[str] = ()) -> "Order":
        """Everything pending is done but work on a configuration side exclusive with the sync's (D-18)."""
        sides = configuration_sides(branch)
        return self._map(lambda p: p if sides and exclusive(p.access.branch, sides) else p.completed())

    def renamed(self, rename) -> "Order":
        """Every path renamed (a loop's back edge: ring slots shift, the body's allocations age)."""
        pending = tuple(replace(p, access=replace(p.access, path=rename(p.access.path))) for p in self.pending)
        events = tuple((rename(path), frozenset((k[0], k[1], rename(k[2]), k[3], k[4]) for k in captured))
                       for path, captured in self.events)
        return Order(pending, events, frozenset((rename(path), stream) for path, stream in self.kept_for))

    def _map(self, f) -> "Order":
        return self._replaced([(n, new) for n, p in self.seq.items() if (new := f(p)) is not p])

    # -- lattice -------------------------------------------------------------------
    def join(self, other: "Order", every_path: bool = False) -> "Order":
        """The order after either of two paths; `every_path`: both are taken (a loop counter's test): must is may."""
        if self == other:
            return self
        mine = {p.key: p for p in self.pending}
        theirs = {p.key: p for p in other.pending}
        merged = []
        for key in list(mine) + [k for k in theirs if k not in mine]:
            a, b = mine.get(key), theirs.get(key)
            joined = _join_pending(a, b)
            if every_path and a is not None and b is not None:
                joined = replace(joined, seen=joined.seen_on_every_path, seen_under=frozenset())
            merged.append(joined)
        return Order(tuple(merged), _join_events(self.events, other.events), self.kept_for | other.kept_for)


def _joined(clocks: PMap, clock: tuple, n: int, p: Pending) -> PMap:
    return clocks.set(clock, clocks.get(clock, EMPTY).set(n, p))


def _left(clocks: PMap, clock: tuple, n: int) -> PMap:
    group = clocks[clock].delete(n)
    return clocks.set(clock, group) if group else clocks.delete(clock)


def _off_the_other(access: AccessEvent, conjuncts: tuple) -> bool:
    return any(_chosen_elsewhere(access, off) and all(t in access.branch for t, _ in conjuncts if t != on)
               for on, off in conjuncts)


def _chosen_elsewhere(access: AccessEvent, side: str) -> bool:
    either = access.either
    member_side = dict(zip(either.members, either.sides)).get(access.stream, "") if either is not None else ""
    return bool(member_side) and exclusive((member_side,), (side,))


def _join_pending(a: Optional[Pending], b: Optional[Pending]) -> Pending:
    if a is None or b is None:
        only = a or b
        assert only is not None
        return only  # pending on one path only: its order there is its order

    seen, under = _bounded(a.seen | b.seen, a.seen_under | b.seen_under)
    return Pending(a.access, seen, a.seen_on_every_path & b.seen_on_every_path, under)


# At most this many entries of a sided may clock (D-18); past it they count on every side.
_MAX_SIDED = 8


def _bounded(seen: frozenset, under: frozenset) -> tuple[frozenset, frozenset]:
    """The may clock and its sided part, without entries the plain clock already has, within the bound."""
    under = frozenset(e for e in under if e[0] not in seen)
    if len(under) > _MAX_SIDED:
        return seen | {s for s, _ in under}, frozenset()
    return seen, under


def _reaches(stream: StreamRef, seen: Iterable[StreamRef]) -> bool:
    """`stream`'s later work follows what these streams have seen (one, a pool's item, a default's alias)."""
    return any(s == stream or s.pools_with(stream) or s.may_be_the_default_of(stream) for s in seen)


def _waited(p: Pending, waiter: StreamRef, ons: frozenset, may_only: bool, sides: frozenset) -> Pending:
    """`p` after `waiter` waits for `ons` under the configuration `sides`: where one of them saw it."""
    if p.done or p.access.stream in ons or not ons.isdisjoint(p.seen) or not ons.isdisjoint(p.seen_on_every_path) \
            or any(on.pools_with(p.access.stream) for on in ons):
        return p.with_seen(waiter, may_only, sides)
    for stream, under in p.seen_under:
        if stream in ons and not exclusive(under, sides):
            p = p.with_seen(waiter, True, under | sides)
    return p


def _join_events(a: Iterable, b: Iterable) -> tuple:
    merged: dict = {}
    for path, captured in list(a) + list(b):
        merged[path] = merged.get(path, frozenset()) | captured
    return tuple(merged.items())
