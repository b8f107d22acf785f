"""Happens-before of the v3 domain against CSAN's semantics (torch/cuda/_sanitizer.py):
each case is a sequence of accesses and orderings, and the conflicts it must (not) give."""

from streamlint.model.domain.order import DONE, HOST, AccessEvent, ConflictKind, Order
from streamlint.model.domain.paths import Index, Path, Root
from streamlint.model.domain.streams import UNKNOWN_STREAM, StreamRef, StreamRefKind
from streamlint.model.domain.values import AbsValue, ValueKind

A = StreamRef.created("f#1", "torch")
B = StreamRef.created("f#2", "torch")
BUF = Path(Root.local("buf"))
EV = Path(Root.fresh("f#9"))


def run(order: Order, stream: StreamRef, write: bool, site: str, path: Path = BUF):
    event = AccessEvent(path, write, stream, site)
    return order.add(event), order.conflicts(event)


def test_read_after_write_on_another_stream_conflicts():
    order, _ = run(Order(), A, True, "w")
    _, found = run(order, B, False, "r")
    assert [c.kind for c in found] == [ConflictKind.READ_AFTER_WRITE]


def test_same_stream_is_ordered():
    order, _ = run(Order(), A, True, "w")
    _, found = run(order, A, False, "r")
    assert found == []


def test_wait_stream_orders():
    order, _ = run(Order(), A, True, "w")
    order = order.wait(B, A)
    _, found = run(order, B, False, "r")
    assert found == []


def test_wait_is_transitive_through_a_third_stream():
    c = StreamRef.created("f#3", "torch")
    order, _ = run(Order(), A, True, "w")
    order = order.wait(c, A).wait(B, c)
    assert run(order, B, False, "r")[1] == []


def test_event_recorded_before_the_write_orders_nothing_about_it():
    order = Order().record(EV, A)
    order, _ = run(order, A, True, "w")
    order = order.wait_event(B, EV)
    assert [c.kind for c in run(order, B, False, "r")[1]] == [ConflictKind.READ_AFTER_WRITE]


def test_event_recorded_after_the_write_orders_it():
    order, _ = run(Order(), A, True, "w")
    order = order.record(EV, A).wait_event(B, EV)
    assert run(order, B, False, "r")[1] == []


def test_host_read_of_async_copy_needs_a_sync():
    order, _ = run(Order(), A, True, "copy")
    assert [c.kind for c in run(order, HOST, False, "read")[1]] == [ConflictKind.HOST_READ_BEFORE_SYNC]
    assert run(order.synchronize_stream(A), HOST, False, "read")[1] == []
    assert run(order.synchronize_device(), HOST, False, "read")[1] == []


def test_host_refill_while_a_copy_reads():
    order, _ = run(Order(), A, False, "copy")
    assert [c.kind for c in run(order, HOST, True, "refill")[1]] == [ConflictKind.HOST_WRITE_BEFORE_SYNC]


def test_a_wait_on_one_path_orders_on_the_may_clock():
    order, _ = run(Order(), A, True, "w")
    joined = order.wait(B, A).join(order)
    assert run(joined, B, False, "r")[1] == []
    pending = joined.pending[0]
    assert B in pending.seen and B not in pending.seen_on_every_path


def test_ring_slots_differ_within_a_step_and_meet_across_steps():
    k0 = Path(Root.local("bufs")).element(Index.slot("k", 2, 0))
    k1 = Path(Root.local("bufs")).element(Index.slot("k", 2, 1))
    order, _ = run(Order(), A, True, "w", k0)
    assert run(order, B, False, "r", k1)[1] == []
    later = order.renamed(lambda p: p.shifted("k", 1))  # next iteration: the old slot is k + 1
    assert [c.kind for c in run(later, B, False, "r", k1)[1]] == [ConflictKind.READ_AFTER_WRITE]


def test_unknown_indexes_meet_in_the_weak_slot_only():
    """D-11: a write under a key the text does not tell and a read under another such key meet
    (one weak slot per container); a key the text tells meets no unknown one."""
    one = Path(Root.local("bufs")).element(Index.any_())
    order, _ = run(Order(), A, True, "w", one)
    assert [c.kind for c in run(order, B, False, "r", one)[1]] == [ConflictKind.READ_AFTER_WRITE]
    assert run(order, B, False, "r", Path(Root.local("bufs")).element(Index.const_(0)))[1] == []


def test_release_without_record_stream_and_with_it():
    alloc = Path(Root.fresh("f#5"))
    order, _ = run(Order(), A, True, "alloc", alloc)
    order = order.wait(B, A)
    order, _ = run(order, B, False, "use", alloc)
    released = AccessEvent(alloc, True, A, "free")
    assert [c.kind for c in order.release(released)[1]] == [ConflictKind.RELEASE_WITHOUT_RECORD]
    assert order.record_stream(alloc, B).release(released)[1] == []
    # record_stream before the use covers it too: the allocator waits at the release
    early = Order().record_stream(alloc, B)
    early, _ = run(early, B, False, "use", alloc)
    assert early.release(released)[1] == []


