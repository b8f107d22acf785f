"""Row 6.43: a function some other function's walk calls is read (its findings) in what its callers pass, not as no
caller in sight calls it; entries, cycles entered from nowhere and a function's own text about its callers keep
their walks. Row 3.26: an event the callers hold (at a parameter's path) recorded after the write orders a hand-out."""

from __future__ import annotations

import textwrap

import libcst as cst

from streamlint.model.file_model import analyze_file

PACKING = """
import torch


def _lengths(dones):
    lengths, order = torch.sort(dones, descending=True)
    cpu_lengths = lengths.to(device="cpu", non_blocking=True)
    return int(cpu_lengths[0].item()), order


def pack(features, dones):
    longest, order = _lengths(dones)
    return features.index_select(0, order), longest
"""


def _functions(source: str) -> set[str]:
    return {h.function for h in analyze_file(cst.parse_module(textwrap.dedent(source)), "prog.py").hazards}


def _host_reads(source: str) -> list:
    model = analyze_file(cst.parse_module(textwrap.dedent(source)), "prog.py")
    return [h for h in model.hazards if h.kind.value == "host_read_before_sync"]


def test_a_helper_its_only_caller_hands_host_tensors_is_silent():
    caller = PACKING + """
def losses(batch):
    return pack(batch["features"], torch.zeros(64))
"""
    assert not _host_reads(caller)


def test_a_helper_a_caller_hands_device_tensors_races():
    caller = PACKING + """
def losses(batch):
    return pack(batch["features"], batch["dones"].cuda())
"""
    assert [h.function for h in _host_reads(caller)] == ["prog._lengths"]


def test_a_helper_no_caller_calls_is_read_as_entered():
    assert [h.function for h in _host_reads(PACKING)] == ["prog._lengths"]


def test_a_caller_that_passes_nothing_told_reaches_the_walk_as_entered():
    caller = PACKING + """
def losses(batch, dones):
    return pack(batch["features"], dones)
"""
    assert [h.function for h in _host_reads(caller)] == ["prog._lengths"]


def test_a_cycle_entered_from_nowhere_keeps_its_walks():
    # two functions that only call each other: none of their walks is reached from an entry
    source = """
    import torch

    def ping(x, n):
        y = x.to("cpu", non_blocking=True)
        print(y.sum().item())
        if n:
            pong(x, n - 1)

    def pong(x, n):
        if n:
            ping(x, n - 1)
    """
    assert "prog.ping" in _functions(source)


def test_an_event_the_callers_handed_in_orders_the_memory_handed_back():
    source = """
    import torch

    class Dispatch(torch.autograd.Function):
        @staticmethod
        def backward(ctx, grad):
            with torch.cuda.stream(ctx.comm_stream):
                out = torch.zeros(8, device="cuda").add_(1)
                {record}
            return out
    """
    unordered = source.replace("{record}", "pass")
    ordered = source.replace("{record}", "ctx.finished.record(ctx.comm_stream)")
    assert "prog.Dispatch.backward" in _functions(unordered)
    assert "prog.Dispatch.backward" not in _functions(ordered)


def test_an_event_kept_on_self_stays_the_classs_to_wait_on():
    source = """
    import torch

    class Prefetcher:
        def __init__(self, loader):
            self.loader = iter(loader)
            self.stream = torch.cuda.Stream()
            self.ready = torch.cuda.Event()

        def next(self):
            batch = next(self.loader)
            with torch.cuda.stream(self.stream):
                batch = batch.cuda(non_blocking=True)
                self.ready.record(self.stream)
            return batch
    """
    assert "prog.Prefetcher.next" in _functions(source)
