"""The domain's speed structures change no answer: the state's frozen maps, the cached hashes,
and the order's incremental indexes (Order's maps by number, root and clock) give what a from-scratch order
gives after any sequence of operations."""

from __future__ import annotations

import copy
import pickle
import random
from dataclasses import dataclass

from streamlint.model.domain.order import AccessEvent, Order
from streamlint.model.domain.paths import Index, Path, Root
from streamlint.model.domain.persistent import PMap
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef
from streamlint.model.domain.values import UNKNOWN, AbsValue, Memory, buffer


def test_frozen_map_reads_compares_and_iterates_in_one_order():
    a = PMap({"b": 2, "a": 1})
    b = PMap({"a": 1}).set("b", 2)
    assert a == b and hash(a) == hash(b)
    assert list(a) == [("a", 1), ("b", 2)]  # by the key's repr, whatever the insertion order
    assert dict(a) == {"a": 1, "b": 2} and a.get("c") is None and "a" in a and len(a) == 2
    assert a != PMap({"a": 1}) and a.set("a", 1) == a
    assert pickle.loads(pickle.dumps(a)) == a and copy.deepcopy(a) == a


def test_state_bindings_are_the_same_whichever_order_they_were_made_in():
    x, y = buffer(Path(Root.fresh("f#1")), Memory.DEVICE), buffer(Path(Root.fresh("f#2")), Memory.DEVICE)
    one = State().bind("x", x).bind("y", y)
    other = State().bind("y", y).bind("x", x)
    assert one == other and hash(one) == hash(other)
    assert one.value("x") == x and one.value("z") == UNKNOWN
    assert one.holds(x.identity) and not one.bind("x", UNKNOWN).holds(x.identity)
    assert State(names=(("x", x),)) == State().bind("x", x)  # built from pairs, as before


def test_cached_hash_is_the_dataclass_hash_and_is_not_pickled():
    @dataclass(frozen=True)
    class Plain:
        root: Root
        steps: tuple

    path = Path(Root.local("x"), ("a", Index.const_(1)))
    assert hash(path) == hash(Plain(path.root, path.steps)) == hash(path)
    assert "_hash" not in pickle.loads(pickle.dumps(path)).__dict__


STREAMS = [StreamRef.ambient("torch"), StreamRef.legacy(), StreamRef.created("f#9", "torch"),
           StreamRef.created("f#8", "torch", blocking=False)]
PATHS = [Path(Root.local("x")), Path(Root.local("x"), ("a",)), Path(Root.local("y")),
         Path(Root.fresh("f#1")), Path(Root.self_(), ("buf", Index.const_(0)))]
EVENTS = [Path(Root.local("e")), Path(Root.local("f"))]


def _step(order: Order, rng: random.Random, n: int) -> tuple[Order, list]:
    """One random operation; returns the new order and what it reported."""
    op, stream = rng.randrange(8), rng.choice(STREAMS)
    access = AccessEvent(rng.choice(PATHS), rng.random() < 0.5, stream, f"f#{rng.randrange(6)}")
    if op <= 2:
        return order.add(access), order.conflicts(access)
    if op == 3:
        return order.wait(stream, rng.choice(STREAMS)), []
    if op == 4:
        return order.synchronize_stream(stream), []
    if op == 5:
        return order.record(rng.choice(EVENTS), stream).wait_event(rng.choice(STREAMS), rng.choice(EVENTS)), []
    if op == 6:
        return order.release(access)
    return order.wait_any(stream, rng.sample(STREAMS, 2)).record_stream(access.path, stream), []


def test_incremental_indexes_answer_as_a_fresh_order_does():
    rng = random.Random(27)
    for _ in range(60):
        kept, fresh = Order(), Order()
        for n in range(40):
            state = rng.getstate()
            kept, found = _step(kept, rng, n)
            rng.setstate(state)
            fresh, found_fresh = _step(fresh, rng, n)
            fresh = Order(fresh.pending, fresh.events, fresh.kept_for)  # no index carried over
            assert kept == fresh
            assert found == found_fresh  # the same conflicts, in the same order
            probe = AccessEvent(rng.choice(PATHS), True, rng.choice(STREAMS), "probe#0")
            assert kept.conflicts(probe) == fresh.conflicts(probe)


def test_joined_and_copied_orders_keep_answering():
    order = Order()
    for i, path in enumerate(PATHS):
        order = order.add(AccessEvent(path, True, STREAMS[i % 3], f"f#{i}"))
    other = order.wait(STREAMS[0], STREAMS[2]).synchronize_stream(STREAMS[1])
    joined = order.join(other)
    for copied in (pickle.loads(pickle.dumps(joined)), copy.deepcopy(joined)):
        assert copied == joined
        probe = AccessEvent(PATHS[0], False, STREAMS[3], "probe#1")
        assert copied.add(probe).conflicts(probe) == joined.add(probe).conflicts(probe)
        assert copied.wait(STREAMS[3], STREAMS[0]) == joined.wait(STREAMS[3], STREAMS[0])


def test_a_value_is_held_while_any_name_or_container_holds_it():
    memory = Path(Root.fresh("f#5"))
    held = buffer(memory, Memory.DEVICE)
    in_list = AbsValue(element=held)
    state = State().bind("a", held).bind("b", held)
    assert state.bind("a", UNKNOWN).holds(memory)
    assert not state.bind("a", UNKNOWN).bind("b", UNKNOWN).holds(memory)
    assert state.bind("a", UNKNOWN).bind("b", in_list).holds(memory)
    assert state.store(Path(Root.self_(), ("x",)), held).bind("a", UNKNOWN).bind("b", UNKNOWN).holds(memory)


class _Key:
    """Keys of few hashes: equal hashes force the trie's deepest levels and its buckets."""

    def __init__(self, name: int) -> None:
        self.name = name

    def __hash__(self) -> int:
        return (1, 2, -1, 2**63, 2**64 + 1)[self.name % 5]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and other.name == self.name


def test_persistent_map_answers_as_a_dict_and_keeps_every_version():
    rng = random.Random(13)
    for _ in range(40):
        versions = [(PMap(), {})]
        for _ in range(150):
            m, d = versions[rng.randrange(len(versions))]  # any earlier version, not only the last
            key = rng.choice([rng.randrange(60), str(rng.randrange(40)), _Key(rng.randrange(12))])
            if rng.random() < 0.65:
                value = rng.randrange(4)
                m, d = m.set(key, value), {**d, key: value}
            else:
                m, d = m.delete(key), {k: v for k, v in d.items() if k != key}
            versions.append((m, d))
        for m, d in versions:
            assert len(m) == len(d) and dict(m.items()) == d and all(m[k] == v and k in m for k, v in d.items())
        for (a, da), (b, db) in zip(rng.sample(versions, 30), rng.sample(versions, 30)):
            assert (a == b) == (da == db) and (da != db or hash(a) == hash(b))
        last = versions[-1][0]
        assert pickle.loads(pickle.dumps(last)) == last and copy.deepcopy(last) == last
