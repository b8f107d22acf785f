"""Steady-state selection, and provoking: where each rule's delay goes, how the probes
place it in the running program (with a stand-in tracer), how outputs are compared."""

from __future__ import annotations

import builtins
import time

import pytest

from streamlint.runtime import harness, provoke
from streamlint.runtime.runner import lint
from streamlint.runtime.steady import warmup_count

from .rc_data import HERE


@pytest.mark.parametrize(
    "durations, expected",
    [
        ([], 0),
        ([5.0], 0),  # one execution: kept, warm-up included
        ([120.0, 1.0, 1.1, 0.9], 1),  # a JIT compile on the first call
        ([1.0, 1.0, 1.0], 1),  # the first is always left out when there are others
        ([90.0, 30.0, 1.0, 1.1, 1.0], 2),  # a warm-up over two steps
        ([50.0, 40.0], 1),  # at least one execution is kept
    ],
)
def test_warmup_count(durations, expected):
    assert warmup_count(durations) == expected


def _plan(example: str, code: str):
    text, diags = lint(HERE / "examples" / example)
    d = next(d for d in diags if d.code == code)
    return d, provoke.plan(d.code, d.row, d.message)


def test_sl401_delays_the_named_producer_stream_before_the_producer():
    d, (provoked, control) = _plan("race_missing_wait.py", "SL401")
    assert provoked.at == f"SL401:{d.row}:ref:20" and provoked.stream == "s1" and not provoked.host
    assert control.at == f"SL401:{d.row}" and control.stream == "s2"


def test_sl404_control_takes_the_stream_current_at_the_allocation():
    # (race_missing_wait.py no longer gives this finding: it is a cascade of the SL401 at line 22,
    # whose wait, assumed in place once reported, orders `s1` before the loop's `s2.synchronize()`)
    msg = ("`x` was allocated on the current stream (line 12), is used on `s1` here, then released when `main` "
           "returns without `record_stream`: its memory may go to new work on the current stream too early")
    provoked, control = provoke.plan("SL404", 20, msg)
    assert provoked.at == "SL404:20" and provoked.stream == "s1"
    # "allocated on the current stream (line 12)": current where line 12 ran
    assert control.stream is None and control.stream_at == "SL404:20:ref:12"


def test_host_side_rules_delay_the_copy_and_wait_on_the_host_in_the_control():
    msg = ("the host reads `host` here, but the asynchronous copy into it on the current stream (line 16) "
           "may not have finished")  # fmt: skip
    provoked, control = provoke.plan("SL403", 17, msg)
    assert provoked.at == "SL403:17:ref:16" and provoked.stream is None
    assert control.at == "SL403:17" and control.host
    assert provoke.plan("SL502", 17, msg) is None


def test_compare_outputs():
    same = provoke.compare_outputs(["checksum 1\n", "checksum 1"], ["checksum 1"])
    assert (same["comparable"], same["runs"], same["differing"]) == (True, 2, 0)
    assert same["deterministic"] is None  # one unprovoked run: not known
    assert provoke.compare_outputs(["a", "b", None], ["a"])["differing"] == 1
    assert not provoke.compare_outputs(["a"], [None])["comparable"]
    assert not provoke.compare_outputs([""], [""])["comparable"]  # a script that prints nothing


def test_output_is_evidence_only_when_the_unprovoked_runs_agree():
    # an unseeded training loop: the two control runs print different losses
    varying = provoke.compare_outputs(["loss 69.83", "loss 69.84"], ["loss 69.71", "loss 69.81"])
    assert not varying["comparable"] and varying["deterministic"] is False and varying["differing"] == 0
    assert "not deterministic" in varying["why"]
    # one control run, compared with the plain run instead
    assert provoke.compare_outputs(["x"], ["loss 1"], plain="loss 2")["deterministic"] is False
    steady = provoke.compare_outputs(["bad", "ok"], ["ok", "ok\n"], plain="ok")
    assert steady["comparable"] and steady["deterministic"] and steady["differing"] == 1


def test_the_provoking_delay_is_sized_from_the_plain_run_s_launch_gap():
    assert provoke.sized_delays([]) == [provoke.SPIN_MS]
    # a producer compiled on its first call: 80 ms from its statement to the consumer's launch
    sized = provoke.sized_delays([80.0, 0.5])
    assert sized[0] >= 80.0 + provoke.SPIN_MS and sized[1] < sized[0]
    assert provoke.sized_delays([1e6]) == [provoke.MAX_SPIN_MS]
    assert [provoke.delay_for(sized, k) for k in range(3)] == [sized[0], sized[1], sized[1]]
    assert provoke.delay_for(12.0, 5) == 12.0


class FakeBackend:
    def __init__(self):
        self.events = []

    def range(self, name):
        from contextlib import nullcontext

        self.events.append(("range", name))
        return nullcontext()

    def spin(self, handle, ms):
        self.events.append(("spin", handle, ms))


class FakeStream:
    def __init__(self, ptr):
        self.ptr = ptr


@pytest.fixture
def probes():
    saved = {n: getattr(builtins, n, None) for n in ("_streamlint_rf", "_streamlint_call", "_streamlint_truth")}
    yield
    for name, value in saved.items():
        if value is None:
            delattr(builtins, name)
        else:
            setattr(builtins, name, value)


def test_the_probe_spins_on_the_stream_named_in_the_statement_s_frame(probes):
    backend = FakeBackend()
    harness.install_probes(backend, {"at": "SL401:9:ref:7", "stream": "s1", "ms": 50.0})
    s1 = FakeStream(0xABC)  # noqa: F841 - read by the probe through this frame
    with builtins._streamlint_rf("SL401:9:ref:7"):
        pass
    with builtins._streamlint_rf("SL401:9"):
        pass
    assert backend.events == [("range", "streamlint::spin::0xabc"), ("spin", 0xABC, 50.0),
                              ("range", "SL401:9:ref:7"), ("range", "SL401:9")]  # fmt: skip


def test_the_probe_remembers_the_allocating_stream(probes, monkeypatch):
    backend = FakeBackend()
    current = iter([0x11, 0x22])
    monkeypatch.setattr(harness, "current_handle", lambda: next(current))
    harness.install_probes(backend, {"at": "SL404:20", "stream": None, "stream_at": "SL404:20:ref:12", "ms": 5.0})
    builtins._streamlint_rf("SL404:20:ref:12")  # the allocation runs while 0x11 is current
    builtins._streamlint_rf("SL404:20")  # the use, while 0x22 is current
    assert ("spin", 0x11, 5.0) in backend.events


def test_a_host_side_control_waits_on_the_host(probes):
    backend = FakeBackend()
    harness.install_probes(backend, {"at": "SL403:17", "stream": None, "host": True, "ms": 30.0})
    t0 = time.perf_counter()
    builtins._streamlint_truth("SL403:17", lambda: True)
    assert time.perf_counter() - t0 >= 0.03 and not any(e[0] == "spin" for e in backend.events)


def test_the_probe_delays_each_execution_by_its_own_size(probes):
    backend = FakeBackend()
    harness.install_probes(backend, {"at": "SL401:9:ref:7", "stream": None, "ms": [120.0, 50.0]})
    for _ in range(3):
        builtins._streamlint_rf("SL401:9:ref:7")
    assert [e[2] for e in backend.events if e[0] == "spin"] == [120.0, 50.0, 50.0]
