"""Typed access paths: a root, then fields, elements and regions; two may alias when one is the other's prefix."""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum
from typing import Optional, Union


def cached_hash(cls: type) -> type:
    """The hash of what makes two equal, once per instance and not pickled (another process hashes otherwise)."""
    names = tuple(f.name for f in fields(cls) if f.compare and (f.hash is None or f.hash))
    own = hasattr(cls, "_id")  # (a class's own identity, else its compared fields)

    def __hash__(self) -> int:
        try:
            return self.__dict__["_hash"]
        except KeyError:
            value = hash(self._id if own else tuple(getattr(self, name) for name in names))
            self.__dict__["_hash"] = value
            return value

    def __getstate__(self) -> dict:
        return {name: value for name, value in self.__dict__.items() if name not in ("_hash", "_id")}

    cls.__hash__ = __hash__  # type: ignore[method-assign]
    cls.__getstate__ = __getstate__  # type: ignore[attr-defined]
    return cls


CELL = "cell:"  # a closure's cell among its parameters (`cell:buffers`: the enclosing function's `buffers`, D-21)


class RootKind(Enum):
    PARAM = "param"  # the function's parameter `index` (named `name`)
    SELF = "self"  # the receiver of a method
    LOCAL = "local"
    GLOBAL = "global"  # a module-level name, `name` qualified
    RETURN = "return"  # the value a call returns (`name`: the callee)
    FRESH = "fresh"  # memory allocated at `site` (a call site key)


@cached_hash
@dataclass(frozen=True)
class Root:
    kind: RootKind
    name: str = ""
    index: int = -1  # parameter position
    site: str = ""  # allocation site key ("qualname#ordinal")
    age: int = 0  # FRESH: 0 for this loop iteration's allocation, 1 for an earlier iteration's

    @staticmethod
    def param(index: int, name: str) -> "Root":
        return Root(RootKind.PARAM, name, index)

    @staticmethod
    def self_() -> "Root":
        return Root(RootKind.SELF, "self")

    @staticmethod
    def local(name: str) -> "Root":
        return Root(RootKind.LOCAL, name)

    @staticmethod
    def global_(name: str) -> "Root":
        return Root(RootKind.GLOBAL, name)

    @staticmethod
    def fresh(site: str) -> "Root":
        return Root(RootKind.FRESH, "", -1, site)

    def spell(self) -> str:
        if self.kind is RootKind.PARAM:
            return self.name.removeprefix(CELL)  # (a closure's cell is the enclosing function's name)
        if self.kind is RootKind.FRESH:
            return f"<allocation {self.site}{' (earlier iteration)' if self.age else ''}>"
        if self.kind is RootKind.RETURN:
            return f"{self.name}()"
        return self.name


# The lower end of a view's region: the region is named by the site of its slicing.
VIEW = "<view at>"
# The two cuts of a buffer by a cursor kept on an object (D-30): `[k : k + n]` fills at it, `[:k]` is what was filled.
FILL, PREFIX = "fill at", "prefix up to"
MERGED = "|"  # between the sites of memory (or of a view) made on one of several paths


def outermost_site(site: str) -> str:
    """The call site in this function of a site a callee brought in ("m.f#3>m.g#1": "m.f#3")."""
    qualname, mark, rest = site.partition("#")
    return qualname + mark + rest.split(">", 1)[0]


class IndexKind(Enum):
    CONST = "const"  # x[3], x["key"]
    SLOT = "slot"  # x[(k + offset) % modulus]
    ANY = "any"  # x[i] with nothing known of i
    ITEMS = "items"  # every element (a loop over the container, a queue's items)
    REGION = "region"  # x[lo:hi], `const` = (lo, hi): names or numbers, None for an open end


