"""State on `self` shared by a class's methods (RacerD's per-class composition).

One method may leave a value on `self` produced on a stream and not yet ordered
before the current stream (or the host): the classic prefetcher copies the next
batch on `self.stream` in `preload()`. Another method that reads that attribute
on the current stream, or hands it to its caller, races unless it waits first.

A method's entry state takes the writes still pending when the methods that may run
before it return: `__init__` runs before every method, and any public method may run
before any public method, itself included (an iterator's `next`, a module's
`forward`, a getter after the step that computes what it returns).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional

from streamlint.model import toggles
from streamlint.model.hazards import AMBIENT, HOST, HOSTMEM, LEGACY, Alloc, Ev, unsure
from streamlint.model.values import Buffer, Event, Mem, Seq

if TYPE_CHECKING:
    from streamlint.model.flow import Walker


@dataclass(frozen=True)
class Pending:
    """Writes to `self.<attr>` not yet ordered when a method returns."""

    attr: str
    evs: tuple[Ev, ...]
    framework: str
    mem: Mem
    blocking: tuple[tuple[str, Optional[bool]], ...]  # the writing streams' flags
    allocation: Optional[Alloc] = None  # made on a side stream, not yet recorded for the current one
    # Host memory an asynchronous copy may still be reading, device memory a side stream the
    # method forked off the caller's stream may still be reading: the next call's writes race it.
    reads: tuple[Ev, ...] = ()
    # For the elements of a double buffer (toggles.py), kept as a list on `self`: each read's
    # element relative to the index at the method's return (`[self.i]`, `[self.i^1]`).
    regions: tuple[str, ...] = ()


def pending_at_exit(walker: "Walker") -> dict[str, Pending]:
    """What a method leaves on `self` that its caller's stream or host must still wait for."""
    hb = walker.state.hb
    if hb is None:
        return {}
    out: dict[str, Pending] = {}
    for name in sorted(walker.element_holders) if walker.forks else ():
        elements = _element_reads(walker, name)
        if elements is not None:
            out[name[5:]] = elements
    for name, value in walker.state.vars.items():
        if not name.startswith("self.") or name.count(".") != 1 or name in walker.element_holders:
            continue
        bases = [("n", name)]
        if isinstance(value, Buffer) and value.site:
            bases.append(("b", value.site))
        elif isinstance(value, Buffer):
            # Bound on some paths only (`if flag: self.norm = ...`): what any of them made.
            bases.extend(("b", site) for site in sorted(walker.attr_sites.get(name, ())))
        evs = []
        for base in bases:
            for region_evs in hb.writes.get(base, {}).values():
                for ev in region_evs:
                    if ev.stream == HOST or ev.param or ev.stream in walker.caller_streams:
                        # (a stream the caller chose: another call may pass the same one)
                        continue
                    host_pending = not hb.ordered(HOST, ev)
                    current = walker.entry_key
                    device_pending = ev.stream != current and host_pending and not hb.ordered(current, ev)
                    host_pending = host_pending and ev.space == HOSTMEM
                    if device_pending and ev.stream in walker.forks and ev.space != HOSTMEM:
                        fork = walker.forks[ev.stream]  # forked off the caller's stream, never joined
                        evs.append(replace(ev, fork=fork[0], fork_via=fork[1]))
                    elif device_pending or host_pending:
                        evs.append(ev)
        allocation = hb.allocs.get(("b", value.site, "")) if isinstance(value, Buffer) and value.site else None
        current = walker.entry_key
        if allocation is not None and (allocation.stream in (current, HOST) or current in allocation.recorded):
            allocation = None
        reads = _host_memory_reads(walker, bases) if isinstance(value, Buffer) and value.mem is not Mem.DEVICE else []
        if isinstance(value, Buffer) and walker.forks:
            reads += _side_stream_reads(walker, bases)
        if not evs and allocation is None and not reads:
            continue
        if not isinstance(value, Buffer):
            continue  # what the attribute holds is not known: no kind to start the next method with
        framework, mem = value.framework, value.mem
        blocking = tuple((ev.stream, hb.blocking.get(ev.stream)) for ev in (*evs, *reads))
        out[name[5:]] = Pending(name[5:], tuple(dict.fromkeys(evs)), framework, mem, blocking, allocation, tuple(reads))
    return out


def _host_memory_reads(walker: "Walker", bases: list[tuple]) -> list[Ev]:
    """Asynchronous copies out of host memory kept on `self` (a pinned staging buffer)
    that the host has not waited for when the method returns: the next call that
    refills the buffer on the host overwrites what the copy may still be reading."""
    hb = walker.state.hb
    assert hb is not None
    kept_events = _kept_events(walker)
    found = []
    for base in bases:
        for region_evs in hb.reads.get(base, {}).values():
            for ev in region_evs:
                if ev.space == HOSTMEM and ev.stream != HOST and not ev.param \
                        and ev.stream not in walker.caller_streams and not hb.ordered(HOST, ev) \
                        and not any(vc.get(ev.stream, 0) >= ev.clock for vc in kept_events):
                    found.append(ev)
    return found


def _element_reads(walker: "Walker", name: str) -> Optional[Pending]:
    """The side-stream reads of a double buffer's elements (`self.buffers[self.i]`) still
    pending at return, each with its element relative to the index then."""
    hb = walker.state.hb
    assert hb is not None
    base = ("b", toggles.element_site(name))
    # (a collective reduces in place: its reads are kept as the write that follows them)
    found = _side_stream_reads(walker, [base], with_regions=True) \
        + _side_stream_reads(walker, [base], with_regions=True, table=hb.writes)
    if not found:
        return None
    regions = tuple(region for region, _ in found)
    reads = tuple(ev for _, ev in found)
    blocking = tuple((ev.stream, hb.blocking.get(ev.stream)) for ev in reads)
    return Pending(name[5:], (), "torch", Mem.DEVICE, blocking, None, reads, regions)


