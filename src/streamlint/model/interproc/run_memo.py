"""Other modules' walks kept for the run (D-39): a walk of a function of a module other than the
checked one, and a class state or pending work composed there, is a function of what it read;
kept with those reads, it is reused by every later check of the run whose view gives the same
answers, and replayed into that check's solve as if walked there.

A solver logs, while any recording is open, every result its walks took (a walk made or found,
a class state or pending work, a class-hierarchy query and its answer, a module looked up, the
result cache's notes). A recording is kept only when nothing in it depended on the solve's
history: no recursion cut or composition in progress above it, no budget spent, no walk of the
checked module, no result taken that was itself not kept. Reusing one checks that the checked
solve would walk it the same way (no function of it on the stack or of the checked module, each
walk either absent or the very one kept, its contexts within the budget, the same answers to its
queries), then adds its walks in their order, re-asks its modules and re-makes its notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from streamlint import reads
from streamlint.model import resolve

# Past this many walks in one kept entry (its reach, flattened), it is not kept: replaying a
# large closure for each check would cost more memory than the walk saves.
MAX_KEPT_REACH = 2000
MAX_KEPT_ENTRIES = 20000


@dataclass(frozen=True)
class Kept:
    value: object
    walks: tuple  # ((qualname, context), Walked) in the order they were made, flattened
    derived: tuple  # (key, value): class states and pending work (the solver's keys), flattened
    asks: tuple  # ((module, name, within, call), answer)
    units: frozenset  # the modules looked up, "!" before one not found
    notes: tuple  # the result cache's notes (reads.tapped)
    modules: frozenset  # the modules of the functions walked


class Recorder:
    """One solver's log and its open recordings."""

    def __init__(self, main: str) -> None:
        self.main = main
        self.kept: dict = resolve.per_run(("run_memo",), dict)
        self.log: list = []  # ("w", key, walked, module) | ("d", key, value) | ("a", args, answer) | module name
        self.notes: list = []  # reads' tap while recording
        self._open: list[list] = []  # [log start, notes start, the depth it was cut from (None: not cut)]
        # a result not kept as it read one being made: the recording that was making it (None: any)
        self._unkept: dict = {}
        self._outer_tap: Optional[list] = None

    @property
    def depth(self) -> int:
        return len(self._open)

    def open(self) -> None:
        if not self._open:
            self._outer_tap = reads.tap(self.notes)
        self._open.append([len(self.log), len(self.notes), None])

    def close(self, key, value) -> None:
        start, notes_start, cut = self._open.pop()
        if cut is None and len(self.kept) < MAX_KEPT_ENTRIES:
            entry = self._entry(value, self.log[start:], self.notes[notes_start:])
            if entry is not None:
                self.kept[key] = entry
        elif cut is not None:
            self._unkept[key] = self._open[cut - 1] if 0 < cut <= len(self._open) else None
        if not self._open:
            reads.tap(self._outer_tap)
            self.log.clear()
            self.notes.clear()

    def cut_from(self, depth: int) -> None:
        """A result read while it is being made (recursion, a composition in progress): the
        recordings opened inside its making depend on where the walk entered."""
        for rec in self._open[depth:]:
            rec[2] = depth if rec[2] is None else min(rec[2], depth)

    def cut_all(self) -> None:
        self.cut_from(0)

    def took_walk(self, key, walked, module: str, own: bool, made: bool) -> None:
        """A walk made or found; one of the checked module is the solve's own."""
        if self._open:
            self.log.append(("w", key, walked, module))
            if own:
                self.cut_all()
            elif not made:
                self._took_kept(key, walked)

    def took_derived(self, key: tuple, value, own: bool, made: bool) -> None:
        if self._open:
            self.log.append(("d", key, value))
            if own:
                self.cut_all()
            elif not made:
                self._took_kept(key, value)

    def _took_kept(self, key, value) -> None:
        """A result found made: one not kept depends on what its making read being made (when that
        making is still open, the recordings inside it do), or on the solve."""
        kept = self.kept.get(key)
        if kept is not None and kept.value is value:
            return
        anchor = self._unkept.get(key)
        at = next((i for i, rec in enumerate(self._open) if rec is anchor), None) if anchor is not None else None
        self.cut_from(at + 1 if at is not None else 0)

    def asked(self, args: tuple, answer) -> None:
        if self._open:
            self.log.append(("a", args, answer))

    def looked_up(self, module: str, found: bool) -> None:
        if self._open:
            self.log.append(module if found else "!" + module)

    def _entry(self, value, events: list, notes: list) -> Optional[Kept]:
        walks: dict = {}
        modules: set = set()
        derived: dict = {}
        asks: dict = {}
        units: set = set()
        for event in events:
            if isinstance(event, str):
                units.add(event)
            elif event[0] == "a":
                asks.setdefault(event[1], event[2])
            else:
                walked = event[0] == "w"
                key, taken = event[1], event[2]
                if walked:
                    modules.add(event[3])
                found = self.kept.get(key)
                if found is not None and found.value is taken:  # (its own reach first, as a walk makes it)
                    walks.update((k, w) for k, w in found.walks if k not in walks)
                    modules |= found.modules
                    derived.update((k, v) for k, v in found.derived if k not in derived)
                    for args, answer in found.asks:
                        asks.setdefault(args, answer)
                    units |= found.units
                    notes = [*notes, *found.notes]
                (walks if walked else derived).setdefault(key, taken)
        if len(walks) > MAX_KEPT_REACH:
            return None
        return Kept(value, tuple(walks.items()), tuple(derived.items()), tuple(asks.items()), frozenset(units),
                    tuple(dict.fromkeys(notes)), frozenset(modules))


@dataclass
class ReplayView:
    """What a replay checks against and fills in the checked solve (the solver's side)."""

    walks: dict
    contexts: dict
    on_stack: Callable[[str], bool]
    derived_of: Callable[[tuple], Optional[tuple]]  # what the solve made for a key, as (value,); None: not made
    set_derived: Callable[[tuple, object], None]
    ask: Callable[[tuple], object]
    look_up: Callable[[str], object]  # the solve's module of that name, None when not found
    most_contexts: int
    most_walks: int


def replay(entry: Kept, view: ReplayView, main: str) -> bool:
    """Adds a kept entry's walks and results to the checked solve when it would have made the same
    ones; False (nothing added) otherwise."""
    if not _fits(entry, view, main):
        return False
    for (qualname, context), walked in entry.walks:
        if (qualname, context) not in view.walks:
            view.walks[(qualname, context)] = walked
            view.contexts.setdefault(qualname, set()).add(context)
    for key, value in entry.derived:
        if view.derived_of(key) is None:
            view.set_derived(key, value)
    reads.replay(entry.notes)
    return True


def _fits(entry: Kept, view: ReplayView, main: str) -> bool:
    if main in entry.modules or any((view.look_up(m.lstrip("!")) is None) != m.startswith("!") for m in entry.units):
        return False
    new = 0
    added: dict = {}
    for (qualname, context), walked in entry.walks:
        if view.on_stack(qualname):
            return False
        found = view.walks.get((qualname, context))
        if found is not None:
            if found is not walked:
                return False
            continue
        new += 1
        known = view.contexts.get(qualname, set())
        more = added.setdefault(qualname, set())
        if context not in known and context not in more:
            if len(known) + len(more) >= view.most_contexts:
                return False
            more.add(context)
    if len(view.walks) + new > view.most_walks:
        return False
    for key, value in entry.derived:
        found = view.derived_of(key)
        if found is not None and found[0] != value:
            return False
    return all(view.ask(args) == answer for args, answer in entry.asks)