@cached_hash
@dataclass(frozen=True)
class Index:
    kind: IndexKind
    const: Union[int, str, None] = None
    symbol: str = ""
    modulus: int = 0
    offset: int = 0

    @staticmethod
    def const_(value: Union[int, str]) -> "Index":
        return Index(IndexKind.CONST, value)

    @staticmethod
    def slot(symbol: str, modulus: int, offset: int = 0) -> "Index":
        return Index(IndexKind.SLOT, None, symbol, modulus, offset % modulus)

    @staticmethod
    def any_() -> "Index":
        return Index(IndexKind.ANY)

    @staticmethod
    def region(lower, upper) -> "Index":
        return Index(IndexKind.REGION, (lower, upper))

    @staticmethod
    def view(site: str, cursor: tuple = ()) -> "Index":
        """A slicing at `site`, bounds unknown: the same view is the same memory, another none; cursor cuts meet."""
        return Index(IndexKind.REGION, (VIEW, site) + tuple(cursor))

    @property
    def taken_at(self) -> str:
        """The site of a view's slicing ("" for any other index)."""
        if self.kind is IndexKind.REGION and isinstance(self.const, tuple) and self.const[0] == VIEW:
            return str(self.const[1])
        return ""

    @staticmethod
    def items() -> "Index":
        return Index(IndexKind.ITEMS)

    def may_alias(self, other: "Index") -> bool:
        if IndexKind.ITEMS in (self.kind, other.kind):
            return True  # every element meets any element
        if self.kind is other.kind is IndexKind.ANY:
            return True  # the container's weak slot: what is stored and read under keys the text does not tell (D-11)
        if self.kind is not other.kind or IndexKind.ANY is self.kind:
            return False  # an unknown index aliases nothing: silence over guessing
        if self.taken_at and other.taken_at:  # a view taken at either of two sites (a join) meets each
            return bool(set(self.taken_at.split(MERGED)) & set(other.taken_at.split(MERGED))) \
                or _cursor_cuts_meet(self.const[2:], other.const[2:])
        if self.kind in (IndexKind.CONST, IndexKind.REGION):
            return self.const == other.const  # two slices meet when they are the same slice
        return (self.symbol, self.modulus, self.offset) == (other.symbol, other.modulus, other.offset)

    def spell(self) -> str:
        if self.kind is IndexKind.CONST:
            return f"[{self.const!r}]"
        if self.taken_at:
            cut = self.const[2:]  # (D-30)
            return f"[<{cut[0]} {cut[1]}>]" if cut else "[<view>]"
        if self.kind is IndexKind.REGION and isinstance(self.const, tuple):
            lower, upper = ("" if b is None else b for b in self.const)
            return f"[{lower}:{upper}]"
        if self.kind is IndexKind.SLOT:
            shift = f" + {self.offset}" if self.offset else ""
            return f"[({self.symbol}{shift}) % {self.modulus}]"
        return "[...]" if self.kind is IndexKind.ITEMS else "[?]"


def _cursor_cuts_meet(mine: tuple, theirs: tuple) -> bool:
    """The fill at a cursor kept on an object lies in a prefix up to it taken later, or before a reset (D-30)."""
    return bool(mine and theirs) and {mine[0], theirs[0]} == {FILL, PREFIX} and mine[1] == theirs[1]


Step = Union[str, Index]  # an attribute name or an element


