"""Sides of configuration tests (D-18): tests of one configuration value (an option of `self`, a
parameter the function never rebinds) against different constants are exclusive; a wait made on
one side orders only work on sides not exclusive with it, also after the branches join; the rest
of a function after one side leaves is on the other side; a call made on one side of such a test
runs only the callee's work of that side, and one of two streams the callee chose by it is that
side's stream."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from streamlint.model.domain.order import AccessEvent, Order
from streamlint.model.domain.paths import Path, Root
from streamlint.model.domain.sides import configuration_sides, exclusive
from streamlint.model.domain.streams import StreamRef
from streamlint.model.file_model import analyze_file


def found(source: str) -> list[tuple[str, str]]:
    model = analyze_file(cst.parse_module(textwrap.dedent(source)), "prog.py")
    return sorted((h.kind.value, h.function.rsplit(".", 1)[1]) for h in model.hazards)


def test_tests_of_one_value_against_different_constants_are_exclusive():
    assert exclusive(("f?mode==2:1",), ("f?mode==3:1",))
    assert exclusive(("f?mode==2:1",), ("f?mode==2:0",))
    assert not exclusive(("f?mode==2:0",), ("f?mode==3:1",))  # mode is 3, or neither
    assert not exclusive(("f?mode==2:1",), ("f?rank==3:1",))
    assert not exclusive(("f?mode==2:1",), ("f?mode==2:1",))
    assert exclusive(("<self>.method==1:1",), ("<self>.method==2:1",))


def test_only_sides_named_by_a_value_are_configuration():
    assert configuration_sides(("f?3:1", "f?mode==2:1", "<self>.fused:0", "site>g?0:1")) == \
        frozenset({"f?mode==2:1", "<self>.fused:0"})


def test_a_wait_on_one_side_orders_nothing_on_an_exclusive_side_after_the_join():
    one, two, current = StreamRef.created("f#1", "torch"), StreamRef.created("f#2", "torch"), StreamRef.ambient("torch")
    buf = Path(Root.fresh("f#0"))
    order = Order().add(AccessEvent(buf, True, one, "f#3"))
    # `if mode == 2: current waits for one` (joined with the path where mode is not 2), then
    # `if mode == 3: two waits for current`
    joined = order.join(order.wait(current, one, ("f?mode==2:1",)))
    other = joined.join(joined.wait(two, current, ("f?mode==3:1",)))
    assert other.conflicts(AccessEvent(buf, False, two, "f#4", branch=("f?mode==3:1",)))
    assert not other.conflicts(AccessEvent(buf, False, current, "f#5", branch=("f?mode==2:1",)))
    assert not other.conflicts(AccessEvent(buf, False, current, "f#6"))  # on some path it waited: the may clock


BOTTLENECK = """
import torch


class Block:
    def __init__(self, method):
        self.method = method
        self.stream1 = torch.cuda.Stream()
        self.stream2 = torch.cuda.Stream()

    def forward(self, x):
        halo = torch.empty(8, device="cuda")
        with torch.cuda.stream(self.stream1):
            halo.copy_(x)
        if self.method == 2:
            torch.cuda.current_stream().wait_stream(self.stream1)
            y = x + halo
        elif self.method == 3:
            y = x * 2
        if self.method == 3:
            self.stream2.wait_stream(torch.cuda.current_stream())
            {fix}
            with torch.cuda.stream(self.stream2):
                z = halo.clone()
            torch.cuda.current_stream().wait_stream(self.stream2)
        return y


def by_parameter(x, method):
    stream1, stream2 = torch.cuda.Stream(), torch.cuda.Stream()
    halo = torch.empty(8, device="cuda")
    with torch.cuda.stream(stream1):
        halo.copy_(x)
    if method == 1:
        y = x + 1
    elif method == 2:
        torch.cuda.current_stream().wait_stream(stream1)
        y = x + halo
    if method == 3:
        stream2.wait_stream(torch.cuda.current_stream())
        {fix2}
        with torch.cuda.stream(stream2):
            z = halo.clone()
        torch.cuda.current_stream().wait_stream(stream2)
    return y
"""


def test_a_wait_under_one_configuration_does_not_order_another_configurations_work():
    bug = BOTTLENECK.replace("{fix}", "pass").replace("{fix2}", "pass")
    fixed = BOTTLENECK.replace("{fix}", "self.stream2.wait_stream(self.stream1)").replace(
        "{fix2}", "stream2.wait_stream(stream1)")
    assert found(bug) == [("read_after_write", "by_parameter"), ("read_after_write", "forward")]
    assert found(fixed) == []


BUCKETS = """
from contextlib import nullcontext

import torch


class BucketGroup:
    def __init__(self, buckets, overlap_grad_reduce):
        self.buckets = buckets
        self.overlap_grad_reduce = overlap_grad_reduce
        self.communication_stream = None  # set by the DDP wrapper
        self.grad_reduce_handle = None

    def start_grad_sync(self):
        for bucket in self.buckets:
            if bucket.gradient_scaling_factor != 1.0:
                bucket.grad_data *= bucket.gradient_scaling_factor
        if self.overlap_grad_reduce:
            stream_context = torch.cuda.stream(self.communication_stream)
            self.communication_stream.wait_stream(torch.cuda.default_stream())
        else:
            stream_context = nullcontext()
        with stream_context:
            for bucket in self.buckets:
                torch.distributed.all_reduce(bucket.grad_data, async_op=self.overlap_grad_reduce)

    def finish_grad_sync(self):
        if {test}:
            torch.cuda.default_stream().wait_stream(self.communication_stream)
            return
        self.start_grad_sync()
