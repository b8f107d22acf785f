"""Stream references: the stream work is queued on, as a symbol each caller resolves at the call (`apply`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from enum import Enum
from typing import Iterable, Optional

from streamlint.model.domain.paths import Path, Root, RootKind, cached_hash
from streamlint.model.domain.sides import exclusive


class StreamRefKind(Enum):
    AMBIENT = "ambient"  # the framework's current stream when the function was entered
    LEGACY = "legacy"  # the legacy default stream (stream 0): a barrier for blocking streams
    PER_THREAD = "per_thread"  # the per-thread default stream
    PATH = "path"  # the stream held at an access path (a parameter, `self._stream`, a local)
    CREATED = "created"  # a new stream made at `site`
    UNKNOWN = "unknown"  # no evidence: hazards against it are unsure (silent)
    # one of two streams by the path taken: a may-set of two refs, `members` (D-14)
    EITHER = "either"
    # the current stream of the project function `site` when it ran (D-16); another stream than
    # one only on the code's word (`unlike`)
    PRODUCED = "produced"


@cached_hash
@dataclass(frozen=True, eq=False)
class StreamRef:
    kind: StreamRefKind
    framework: str = ""  # "torch", "cupy", "numba", "cuda": whose current stream AMBIENT is
    path: Optional[Path] = None
    site: str = ""  # creation site key (for a PATH: where the stream held there was made)
    blocking: bool = True  # a blocking stream synchronizes with the legacy default stream
    # Another stream than the current one at entry, on evidence (made by the program for its own
    # work, or entered by the code): evidence, no part of equality
    fresh: bool = field(default=False, compare=False)
    members: tuple = field(default=(), metadata={"omit_default": True})  # an EITHER's two streams
    # An EITHER's members' sides of a configuration test that chose each ("" when not one; D-18)
    sides: tuple = field(default=(), compare=False, repr=False, metadata={"omit_default": True})
    # Streams the code says this one is not (a PRODUCED stream, D-16): evidence, no part of equality
    unlike: tuple = field(default=(), compare=False, metadata={"omit_default": True})

    @cached_property
    def _id(self) -> tuple:
        """What makes two refs one stream: a path's stream is one whatever each walk knew of it."""
        if self.kind is StreamRefKind.PATH:
            return (self.kind, self.path)
        if self.kind is StreamRefKind.EITHER:
            return (self.kind, frozenset(self.members))
        return (self.kind, self.framework, self.path, self.site, self.blocking)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, StreamRef):
            return NotImplemented
        return self._id == other._id

    @staticmethod
    def ambient(framework: str) -> "StreamRef":
        return StreamRef(StreamRefKind.AMBIENT, framework)

    @staticmethod
    def legacy() -> "StreamRef":
        return StreamRef(StreamRefKind.LEGACY)

    @staticmethod
    def at(path: Path) -> "StreamRef":
        return StreamRef(StreamRefKind.PATH, "", path)

    @staticmethod
    def created(site: str, framework: str, blocking: bool = True) -> "StreamRef":
        return StreamRef(StreamRefKind.CREATED, framework, None, site, blocking, True)

    @staticmethod
    def produced(producer: str, framework: str) -> "StreamRef":
        """The current stream of the project function `producer` when it ran (D-16)."""
        return StreamRef(StreamRefKind.PRODUCED, framework, None, producer)

    @staticmethod
    def pool_item(made: "StreamRef", index) -> "StreamRef":
        """An item of a pool of streams made one per item at `made`'s site, drawn by `index`."""
        return StreamRef(StreamRefKind.PATH, made.framework, Path(Root.fresh(made.site)).element(index), made.site,
                         made.blocking, True)

    @property
    def known(self) -> bool:
        return self.kind is not StreamRefKind.UNKNOWN

    @property
    def paths(self) -> tuple["StreamRef", ...]:
        """The streams it may be, one per path to here: an EITHER's members, or itself."""
        return self.members if self.kind is StreamRefKind.EITHER else (self,)

    @property
    def context_free(self) -> bool:
        """Names the same stream whoever calls: a hazard between two such refs needs no caller."""
        if self.kind is StreamRefKind.EITHER:
            return all(m.context_free for m in self.members)
        return self.kind in (StreamRefKind.LEGACY, StreamRefKind.PER_THREAD, StreamRefKind.CREATED)

    def distinct_from(self, other: "StreamRef") -> bool:
        """Known to be two different streams (a cross-stream hazard's condition); of one of two, per path (D-14)."""
        if not (self.known and other.known) or self == other or StreamRefKind.EITHER in (self.kind, other.kind):
            return False
        if StreamRefKind.PRODUCED in (self.kind, other.kind):  # another stream only on the code's word
            return other in self.unlike or self in other.unlike
        if self.pool_of(other) or other.pool_of(self):
            return False  # an item of a pool of streams, and the pool's streams as one (`for s in streams`)
        if StreamRefKind.CREATED in (self.kind, other.kind):
            return True  # a stream made here is none that existed before
        if (self.fresh and other.kind in EXISTING) or (other.fresh and self.kind in EXISTING):
            return True  # a stream the program made for its own work is not the caller's current one, nor a default stream
        if {self.kind, other.kind} == {StreamRefKind.LEGACY, StreamRefKind.PER_THREAD}:
            return True
        if self.kind is other.kind is StreamRefKind.PATH and self.path is not None and other.path is not None \
                and self.path.other_item(other.path):
            return True  # two items of one pool of streams (`streams[k % 2]`, `streams[(k + 1) % 2]`)
        if self.fresh and other.fresh:
            # two side streams of the program's: at two creation sites, or at two paths where the
            # code entered them; one stream kept at two attributes (one site) is one stream
            return not (self.site and other.site and self.site == other.site)
        return False  # the caller's current stream may be the one a parameter holds: ask the caller

    def pool_of(self, item: "StreamRef") -> bool:
        """This stream stands for every stream of a pool (its site, or a list's joined by "|"), `item` one of them."""
        if self.kind is not StreamRefKind.CREATED:
            return False
        if item.kind is StreamRefKind.CREATED:
            return item.site != self.site and item.site in self.site.split("|")
        if item.kind is not StreamRefKind.PATH or item.path is None or item.path.root.kind is not RootKind.FRESH:
            return False
        pool = item.path.root.site
        return pool == self.site or self.site in pool.split("|")

    def pools_with(self, other: "StreamRef") -> bool:
        """A pool and one of its items, or two items one under an index not told: one may be the other (D-1)."""
        if self.pool_of(other) or other.pool_of(self):
            return True
        return self.kind is other.kind is StreamRefKind.PATH and self.path is not None and other.path is not None \
            and self.path.maybe_item(other.path)

    @staticmethod
    def listed(refs: list) -> Optional["StreamRef"]:
        """The streams a list written out holds, as one pool: None unless each is another stream the program made."""
        sites = [r.site for r in refs if r is not None and r.kind is StreamRefKind.CREATED and "|" not in r.site]
        if len(refs) < 2 or len(sites) != len(refs) or len(set(sites)) != len(sites):
            return None
        frameworks = {r.framework for r in refs}
        return StreamRef(StreamRefKind.CREATED, frameworks.pop() if len(frameworks) == 1 else "", None,
                         "|".join(sites), all(r.blocking for r in refs), True)

    def entered(self) -> "StreamRef":
        """Entered by the code: an object's stream (at an attribute) is a side stream, a parameter's maybe not."""
        if self.kind is StreamRefKind.EITHER:
            return replace(self, members=tuple(m.entered() for m in self.members))
        if self.kind is not StreamRefKind.PATH or self.path is None or not self.path.steps:
            return self
        return replace(self, fresh=True)

    def may_be_the_default_of(self, other: "StreamRef") -> bool:
        """Two frameworks' names that may be one stream (PyTorch's current one is the legacy one unless chosen)."""
        return (self.kind in EXISTING and other.kind in EXISTING and self != other
                and not self.distinct_from(other))

    def joined(self, other: "StreamRef") -> Optional["StreamRef"]:
        """The stream as two paths saw it: one, or the may-set of two (D-14); None past two or where one knows none."""
        members = list(self.paths)
        for ref in other.paths:
            same = next((n for n, m in enumerate(members) if m == ref), None)
            if same is None:
                members.append(ref)
                continue
            merged = members[same]._merged(ref)
            if merged is None:
                return None
            members[same] = merged
        return StreamRef.either_of(members)

    @staticmethod
    def either_of(refs) -> Optional["StreamRef"]:
        """One of these streams by the path taken: the one, the may-set of two, None for more or unknown."""
        members = list(dict.fromkeys(m for r in refs for m in r.paths))
        if len(members) == 1:
            return members[0]
        if len(members) != 2 or not all(m.known for m in members) or any(m.framework == "host" for m in members):
            return None
        members.sort(key=lambda m: (m.kind.value, m.framework, m.spell(), m.site))
        return StreamRef(StreamRefKind.EITHER, members=tuple(members))

    def chosen_by(self, sides: dict) -> "StreamRef":
        """One of two streams, each chosen on one side of a configuration test: {member: side}."""
        if self.kind is not StreamRefKind.EITHER or not any(sides.get(m) for m in self.members):
            return self
        return replace(self, sides=tuple(sides.get(m, "") for m in self.members))

    def on_sides(self, branch: Iterable[str]) -> "StreamRef":
        """The stream of work on the sides `branch`: of two chosen by a configuration test, the one not excluded."""
        if not self.sides or not branch:
            return self
        kept = [m for m, side in zip(self.members, self.sides) if not (side and exclusive((side,), branch))]
        return kept[0] if len(kept) == 1 else self

    def _merged(self, other: "StreamRef") -> Optional["StreamRef"]:
        """One stream seen on two paths with more or less evidence; None when they disagree on its framework."""
        if self.kind is not StreamRefKind.PATH or other.kind is not StreamRefKind.PATH:
            return self
        if self.framework and other.framework and self.framework != other.framework:
            return None
        known = self if self.framework else other
        site = self.site if self.site == other.site else ""
        return replace(known, site=site, fresh=self.fresh and other.fresh)

    def spell(self) -> str:
        if self.kind in _SPELLED:
            return _SPELLED[self.kind]
        if self.kind is StreamRefKind.PATH and self.path is not None and self.path.root.kind is RootKind.FRESH:
            return f"the stream {self.path.spell(root=False)} of the pool made at {self.path.root.site}"
        if self.kind is StreamRefKind.PATH and self.path is not None:
            return self.path.spell()
        if self.kind is StreamRefKind.CREATED:
            return f"the stream made at {self.site}"
        if self.kind is StreamRefKind.EITHER:
            return " or ".join(m.spell() for m in self.members)
        if self.kind is StreamRefKind.PRODUCED:
            return f"the stream `{self.site.rpartition('.')[2]}` ran on"
        return "an unknown stream"


UNKNOWN_STREAM = StreamRef(StreamRefKind.UNKNOWN)
_SPELLED = {StreamRefKind.AMBIENT: "the current stream", StreamRefKind.LEGACY: "the default stream",
            StreamRefKind.PER_THREAD: "the per-thread default stream"}

# Streams that exist before any code runs: the current stream at entry and the two default streams.
EXISTING = frozenset({StreamRefKind.AMBIENT, StreamRefKind.LEGACY, StreamRefKind.PER_THREAD})