@cached_hash
@dataclass(frozen=True)
class Path:
    root: Root
    steps: tuple[Step, ...] = ()

    def attr(self, name: str) -> "Path":
        return Path(self.root, self.steps + (name,))

    def element(self, index: Index) -> "Path":
        return Path(self.root, self.steps + (index,))

    @property
    def parent(self) -> Optional["Path"]:
        return Path(self.root, self.steps[:-1]) if self.steps else None

    def rebased(self, root_path: "Path") -> "Path":
        """This path with its root replaced by `root_path` (a parameter by the argument)."""
        return Path(root_path.root, root_path.steps + self.steps)

    def aged(self, in_loop) -> "Path":
        """The same memory seen from the next iteration: the body's allocations are an earlier iteration's."""
        root = self.root
        steps = self.steps
        if any(isinstance(s, Index) and s.taken_at for s in steps):
            # a view the loop body takes is somewhere else in the next iteration: unknown
            steps = tuple(Index.any_() if isinstance(s, Index) and s.taken_at and any(map(in_loop, s.taken_at.split("|")))
                          else s for s in steps)
        if root.kind is not RootKind.FRESH or root.age or not any(map(in_loop, outermost_site(root.site).split("|"))):
            return self if steps == self.steps else Path(root, steps)
        return Path(Root(root.kind, root.name, root.index, root.site, 1), steps)

    def shifted(self, symbol: str, by: int) -> "Path":
        """The same slots of `symbol` seen from an iteration `by` steps later (`k` renamed `k + by`)."""
        return self._slots_mapped(symbol, lambda s: Index.slot(symbol, s.modulus, s.offset - by))

    def forgotten(self, symbol: str) -> "Path":
        """The slots of `symbol` once it was set to a value not told: unknown indexes."""
        return self._slots_mapped(symbol, lambda s: Index.any_())

    def resymbolled(self, old: str, new: str) -> "Path":
        """The slots of a counter named from a callee's `self` (`self.i`, `self.i.j`), named from the caller."""
        return self._slots_mapped(old, lambda s: Index.slot(new + s.symbol[len(old):], s.modulus, s.offset), True)

    def _slots_mapped(self, symbol: str, f, under: bool = False) -> "Path":
        """Each slot step of `symbol` (`under`: or of a name under it, `symbol.x`) given `f`."""

        def of(s: Step) -> bool:
            return isinstance(s, Index) and s.kind is IndexKind.SLOT and (
                s.symbol == symbol or (under and s.symbol.startswith(symbol + ".")))

        if not any(map(of, self.steps)):
            return self
        return Path(self.root, tuple(f(s) if of(s) else s for s in self.steps))

    def _items_of_one(self, other: "Path") -> Optional[tuple]:
        """The two indexes of two paths that differ in one index only (items of one collection)."""
        if self.root != other.root or len(self.steps) != len(other.steps):
            return None
        differ = [(a, b) for a, b in zip(self.steps, other.steps) if a != b]
        return differ[0] if len(differ) == 1 and all(isinstance(step, Index) for step in differ[0]) else None

    def other_item(self, other: "Path") -> bool:
        """Two items of one collection certainly not one: a counter's ring slots at other offsets, two constants."""
        a, b = self._items_of_one(other) or (None, None)
        if a is None:
            return False
        if a.kind is IndexKind.SLOT and b.kind is IndexKind.SLOT:
            return (a.symbol, a.modulus) == (b.symbol, b.modulus)
        return a.kind is IndexKind.CONST and b.kind is IndexKind.CONST

    def same_site(self, other: "Path") -> bool:
        """The same steps into memory allocated at one site (of any iteration)."""
        return self.steps == other.steps and self.root.site != "" and self.root.site == other.root.site

    def maybe_item(self, other: "Path") -> bool:
        """Two items of one collection, one under an index the text does not tell: it may be the other."""
        pair = self._items_of_one(other)
        return pair is not None and IndexKind.ANY in (pair[0].kind, pair[1].kind)

    def may_alias(self, other: "Path") -> bool:
        """One is a prefix of the other, step by step (a whole buffer meets its elements)."""
        if self.root != other.root:
            return False
        for mine, theirs in zip(self.steps, other.steps):
            if isinstance(mine, Index) and isinstance(theirs, Index):
                if not mine.may_alias(theirs):
                    return False
            elif mine != theirs:
                return False
        return True

    def spell(self, root: bool = True) -> str:
        """As written (without `root`: its steps only)."""
        steps = "".join(step.spell() if isinstance(step, Index) else f".{step}" for step in self.steps)
        return self.root.spell() + steps if root else steps
