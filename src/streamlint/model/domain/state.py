"""The abstract state at one program point: names, heap, current streams and pending order; immutable."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from itertools import chain
from typing import Optional

from streamlint.model.api.facts import LEGACY_BY_DEFAULT
from streamlint.model.domain.order import Order
from streamlint.model.domain.paths import Index, Path, RootKind
from streamlint.model.domain.persistent import EMPTY, PMap
from streamlint.model.domain.streams import UNKNOWN_STREAM, StreamRef, StreamRefKind
from streamlint.model.domain.values import ITEMS_ONLY, NO_ITEMS, UNKNOWN, AbsValue, Memory, ValueKind


@dataclass(frozen=True)
class State:
    names: PMap = EMPTY
    heap: PMap = EMPTY  # what attribute and element paths hold, by path
    current: PMap = EMPTY  # framework -> its current stream
    order: Order = Order()
    reachable: bool = True  # False after `return`/`raise` on this path
    capturing: frozenset = frozenset()  # streams whose work is captured into a graph, and their events
    recorded: tuple[tuple[object, tuple], ...] = ()  # captured accesses, by capturing stream, then graph

    def __post_init__(self) -> None:
        for name in ("names", "heap", "current"):  # (a state built from (key, value) pairs)
            if not isinstance(getattr(self, name), PMap):
                object.__setattr__(self, name, PMap(getattr(self, name)))

    # -- reads ---------------------------------------------------------------------
    def value(self, name: str) -> AbsValue:
        return self.names.get(name, UNKNOWN)

    def at(self, path: Path) -> AbsValue:
        return self.heap.get(path, UNKNOWN)

    def stored(self, path: Path) -> Optional[AbsValue]:
        """What was stored at `path`, None when nothing was."""
        return self.heap.get(path)

    def with_items(self, value: AbsValue) -> AbsValue:
        """A container as it leaves: its weak slot `[?]` joined into its element, so the caller's `d["k"]` finds it."""
        if value.kind is not ValueKind.CONTAINER or value.identity is None:
            return value
        slot = self.heap.get(value.identity.element(Index.any_()))
        if slot is None or slot.kind is ValueKind.UNKNOWN:
            return value
        held = [slot, *slot.positions]
        kept = {v.identity for v in held if v.identity is not None and v.kind in (ValueKind.BUFFER, ValueKind.EVENT)}
        return replace(value, element=slot if value.element is None else value.element.join(slot),
                       target="" if value.target == NO_ITEMS else value.target,
                       members=value.members | slot.members | kept)

    def items_told(self, path: Path, value: AbsValue) -> AbsValue:
        """What the code does not tell (`self.batch = next(self.loader)`, a parameter), into which it stored items
        (`self.batch[k] = v.to(device, non_blocking=True)`, `batch["img"] = batch["img"].cuda()`): as it leaves, those
        items are what is told of it (row 10.80's items-only value)."""
        if value.kind is not ValueKind.UNKNOWN or value.either or value.target:
            return value
        slot = self.heap.get(path.element(Index.any_()))
        if slot is None or (slot.kind is ValueKind.UNKNOWN and not slot.either):
            return value
        return AbsValue(identity=path, element=slot, target=ITEMS_ONLY, may_be_none=value.may_be_none)

    def current_stream(self, framework: str) -> StreamRef:
        stream = self.current.get(framework)
        return entry_stream(framework) if stream is None else stream

    # -- updates -------------------------------------------------------------------
    def _made(self, names: PMap, heap: PMap, order: Order, held) -> "State":
        """This state with its names, heap or order replaced; `held(self._held)`, when counted, is the new count."""
        made = State(names, heap, self.current, order, self.reachable, self.capturing, self.recorded)
        if "_held" in self.__dict__:
            made.__dict__["_held"] = held(self._held)
        return made

    def bind(self, name: str, value: AbsValue) -> "State":
        dropped = (self.names.get(name),)
        return self._made(self.names.set(name, value), self.heap, self.order, lambda h: _held_after(h, dropped, value))

    def store(self, path: Path, value: AbsValue) -> "State":
        depth = len(path.steps)  # what lies under `path` is overwritten with it
        under = [(p, v) for p, v in self.heap.items() if len(p.steps) > depth and path.may_alias(p)]
        dropped = [self.heap.get(path), *(v for _, v in under)]
        heap = self.heap
        for p, _ in under:
            heap = heap.delete(p)
        return self._made(self.names, heap.set(path, value), self.order, lambda h: _held_after(h, dropped, value))

    def named_anew(self, name: str, value: AbsValue) -> "State":
        """`name` bound to `value` as an object named by that name from here on (`Root.local(name)`); what an earlier
        object of that name left under it is not this one's."""
        root = value.identity.root
        gone = [(p, v) for p, v in self.heap.items() if p.root == root]
        if not gone:
            return self.bind(name, value)
        heap = self.heap
        for path, _ in gone:
            heap = heap.delete(path)
        state = State(self.names, heap, self.current, self.order, self.reachable, self.capturing, self.recorded)
        return state.bind(name, value)  # (its count of holders is made anew when asked)

    def with_memory(self, identity: Path, memory) -> "State":
        """The memory `identity` names is now of another kind (page-locked in place): everything holding it says so."""
        state = self
        for name, value in self.names.items():
            if value.identity == identity and value.memory is not memory:
                state = state.bind(name, replace(value, memory=memory))
        for path, value in self.heap.items():
            if value.identity == identity and value.memory is not memory:
                state = state.store(path, replace(value, memory=memory))
        return state

    def learned_device(self, accessed: Path) -> "State":
        """Memory of a device not told, accessed on a stream (work queued on it under a stream the code chose): device
        memory, for every name and field that holds it or a list of such allocations (evidence, D-20's one-path fact)."""
        def told(value: AbsValue) -> Optional[AbsValue]:
            if value.is_buffer and value.identity == allocation and value.memory is Memory.UNKNOWN:
                return replace(value, memory=Memory.DEVICE)
            item = value.element
            if value.kind is ValueKind.CONTAINER and item is not None and item.identity == allocation \
                    and item.is_buffer and item.memory is Memory.UNKNOWN:
                return replace(value, element=replace(item, memory=Memory.DEVICE))
            return None
        steps = accessed.steps
        cut = next((i for i, step in enumerate(steps) if not isinstance(step, str)), len(steps))
        allocation = Path(accessed.root, steps[:cut])  # (the buffer an item or a view of it is in)
        state = self
        for name, value in self.names.items():
            new = told(value)
            state = state.bind(name, new) if new is not None else state
        for path, value in self.heap.items():
            new = told(value)
            state = state.store(path, new) if new is not None else state
        return state

    def with_current(self, framework: str, stream: StreamRef) -> "State":
        return replace(self, current=self.current.set(framework, stream))

    def with_order(self, order: Order) -> "State":
        return self._made(self.names, self.heap, order, lambda h: h)

    def unreachable(self) -> "State":
        return replace(self, reachable=False)

    def renamed(self, rename) -> "State":
        """Every path in the state renamed: in values, the heap's keys, the order."""
        names = PMap({n: v.mapped(rename) for n, v in self.names.items()})
        heap = PMap({rename(p): v.mapped(rename) for p, v in self.heap.items()})
        return State(names, heap, self.current, self.order.renamed(rename), self.reachable, self.capturing,
                     self.recorded)

    def holds(self, identity: Path) -> bool:
        """Some name or heap entry still holds this memory."""
        direct, containers = self._held
        if direct.get(identity):
            return True
        if not containers:
            return False  # no value has items: only a direct hold could keep it
        return any(_refers(v, identity) for v in self.names.values()) or any(_refers(v, identity) for v in self.heap.values())

    def on_device(self, identity: Path) -> bool:
        """A name or heap entry holds this memory as device memory (the walk was told where it lives)."""
        return any(v.identity == identity and v.on_device for v in chain(self.names.values(), self.heap.values()))

    @cached_property
    def _held(self) -> tuple[PMap, int]:
        """Identity -> how many names and heap entries hold it; how many have items (kept by `bind`, `store`)."""
        direct: dict = {}
        containers = 0
        for value in chain(self.names.values(), self.heap.values()):
            direct[value.identity] = direct.get(value.identity, 0) + 1
            containers += _has_items(value)
        return PMap(direct), containers

    # -- lattice -------------------------------------------------------------------
    def join(self, other: "State", every_path: bool = False, back_edge: bool = False,
             sides: tuple[str, str] = ("", "")) -> "State":
        """The state after either of two paths (`back_edge`: `other` comes round a loop; `sides`: a test's, D-18)."""
        if not other.reachable:
            return self
        if not self.reachable or self == other:
            return other
        def values(a: AbsValue, b: AbsValue) -> AbsValue:
            joined = a.join_carried(b) if back_edge else a.join(b)
            return _chosen(joined, a, b, sides) if any(sides) else joined
        return State(
            _join_maps(self.names, other.names, values),
            _join_maps(self.heap, other.heap, values),
            _join_current(self.current, other.current),
            self.order.on_side(sides[0]).join(other.order.on_side(sides[1]), every_path),
            True,
            self.capturing | other.capturing,
            _join_recorded(self.recorded, other.recorded),
        )

    def kept_on_self(self) -> dict[Path, Path]:
        """Memory made in the call and held at `self.<attr>` at its end: its allocation -> that path."""
        kept = {}
        for path, value in self.heap:
            if path.root.kind is not RootKind.SELF or not 1 <= len(path.steps) <= 2:
                continue
            if len(path.steps) == 2 and path.steps[1] != Index.any_():
                continue  # (an item under a key the text tells: not the container's weak slot)
            held = [(value, path)]
            if len(path.steps) == 1 and value.element is not None:
                held.append((value.element, path.element(Index.any_())))
            for item, where in held:  # (an item of a container kept there, a tuple's positions each: D-12)
                told = [(item, where)] + [(p, where.element(Index.const_(i))) for i, p in enumerate(item.positions)]
                for made, at in told + [(v, where) for v in item.either]:  # (memory it is on some path: D-20)
                    identity = made.identity
                    if identity is not None and identity.root.kind is RootKind.FRESH and not identity.steps:
                        kept.setdefault(identity, at)
            for member in value.members if len(path.steps) == 1 else ():
                if member.root.kind is RootKind.FRESH and not member.steps:  # an item, where the join lost which
                    kept.setdefault(member, path.element(Index.any_()))
        return kept


