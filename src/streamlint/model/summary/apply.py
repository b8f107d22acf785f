"""`apply`: a callee's summary in its caller's terms at one call; what cannot be mapped is dropped (silence)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from streamlint.deadline import tick
from streamlint.model.domain.order import HOST, Conflict
from streamlint.model.domain.paths import Index, IndexKind, Path, Root, RootKind, outermost_site
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import EXISTING, UNKNOWN_STREAM, StreamRef, StreamRefKind
from streamlint.model.domain.sides import exclusive
from streamlint.model.domain.values import PER_ITEM, AbsValue, Memory, ValueKind, truth
from streamlint.model.summary.effects import Effect, EffectKind
from streamlint.model.summary.function_summary import Evidence, FunctionSummary
from streamlint.model.summary.perform import perform, released

SELF_OPTION = "<self>."  # the branch tag of a test of `self.<attr>`: an option the object was made with


@dataclass(frozen=True)
class Binding:
    """What the caller hands the callee at one call."""

    site: str  # the call's site key in the caller
    args: tuple[tuple[str, AbsValue], ...]  # parameter name -> the caller's value
    receiver: Optional[AbsValue] = None  # `self` of a method call
    branch: tuple[str, ...] = ()  # the sides of the tests the call is made under, in the caller (D-18)
    # the callee is memoized (`functools.lru_cache`): what it makes is made once and handed to every caller
    shared: bool = False

    @property
    def handed(self) -> tuple[StreamRef, ...]:
        """The side streams the call hands the callee (made for the program's own work)."""
        return tuple(v.stream for _, v in self.args if v.kind is ValueKind.STREAM and v.stream is not None
                     and v.stream.fresh and not v.stream.blocking)

    def arg(self, name: str) -> Optional[AbsValue]:
        return dict(self.args).get(name)


@dataclass(frozen=True)
class Applied:
    state: State
    conflicts: tuple[Conflict, ...]
    returns: AbsValue
    effects: tuple[Effect, ...]  # the callee's effects in the caller's terms (for the caller's own summary)
    kept: tuple[tuple[str, AbsValue], ...] = ()  # per parameter, the items the callee put in it, in the caller's terms


def apply(summary: FunctionSummary, state: State, binding: Binding, reported: bool = True) -> Applied:
    """`reported`: the conflicts this call meets are reported (see `perform`)."""
    mapper = _Mapper(binding, state, summary.qualname,
                     frozenset(param for param, tags in summary.evidence if Evidence.ENTERED in tags))
    mapped: list[Effect] = []
    conflicts: list[Conflict] = []
    for effect in summary.effects:
        tick()  # (a large summary applied at many calls is long work too: the file's budget counts it)
        translated = mapper.effect(effect)
        # (not this call's: its sides of a test are not the caller's; a move of what is on the device already)
        if translated is None or exclusive(binding.branch, translated.branch) \
                or (translated.guard is not None and state.at(translated.guard).on_device) \
                or _host_read_of_device_memory(translated, state):
            continue
        state, found = perform(state, replace(translated, branch=binding.branch + translated.branch), reported)
        if translated.kind is EffectKind.ACCESS and translated.path is not None and translated.stream is not None \
                and translated.stream != HOST and translated.stream.known:
            state = state.learned_device(translated.path)  # (the callee queued work on it: device memory)
        conflicts.extend(c for c in found if not _found_inside(c, binding.site))
        mapped.append(translated)
        mapper.state = state
    receiver = binding.receiver.identity if binding.receiver is not None else None
    for attr, value in summary.self_stores if receiver is not None else ():
        old = state.at(receiver.attr(attr))  # (what the callee stored over may go back to the allocator)
        state = state.store(receiver.attr(attr), mapper.value(value))
        release = released(old, state, binding.site)
        if release is not None:
            state, found = perform(state, release)
            conflicts.extend(found)
            mapped.append(release)
    kept = tuple((param, mapper.value(items)) for param, items in summary.param_stores)
    for param, items in kept:
        given = binding.arg(param)  # (the caller's container holds what the callee put in it, beside what it held)
        if given is not None and given.identity is not None and not given.is_buffer:
            slot = given.identity.element(Index.any_())
            held = state.stored(slot)
            state = state.store(slot, items if held is None or held.kind is ValueKind.UNKNOWN else held.join(items))
    for param, key, value in summary.param_keys:
        given = binding.arg(param)  # (the caller's object holds what the callee stored under a key written out)
        if given is not None and given.identity is not None and (not given.is_buffer or given.loader_batch):
            item = mapper.value(value)
            slot = given.identity.element(Index.any_())
            held = state.stored(slot)
            state = state.store(slot, item if held is None or held.kind is ValueKind.UNKNOWN else held.join(item))
            state = state.store(given.identity.element(Index.const_(key)), item)
    returns = _as_given(mapper.value(summary.returns), summary.returns, binding)
    if summary.enters:  # a context manager that enters streams: `with helper():` runs its body there
        framework, stream = summary.enters[0]
        returns = AbsValue(ValueKind.STREAM_CONTEXT, framework, stream=mapper.stream(stream))
    return Applied(state, tuple(conflicts), returns, tuple(mapped), kept)


def _host_read_of_device_memory(effect: Effect, state: State) -> bool:
    """The host's own access, in the callee, of an allocation the caller made as device memory: the callee took memory
    it was not told of for the host's (`x.to(device)` of a CUDA tensor copies nothing from the host). An allocation's
    path names one memory, unlike an attribute's, which a callee may fill anew."""
    path = effect.path  # (an item or a view of the allocation, `self.obs[step + 1]`, is in the same memory)
    return effect.kind is EffectKind.ACCESS and effect.stream == HOST and effect.host_memory and path is not None \
        and path.root.kind is RootKind.FRESH and (state.on_device(path) or bool(path.steps)
                                                  and state.on_device(Path(path.root)))


def _as_given(returns: AbsValue, said: AbsValue, binding: Binding) -> AbsValue:
    """A callee that returns a tensor it was given returns the caller's memory, with what the caller knows of it."""
    root = said.identity.root if said.identity is not None else None
    if root is None or root.kind is not RootKind.PARAM or said.identity.steps or not returns.is_buffer:
        return returns
    given = binding.arg(root.name)
    if given is None or not given.is_buffer or given.identity != returns.identity:
        return returns
    return replace(returns, framework=returns.framework or given.framework,
                   memory=given.memory if returns.memory is Memory.UNKNOWN else returns.memory,
                   stream=returns.stream or given.stream, loader_batch=returns.loader_batch or given.loader_batch)


def _found_inside(conflict: Conflict, site: str) -> bool:
    """Both accesses came from this callee on streams it knew itself: the callee reported it."""
    both_inside = conflict.earlier.chain[:1] == (site,) and conflict.later.chain[:1] == (site,)
    return both_inside and all(a.stream == HOST or a.stream.context_free
                               for a in (conflict.earlier, conflict.later))


# Values whose truth is told by their kind (an object that is not None is true).
_TRUE_KINDS = frozenset({ValueKind.STREAM, ValueKind.EVENT, ValueKind.MODULE, ValueKind.OBJECT, ValueKind.CALLABLE,
                         ValueKind.NAMESPACE, ValueKind.STREAM_CONTEXT})


def _decided(value: AbsValue, test: str) -> Optional[bool]:
    """Whether the caller's argument passes a test of it (`name`, `name is None`, `name==0`); None: untold."""
    if value.may_be_none:
        return None
    told = value.kind is ValueKind.NONE or value.kind in _TRUE_KINDS
    _, is_, constant = test.partition(" is ")
    if is_:
        return (value.kind is ValueKind.NONE) == (constant == "None") if told and constant == "None" else None
    _, eq, constant = test.partition("==")
    if eq:
        written = value.kind is ValueKind.HOST_NUMBER and value.target in ("0", "True", "False")
        return value.target == constant if written else None
    return value.kind is not ValueKind.NONE if told else truth(value)


class _Mapper:
    def __init__(self, binding: Binding, state: State, callee: str = "", entered: frozenset = frozenset()) -> None:
        self.binding = binding
        self.state = state
        self.callee = callee
        self.entered = entered  # the parameters the callee enters as its current stream

    def effect(self, e: Effect) -> Optional[Effect]:
        path = self.path(e.path) if e.path is not None else None
        if e.path is not None and path is None:
            if e.kind in (EffectKind.WAIT_EVENT, EffectKind.SYNC):
                # a wait for an event the caller cannot name still waits (dropping it could add reports)
                path = Path(Root.local("<an event the caller does not name>"))
            else:
                return None
        sides = [self._side(tag) for tag in e.branch]
        if None in sides:
            return None  # on a side of a test of a parameter the caller's argument does not take
        existing = e.kind is EffectKind.ACCESS and e.stream is not None and e.stream.kind in EXISTING
        return replace(e, path=path, stream=e.stream and self.stream(e.stream), other=e.other and self.stream(e.other),
                       guard=e.guard and self.path(e.guard), chain=(self.binding.site,) + e.chain,
                       branch=tuple(tag for tag in sides if tag),
                       handed=e.handed + self.binding.handed if existing else e.handed)

    def _side(self, tag: str) -> Optional[str]:
        """A side tag in the caller's terms: "" where the caller's argument takes that side, None the other (D-18)."""
        test, _, side = tag.rpartition(":")
        name = test[len(self.callee) + 1:] if self.callee and test.startswith(f"{self.callee}?") else ""
        value = self.binding.arg(name.partition("==")[0].partition(" is ")[0]) if name else None
        decided = _decided(value, name) if value is not None else None
        if decided is None:
            return self._branch(tag)
        return "" if decided == (side == "1") else None

    def _branch(self, tag: str) -> str:
        """Each call takes its own sides of a test; an option of `self` is the receiver's, one in every call on it."""
        receiver = self.binding.receiver.identity if self.binding.receiver is not None else None
        if not tag.startswith(SELF_OPTION) or receiver is None:
            return f"{self.binding.site}>{tag}"
        steps = "".join(f"{step}." for step in receiver.steps if isinstance(step, str))
        if receiver.root.kind is RootKind.SELF and len(steps.split(".")) == len(receiver.steps) + 1:
            return f"{SELF_OPTION}{steps}{tag[len(SELF_OPTION):]}"  # the caller's own `self`: an option of it
        return f"{receiver!r}.{tag[len(SELF_OPTION):]}"

    def path(self, path: Path) -> Optional[Path]:
        root = path.root
        if root.kind in (RootKind.PARAM, RootKind.SELF):
            value = self.binding.receiver if root.kind is RootKind.SELF else self.binding.arg(root.name)
            item = _told_item(value, path.steps)
            if item is not None:  # an item of a tuple the call writes out (`*args`): the caller's value there
                return self._deref(item.identity, path.steps[1:]) if item.identity is not None else None
            each = _item_made_per_item(value, path.steps)
            if each is not None:  # `bufs[i]` of a list the caller built an allocation per item (a closure's cell)
                return self._deref(each, path.steps[1:])
            base = value.identity if value is not None else None
            if base is None:
                return None
            # a ring counter's slot named from the callee's `self` or parameter, named from here (D-25)
            return self._deref(base, path.resymbolled(root.spell(), base.spell()).steps)
        if root.kind is RootKind.FRESH and self.callee and outermost_site(root.site).partition("#")[0] != self.callee:
            return path  # made by another function (the object's memory, made in its constructor): the same here
        if root.kind is RootKind.FRESH:
            return Path(Root.fresh(f"{self.binding.site}>{root.site}"), path.steps)
        if root.kind is RootKind.GLOBAL:
            return path
        return None  # a callee's local or return path: not the caller's to name

    def _deref(self, base: Path, steps: tuple) -> Path:
        """Follow the steps through what the caller holds (a callee's `self.buf`: what the caller's `p.buf` holds)."""
        for step in steps:
            here = base.attr(step) if isinstance(step, str) else base.element(step)
            held = self.state.at(here)
            base = held.identity if held.identity is not None and held.is_buffer else here
        return base

    def stream(self, ref: StreamRef) -> StreamRef:
        if ref == HOST:
            return ref
        if ref.kind is StreamRefKind.AMBIENT:
            return self.state.current_stream(ref.framework)
        if ref.kind is StreamRefKind.CREATED:
            if self.callee and ref.site.partition("#")[0] != self.callee:
                return ref  # made elsewhere (the object's stream, made in its constructor): the same stream here
            if self.binding.shared:
                # a memoized getter's stream: one for every call, made before this call perhaps, maybe the one
                # entered now (what its cache holds: no stream made here, nor another than the current one)
                getter = self.callee.rsplit(".", 1)[-1]
                return StreamRef.at(Path(Root.global_(f"the stream `{getter}()` returns")))
            return replace(ref, site=self._made_here(ref.site))
        if ref.kind is StreamRefKind.PATH and ref.path is not None and ref.path.root.kind is RootKind.FRESH:
            if self.callee and not self._callees(ref.path.root.site):
                return ref  # an item of a pool made elsewhere (in the object's constructor): the same stream here
            # an item of a pool of streams the callee made: made at this call
            pool = Path(Root.fresh(self._made_here(ref.path.root.site)), ref.path.steps)
            return replace(ref, path=pool, site=self._made_here(ref.site))
        if ref.kind is StreamRefKind.PATH and ref.path is not None:
            here = self._stream_at(ref.path)
            return here.entered() if ref.fresh and ref.path.steps else here  # an object's stream the callee entered
        if ref.kind is StreamRefKind.EITHER:  # each path's stream, here (D-14)
            return self._either(ref)
        return ref

    def _either(self, ref: StreamRef) -> StreamRef:
        """One of two streams, each path's here (chosen by a configuration test: the caller's side's, D-18)."""
        members = [self.stream(m) for m in ref.members]
        either = StreamRef.either_of(members) or UNKNOWN_STREAM
        if not ref.sides or either.kind is not StreamRefKind.EITHER:
            return either
        sides = {m: self._side(side) if side else "" for m, side in zip(members, ref.sides)}
        if any(side is None for side in sides.values()):  # a side the caller's argument does not take
            return next(m for m, side in sides.items() if side is not None)
        return either.chosen_by(sides).on_sides(self.binding.branch)

    def _callees(self, sites: str) -> bool:
        """One of the creation sites (a pool's joined by "|") is the callee's own."""
        return any(site.partition("#")[0] == self.callee for site in sites.split("|"))

    def _made_here(self, sites: str) -> str:
        """A callee's creation sites (one, or a pool's joined by "|"), as sites of this call."""
        return "|".join(f"{self.binding.site}>{site}" for site in sites.split("|"))

    def _stream_at(self, path: Path) -> StreamRef:
        if path.root.kind is RootKind.PARAM and len(path.steps) <= 1:
            value = self.binding.arg(path.root.name)
            if value is not None and path.steps and not isinstance(path.steps[0], str):
                # (a stream the caller passes inside a container: the item it writes there, else any item)
                value = _told_item(value, path.steps) or value.element
            if value is not None and value.kind is ValueKind.STREAM and value.stream is not None:
                return value.stream
        mapped = self.path(path)
        if mapped is None:
            return UNKNOWN_STREAM
        held = self.state.at(mapped)
        if held.kind is ValueKind.STREAM and held.stream is not None:
            return held.stream
        if path.root.kind is RootKind.PARAM and not path.steps and path.root.name in self.entered:
            return StreamRef.at(mapped).entered()  # an object's stream the callee entered: a side stream
        return StreamRef.at(mapped)

    def value(self, value: AbsValue) -> AbsValue:
        return value.mapped(self.path, self.stream)


def _item_made_per_item(value: Optional[AbsValue], steps: tuple) -> Optional[Path]:
    """The caller's item at a step `[i]` of a list with no identity of its own whose items were each allocated
    (`[torch.empty(n) for _ in range(2)]`): the items' allocation at that index, as the caller's own `bufs[i]` names it."""
    if value is None or value.identity is not None or value.target != PER_ITEM or value.element is None \
            or value.element.identity is None or not steps or not isinstance(steps[0], Index):
        return None
    return value.element.identity.element(steps[0])


def _told_item(value: Optional[AbsValue], steps: tuple) -> Optional[AbsValue]:
    """The caller's item of a tuple with no identity of its own (the items a call hands a `*args`) at a step `[i]`."""
    if value is None or value.identity is not None or not value.positions or value.keys or not steps:
        return None
    step = steps[0]
    if not isinstance(step, Index) or step.kind is not IndexKind.CONST or not isinstance(step.const, int):
        return None
    return value.positions[step.const] if -len(value.positions) <= step.const < len(value.positions) else None