def test_a_record_covers_the_uses_its_stream_waited_for_and_the_covering_use_is_named_first():
    c = StreamRef.created("f#3", "torch")
    alloc = Path(Root.fresh("f#5"))
    order, _ = run(Order(), A, True, "alloc", alloc)
    order = order.wait(B, A).wait(c, A)
    order, _ = run(order, c, False, "side use", alloc)
    order = order.wait(B, c)  # B joins the side stream after its use
    order, _ = run(order, B, False, "use", alloc)
    released = AccessEvent(alloc, True, A, "free")
    found = order.release(released)[1]
    named = min(found, key=lambda conflict: conflict.behind)
    assert sorted(f.earlier.site for f in found) == ["side use", "use"] and named.earlier.site == "use"
    # one record on B, where the release waits for what B queued, covers the side stream's use too
    assert order.record_stream(alloc, B).release(released)[1] == []
    assert [f.earlier.site for f in order.record_stream(alloc, c).release(released)[1]] == ["use"]


def test_caller_stream_and_parameter_stream_are_not_known_distinct():
    ambient = StreamRef.ambient("torch")
    param = StreamRef.at(Path(Root.param(0, "s")))
    order, _ = run(Order(), ambient, True, "w")
    assert run(order, param, False, "r")[1] == []  # the caller may pass its current stream
    assert [c.kind for c in run(order, A, False, "r")[1]] == [ConflictKind.READ_AFTER_WRITE]


# -- a stream known on each path (D-14): one of two streams, a may-set of two refs -------------
AMB = StreamRef.ambient("torch")
SIDE = StreamRef.at(Path(Root.self_(), ("side",))).entered()  # the object's side stream, entered


def test_two_streams_join_to_one_of_two_and_three_to_unknown():
    either = SIDE.joined(AMB)
    assert either is not None and either.kind is StreamRefKind.EITHER
    assert set(either.paths) == {SIDE, AMB} and either == AMB.joined(SIDE)  # in either order
    assert either.joined(AMB) == either and either.joined(SIDE) == either  # a member adds nothing
    assert either.joined(A) is None  # past two refs: unknown
    assert SIDE.joined(SIDE) == SIDE and AMB.joined(UNKNOWN_STREAM) is None
    assert not either.distinct_from(A) and not A.distinct_from(either)  # the order asks per path


def test_value_join_keeps_both_streams():
    joined = AbsValue(ValueKind.STREAM, "torch", stream=SIDE).join(AbsValue(ValueKind.STREAM, "torch", stream=AMB))
    assert joined.kind is ValueKind.STREAM and joined.stream == SIDE.joined(AMB)


def test_hazard_on_one_path_of_two_is_a_hazard():
    either = SIDE.joined(AMB)
    order, _ = run(Order(), AMB, True, "w")
    found = run(order, either, False, "r")[1]
    assert [(c.kind, c.later.stream) for c in found] == [(ConflictKind.READ_AFTER_WRITE, SIDE)]
    # written on one of two streams, read on the current one: the side stream's path races
    order, _ = run(Order(), either, True, "w")
    assert [c.earlier.stream for c in run(order, AMB, False, "r")[1]] == [SIDE]


def test_one_choice_of_two_streams_is_one_stream_on_each_path():
    either = SIDE.joined(AMB)
    order, _ = run(Order(), either, True, "w")
    assert run(order, either, False, "r")[1] == []  # the same choice: the same stream on each path


def test_a_wait_on_one_path_of_two_does_not_clear_the_other():
    either = B.joined(SIDE)
    order, _ = run(Order(), AMB, True, "w")
    order = order.wait(B, AMB)  # orders B's path only
    assert [c.later.stream for c in run(order, either, False, "r")[1]] == [SIDE]
    # written on one of two streams: the current stream waits for one of them only
    order, _ = run(Order(), either, True, "w")
    order = order.wait(AMB, B)
    assert [c.earlier.stream for c in run(order, AMB, False, "r")[1]] == [SIDE]


def test_a_wait_by_or_for_one_of_two_orders_on_the_may_clock_only():
    either = SIDE.joined(AMB)
    order, _ = run(Order(), AMB, True, "w")
    waited = order.wait(either, AMB)
    assert run(waited, either, False, "r")[1] == []  # unsure: silent
    pending = waited.pending[0]
    assert SIDE in pending.seen and SIDE not in pending.seen_on_every_path
    order, _ = run(Order(), SIDE, True, "w")
    waited = order.wait(A, either)
    assert run(waited, A, False, "r")[1] == []
    assert A in waited.pending[0].seen and A not in waited.pending[0].seen_on_every_path
    synced = order.synchronize_stream(either)
    assert run(synced, HOST, False, "read")[1] == [] and DONE not in synced.pending[0].seen_on_every_path