def _chosen(joined: AbsValue, a: AbsValue, b: AbsValue, sides: tuple[str, str]) -> AbsValue:
    """A joined value's stream of the two the paths held, each by its side (a context or None: where entered)."""
    stream = joined.stream
    if stream is None:
        return joined
    if joined.kind is ValueKind.STREAM_CONTEXT and ValueKind.NONE in (a.kind, b.kind):
        return replace(joined, stream=replace(stream, sides=sides if a.stream is not None else sides[::-1]))
    if stream.kind is not StreamRefKind.EITHER or a.stream is None or b.stream is None:
        return joined
    return replace(joined, stream=stream.chosen_by({a.stream: sides[0], b.stream: sides[1]}))


def _held_after(held: tuple[PMap, int], dropped, added: AbsValue) -> tuple[PMap, int]:
    """`held` once the values `dropped` (None: nothing was there) are gone and `added` is bound."""
    direct, containers = held
    for value in dropped:
        if value is not None:
            direct = direct.set(value.identity, direct[value.identity] - 1)
            containers -= _has_items(value)
    direct = direct.set(added.identity, direct.get(added.identity, 0) + 1)
    return direct, containers + _has_items(added)


def _has_items(value: AbsValue) -> bool:
    return value.element is not None or bool(value.members)


