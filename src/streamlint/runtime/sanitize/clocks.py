"""Happens-before between streams, events and the host: CSAN's vector clocks
(`torch.cuda._sanitizer`'s StreamSynchronizations), plus the host as an actor and the
legacy default stream's implicit barrier.

Each unit of device work takes a global sequence number; each stream keeps a vector
{stream: latest number it is ordered after}. Recording an event copies the recording
stream's vector; waiting takes the pointwise maximum. A stream or event sync makes the
host and every stream join it (work queued after the host returns is ordered after it);
a device sync makes the host learn every stream's latest number and every stream join
the host. A stream first seen starts from the host's vector.

The legacy default stream (0) is a barrier for *blocking* streams (CuPy's and Numba's
streams by default; PyTorch's are non-blocking): work on stream 0 waits for all work
queued before it on blocking streams, and work on a blocking stream waits for work
queued before it on stream 0.
"""

from __future__ import annotations

from typing import Hashable

HOST = "host"
LEGACY_DEFAULT = 0

Clock = dict


def _join(into: Clock, other: Clock) -> None:
    for key, seq in other.items():
        if seq > into.get(key, -1):
            into[key] = seq


class Clocks:
    def __init__(self) -> None:
        self.host: Clock = {}
        self.streams: dict[Hashable, Clock] = {}
        self.events: dict[Hashable, Clock] = {}
        self.blocking: set[Hashable] = set()

    def stream(self, key: Hashable) -> Clock:
        if key == HOST:
            return self.host
        clock = self.streams.get(key)
        if clock is None:
            clock = self.streams[key] = dict(self.host)
        return clock

    def declare(self, key: Hashable, blocking: bool) -> None:
        self.stream(key)
        (self.blocking.add if blocking else self.blocking.discard)(key)

    def before_work(self, key: Hashable) -> None:
        """The implicit waits of the legacy default stream, before work is queued on `key`."""
        clock = self.stream(key)
        if key == LEGACY_DEFAULT:
            for other in self.blocking:
                if other != key and other in self.streams:
                    _join(clock, self.streams[other])
        elif key in self.blocking and LEGACY_DEFAULT in self.streams:
            _join(clock, self.streams[LEGACY_DEFAULT])

    def work(self, key: Hashable, seq: int) -> None:
        self.stream(key)[key] = seq

    def record(self, event: Hashable, key: Hashable) -> None:
        self.events[event] = dict(self.stream(key))

    def wait(self, key: Hashable, event: Hashable) -> None:
        # Waiting on an event never recorded (or deleted) orders nothing, as in CUDA.
        _join(self.stream(key), self.events.get(event, {}))

    def delete_event(self, event: Hashable) -> None:
        self.events.pop(event, None)

    def _everyone_joins(self, clock: Clock) -> None:
        clock = dict(clock)
        _join(self.host, clock)
        for other in self.streams.values():
            _join(other, clock)

    def sync_stream(self, key: Hashable) -> None:
        self._everyone_joins(self.stream(key))

    def sync_event(self, event: Hashable) -> None:
        self._everyone_joins(self.events.get(event, {}))

    def sync_device(self) -> None:
        for key, clock in self.streams.items():
            if key in clock:
                self.host[key] = max(self.host.get(key, -1), clock[key])
        for clock in self.streams.values():
            _join(clock, self.host)

    def ordered(self, earlier_actor: Hashable, earlier_seq: int, actor: Hashable) -> bool:
        """Whether an access by `earlier_actor` (number `earlier_seq`) happens before what
        `actor` does now. The host queued all device work, so its own earlier accesses
        are before anything; an actor is ordered with itself."""
        if earlier_actor == HOST or earlier_actor == actor:
            return True
        return earlier_seq <= self.stream(actor).get(earlier_actor, -1)