def _side_stream_reads(walker: "Walker", bases: list[tuple], with_regions: bool = False,
                       table: Optional[dict] = None) -> list:
    """Reads of device memory kept on `self` by a side stream the method made wait for the
    caller's stream (a fork: `side.wait_stream(current)`) and never waited for in turn:
    the next call's writes on the caller's stream (a bucket refilled by the next gradient
    hook) overwrite what that stream may still be reading."""
    hb = walker.state.hb
    assert hb is not None
    current = walker.entry_key
    kept_events = _kept_events(walker)
    found = []
    for base in bases:
        for region, region_evs in (hb.reads if table is None else table).get(base, {}).items():
            for ev in region_evs:
                fork = walker.forks.get(ev.stream)
                if fork is None or ev.space == HOSTMEM or ev.param or ev.carried or unsure(ev.stream) \
                        or ev.stream in (HOST, LEGACY, AMBIENT, current, "ptds") or ev.stream in walker.caller_streams:
                    continue
                if hb.ordered(current, ev) or hb.ordered(HOST, ev) \
                        or any(vc.get(ev.stream, 0) >= ev.clock for vc in kept_events):
                    continue
                carried = replace(ev, fork=fork[0], fork_via=fork[1])
                found.append((region, carried) if with_regions else carried)
    return found


def _kept_events(walker: "Walker") -> list[dict]:
    """An event kept on `self` and recorded after an access: the next call may wait on it
    before overwriting (`self.done.synchronize()`), so the access is not carried.
    (after a loop the kept event's identity may be lost: any event recorded here counts)"""
    hb = walker.state.hb
    assert hb is not None
    keeps_event = any(k.startswith("self.") and _holds_event(v) for k, v in walker.state.vars.items())
    return list(hb.events.values()) if keeps_event else []


def _holds_event(value) -> bool:
    if isinstance(value, Seq):
        return any(isinstance(v, Event) for v in (*(value.items or ()), value.element))
    return isinstance(value, Event)


def inject(walker: "Walker", class_name: str, pendings: dict[str, list[Pending]]) -> None:
    """Start a method's walk with what earlier methods left pending on `self`."""
    hb = walker.state.hb
    if hb is None:
        return
    for attr, plist in pendings.items():
        first = plist[0]
        if first.regions:
            # A double buffer's elements: the list stays what it is; the reads keep their element.
            for pending in plist:
                for ev, region in zip(pending.reads, pending.regions):
                    hb.clock[ev.stream] = max(hb.clock.get(ev.stream, 0), ev.clock)
                    hb.add_read(("b", toggles.element_site(f"self.{attr}"), region), replace(ev, carried=True))
            continue
        site = hash(("self-attr", class_name, attr))
        seeded = walker.state.vars.get(f"self.{attr}")
        if (first.reads or any(ev.fork is not None for ev in first.evs)) and isinstance(seeded, Buffer) and seeded.site and seeded.mem is first.mem:
            # Host memory the copy reads: keep the buffer `__init__` made, so the views
            # of it kept on `self` (`self.staging = self.buf[:n]`) are the same memory.
            site = seeded.site
        walker.state.vars[f"self.{attr}"] = Buffer(first.framework, first.mem, site=site, label=f"self.{attr}")
        for pending in plist:
            for key, flag in pending.blocking:
                hb.blocking.setdefault(key, flag)
            for ev in pending.evs:
                hb.clock[ev.stream] = max(hb.clock.get(ev.stream, 0), ev.clock)
                hb.add_write(("b", site, ""), ev if ev.fork is None else replace(ev, carried=True))
            for ev in pending.reads:
                hb.clock[ev.stream] = max(hb.clock.get(ev.stream, 0), ev.clock)
                hb.add_read(("b", site, ""), replace(ev, carried=True))
            if pending.allocation is not None:
                made = pending.allocation
                hb.allocated(("b", site, ""), made.stream, made.stream_label, made.node, after_entry=made.after_entry)


def runs_before(method: str, exits: dict[str, dict[str, Pending]]) -> list[str]:
    """The methods whose exit state may reach `method`'s entry: `__init__`, and in a
    class that keeps work pending on `self` across calls, any public method (a user
    may call them in any order; one that hands out what another left pending, such
    as a property returning a norm still being computed on a side stream, must wait)."""
    if method == "__init__":
        return []
    return [name for name in exits if name == "__init__" or is_public(name)]


def is_public(method: str) -> bool:
    return not method.startswith("_") or (method.startswith("__") and method.endswith("__"))


def without_forked(entry: dict[str, list[Pending]]) -> dict[str, list[Pending]]:
    """`entry` less the side streams' work forked off the caller's stream."""
    out: dict[str, list[Pending]] = {}
    for attr, plist in entry.items():
        kept = []
        for pending in plist:
            if pending.regions:
                continue  # (a double buffer's elements: all forked reads)
            evs = tuple(ev for ev in pending.evs if ev.fork is None)
            reads = tuple(ev for ev in pending.reads if ev.fork is None)
            if evs or reads or pending.allocation is not None:
                kept.append(replace(pending, evs=evs, reads=reads))
        if kept:
            out[attr] = kept
    return out