def _join_maps(left: PMap, right: PMap, join) -> PMap:
    if left == right:
        return left
    merged = {}
    for key in set(chain(left.keys(), right.keys())):
        if key in left and key in right:
            merged[key] = join(left[key], right[key])
        else:
            merged[key] = left.get(key, right.get(key))  # bound on one path only: what that path bound
    return PMap(merged)


def _join_current(left: PMap, right: PMap) -> PMap:
    """A framework missing on one side is at its entry stream there; two streams are one of two (D-14)."""
    merged = {}
    for framework in set(chain(left.keys(), right.keys())):
        x = left.get(framework, entry_stream(framework))
        y = right.get(framework, entry_stream(framework))
        merged[framework] = x if x == y else (x.joined(y) or UNKNOWN_STREAM)
    return PMap(merged)


def _refers(value: AbsValue, identity: Path) -> bool:
    if value.identity == identity or identity in value.members:
        return True
    return value.element is not None and _holds_item(value.element, identity)


def _holds_item(item: AbsValue, identity: Path) -> bool:
    """A container's items: every allocation of a site it was filled from, whatever the iteration."""
    mine = item.identity
    if mine is not None and mine.same_site(identity):
        return True
    return _refers(item, identity)


def entry_stream(framework: str) -> StreamRef:
    """A framework's current stream at entry: the caller's, or the legacy default stream where it has no setting."""
    return StreamRef.legacy() if framework in LEGACY_BY_DEFAULT else StreamRef.ambient(framework)


def _join_recorded(a: tuple, b: tuple) -> tuple:
    merged = dict(a)
    for key, accesses in b:
        merged[key] = tuple(dict.fromkeys(merged.get(key, ()) + accesses))
    return tuple(merged.items())
