"""The sanitizer's happens-before checker on hand-written logs and on PyTorch CSAN's own
TestEventHandler sequences (re-expressed in the log format, data/sanitize/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamlint.runtime.sanitize import log
from streamlint.runtime.sanitize.checker import check

DATA = Path(__file__).parent / "data" / "sanitize"
CSAN = json.loads((DATA / "csan_event_handler.json").read_text())["sequences"]


@pytest.mark.parametrize("name", sorted(CSAN))
def test_agrees_with_csan_event_handler(name):
    seq = CSAN[name]
    events = [log.Event.from_json(e) for e in seq["events"]]
    findings = check(events)
    assert sorted({f.current.index for f in findings}) == sorted(seq["bad"])
    if "errors" in seq:
        assert len(findings) == seq["errors"]


def ev(kind, **kw):
    return log.Event(kind, **kw)


A, B = 7, 9  # two streams


def test_views_conflict_where_their_bytes_overlap():
    base = 0x10000
    events = [
        ev("launch", stream=A, writes=[(base, 1024)], name="fill"),
        # A view starting 512 bytes in: CSAN's data_ptr keys would miss it.
        ev("launch", stream=B, reads=[(base + 512, 256)], name="consume"),
        # Bytes the write did not touch: no conflict.
        ev("launch", stream=B, reads=[(base + 1024, 256)], name="consume_other"),
    ]
    [f] = check(events)
    assert (f.code, f.current.name, f.earlier.name) == ("SL401", "consume", "fill")
    assert (f.lo, f.hi) == (base + 512, base + 768)


def test_write_after_unordered_read_is_sl402_and_a_wait_orders_it():
    events = [ev("launch", stream=A, reads=[(0, 64)]), ev("launch", stream=B, writes=[(0, 64)])]
    assert [f.code for f in check(events)] == ["SL402"]
    events.insert(1, ev("record", stream=A, event=1))
    events.insert(2, ev("wait", stream=B, event=1))
    assert check(events) == []


def test_host_read_of_an_async_copy_before_sync_is_sl403():
    pinned = 0x7F0000
    copy = ev("copy", stream=0, reads=[(0x100, 64)], writes=[(pinned, 64)], name="copy_", stack=["x.py:3 in run"])
    read = ev("host", reads=[(pinned, 64)], name="sum", stack=["x.py:4 in run"])
    [f] = check([copy, read])
    assert f.code == "SL403" and f.earlier.stack == ("x.py:3 in run",) and f.current.stack == ("x.py:4 in run",)
    assert check([copy, ev("sync", scope="stream", stream=0), read]) == []
    assert check([copy, ev("record", stream=0, event=3), ev("sync", scope="event", event=3), read]) == []
    assert check([copy, ev("sync", scope="device"), read]) == []
    # A sync of another stream says nothing about this copy.
    assert [f.code for f in check([copy, ev("sync", scope="stream", stream=B), read])] == ["SL403"]


def test_host_refill_of_a_pinned_buffer_under_a_pending_copy_is_sl402():
    staging = 0x7F0000
    events = [
        ev("copy", stream=0, reads=[(staging, 64)], writes=[(0x100, 64)]),
        ev("host", reads=[(0x9000, 64)], writes=[(staging, 64)], name="copy_"),
    ]
    [f] = check(events)
    assert f.code == "SL402" and f.current.actor == "host"


def test_host_accesses_are_before_later_device_work():
    events = [ev("host", writes=[(0x7F0000, 64)]), ev("copy", stream=A, reads=[(0x7F0000, 64)], writes=[(0, 64)])]
    assert check(events) == []


def _reuse(record_stream: bool, owner_waits: bool = False):
    blk = (0x20000, 4096)
    events = [
        ev("alloc", stream=A, ptr=blk[0], size=blk[1]),
        ev("launch", stream=A, writes=[blk], name="arange"),
        ev("record", stream=A, event=1),
        ev("wait", stream=B, event=1),
        ev("launch", stream=B, reads=[blk], name="mul", stack=["p.py:20 in run"]),
    ]
    if record_stream:
        events.append(ev("record-stream", ptr=blk[0], stream=B))
    if owner_waits:
        events += [ev("record", stream=B, event=2), ev("wait", stream=A, event=2)]
    events += [
        ev("free", ptr=blk[0], stack=["p.py:21 in run"]),
        ev("alloc", stream=A, ptr=blk[0], size=blk[1]),
        ev("launch", stream=A, writes=[blk], name="full", stack=["p.py:23 in run"]),
    ]
    return check(events)


def test_allocator_reuse_without_record_stream_is_sl404_with_three_stacks():
    [f] = _reuse(record_stream=False)
    assert f.code == "SL404"
    assert (f.current.name, f.earlier.name) == ("full", "mul")
    assert f.freed_at == ("p.py:21 in run",)
    assert "freed at" in f.describe() and "p.py:20 in run" in f.describe()


def test_record_stream_or_an_owner_wait_before_the_free_makes_reuse_safe():
    assert _reuse(record_stream=True) == []
    assert _reuse(record_stream=False, owner_waits=True) == []


def test_legacy_default_stream_orders_blocking_streams_only():
    events = [ev("stream", stream=A, blocking=True), ev("launch", stream=A, writes=[(0, 64)]),
              ev("launch", stream=0, reads=[(0, 64)])]
    assert check(events) == []
    events[0] = ev("stream", stream=A, blocking=False)
    assert [f.code for f in check(events)] == ["SL401"]
    # And the other way: a blocking stream waits for earlier default-stream work.
    events = [ev("stream", stream=A, blocking=True), ev("launch", stream=0, writes=[(0, 64)]),
              ev("launch", stream=A, reads=[(0, 64)])]
    assert check(events) == []


def test_a_new_stream_starts_from_the_host_clock():
    events = [ev("launch", stream=A, writes=[(0, 64)]), ev("sync", scope="stream", stream=A),
              ev("launch", stream=B, reads=[(0, 64)])]
    assert check(events) == []


def test_fresh_allocation_forgets_old_history():
    events = [ev("launch", stream=A, writes=[(0, 64)]), ev("free", ptr=0, size=64),
              ev("alloc", stream=B, ptr=0, size=64), ev("launch", stream=B, reads=[(0, 64)])]
    assert check(events) == []


def test_log_round_trip_and_errors():
    events = [ev("launch", stream=A, reads=[(1, 2)], writes=[(3, 4)], name="k", stack=["a.py:1 in f"]),
              ev("sync", scope="device")]
    assert list(log.parse(log.dumps(events).splitlines())) == events
    with pytest.raises(ValueError, match="line 1"):
        list(log.parse(['{"kind": "teleport"}']))
    with pytest.raises(ValueError, match="scope"):
        ev("sync")