"""


@pytest.mark.parametrize("test, at_call", [("self.overlap_grad_reduce", False), ("not self.overlap_grad_reduce", True)])
def test_a_call_on_one_side_of_an_option_test_runs_the_callees_work_of_that_side(test, at_call):
    # After `if self.overlap_grad_reduce: ... return` the call runs with the option off: the
    # callee's work is on the current stream (its `nullcontext()` side), not on the communication
    # stream, which waits for the default stream only (a race of the other side, reported there).
    model = analyze_file(cst.parse_module(textwrap.dedent(BUCKETS.replace("{test}", test))), "prog.py")
    calls = [h for h in model.hazards if h.function.endswith("finish_grad_sync") and h.placement.name == "AT_CALL"]
    assert bool(calls) == at_call


def test_a_callees_side_of_a_parameter_test_is_decided_by_the_argument():
    from streamlint.model.domain.state import State
    from streamlint.model.domain.values import FALSE, NONE, TRUE, UNKNOWN, AbsValue, ValueKind
    from streamlint.model.summary.apply import Binding, _Mapper

    def side(tag: str, value: AbsValue):
        return _Mapper(Binding("f#1", (("p", value),)), State(), "m.g")._side(tag)

    stream = AbsValue(ValueKind.STREAM, "torch", stream=StreamRef.ambient("torch"))
    assert side("m.g?p:1", TRUE) == "" and side("m.g?p:1", FALSE) is None
    assert side("m.g?p is None:1", NONE) == "" and side("m.g?p is None:1", stream) is None
    assert side("m.g?p is None:0", stream) == ""
    assert side("m.g?p==0:1", AbsValue(ValueKind.HOST_NUMBER, target="0")) == ""
    assert side("m.g?p:1", UNKNOWN) == "f#1>m.g?p:1"  # not told: this call's side
    assert side("m.g?p:1", stream.join_none()) == "f#1>m.g?p:1"


OTHER_SIDE = """
import torch


class Bucket:
    def __init__(self, overlap_comm, contiguous):
        self.overlap_comm = overlap_comm
        self.contiguous = contiguous
        self.reduction_stream = torch.cuda.Stream()
        self.buffers = [torch.empty(8, device="cuda") for _ in range(2)]
        self.index = 0

    def _reduce(self):
        if self.overlap_comm:
            stream = self.reduction_stream
            stream.wait_stream(torch.cuda.current_stream())
            torch.cuda.current_stream().wait_stream(stream)
        else:
            stream = torch.cuda.current_stream()
        with torch.cuda.stream(stream):
            self.buffers[self.index].mul_(0.5)

    def add(self, grad):
        if self.contiguous:
            self._reduce()
        if {test}:
            self.index = 1 - self.index
        self.buffers[self.index].copy_(grad)
"""


@pytest.mark.parametrize("test", ["self.overlap_comm", "self.contiguous and self.overlap_comm"])
def test_the_other_side_of_a_configuration_test_keeps_only_that_sides_stream(test):
    # the path that skips the flip is the option's off side (or, for `a and b`, off for the work
    # done with `a` on), where `_reduce` used the current stream: the refill of the same buffer
    # there is ordered; with the option on, the refill is of the other buffer, and the next
    # call's refill of this one comes after the current stream waited for the reduction (D-18, D-25)
    assert found(OTHER_SIDE.format(test=test)) == []


def test_a_ring_counter_moved_on_names_the_other_buffer_and_the_next_call_the_same_one():
    source = OTHER_SIDE.format(test="self.overlap_comm").replace(
        "            torch.cuda.current_stream().wait_stream(stream)\n", "")
    # the current stream never waits for the reduction stream: the next call's refill meets
    # this call's reduction of the same buffer (class composition), reported at the fork
    assert found(source) == [("write_after_write", "_reduce")]


def test_a_device_sync_on_one_side_does_not_complete_work_done_on_an_exclusive_side():
    side, current = StreamRef.created("f#1", "torch"), StreamRef.ambient("torch")
    buf = Path(Root.self_()).attr("bucket")
    # the reduction read the bucket with the option off; a later call syncs the device with it on:
    # an option of the object is the same in every call, so on the path of that read no sync is made
    order = Order().add(AccessEvent(buf, False, side, "f#2", branch=("<self>.reduce_scatter:0",)))
    refill = AccessEvent(buf, True, current, "f#3")
    assert order.synchronize_device(("<self>.reduce_scatter:1",)).conflicts(refill)
    assert not order.synchronize_device(("<self>.reduce_scatter:0",)).conflicts(refill)
    assert not order.synchronize_device(("f?3:1",)).conflicts(refill)  # (a one-off test: the may clock)
    assert not order.synchronize_device().conflicts(refill)
    # the host waiting for the side stream there does not either
    assert order.synchronize_stream(side, ("<self>.reduce_scatter:1",)).conflicts(refill)
    assert not order.synchronize_stream(side).conflicts(refill)
