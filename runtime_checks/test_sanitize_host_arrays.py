"""Host accesses of pinned NumPy arrays (record/host_arrays.py), on the CPU: a plain
NumPy array stands in for a pinned one, and a fake allocator module for cupyx."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from streamlint.runtime.sanitize.record import host_arrays
from streamlint.runtime.sanitize.record.host_arrays import HostArrayHooks, PinnedHostArray, tracked


@pytest.fixture
def log():
    events = []
    hooks = HostArrayHooks(lambda kind, **f: events.append((kind, f["name"], f["reads"], f["writes"])), "cupyx")
    host_arrays._SINK[0] = hooks.emit
    yield events
    hooks.uninstall()


def span(a):
    return (a.__array_interface__["data"][0], a.nbytes)


def test_reductions_conversions_and_element_reads_are_host_reads(log):
    a = tracked(np.arange(8, dtype=np.float32))
    float(a.sum())
    a[3]
    a.tolist()
    np.mean(a)
    assert [e[1] for e in log] == ["numpy.add", "numpy.__getitem__", "numpy.tolist", "numpy.mean"]
    assert all(e[0] == "host" and e[2] == [span(a)] and e[3] == [] for e in log)


def test_stores_are_host_writes_of_the_bytes_they_touch(log):
    a = tracked(np.zeros(8, dtype=np.float32))
    a[2:4] = 1.0
    np.copyto(a, np.ones(8, dtype=np.float32))
    np.multiply(a, 2, out=a)
    (kind, name, reads, writes) = log[0]
    assert name == "numpy.__setitem__" and reads == [] and writes == [(span(a)[0] + 8, 8)]
    assert log[1][1:] == ("numpy.copyto", [], [span(a)])
    assert log[2][1:] == ("numpy.multiply", [span(a)], [span(a)])


def test_a_view_is_no_access_and_stays_tracked(log):
    a = tracked(np.zeros(8, dtype=np.float32))
    v = a[4:]
    assert isinstance(v, PinnedHostArray) and log == []
    v.sum()
    assert log[0][2] == [span(v)]


def test_results_are_plain_arrays_and_untracked_arrays_log_nothing(log):
    a = tracked(np.ones(4, dtype=np.float32))
    b = a * 2
    assert type(b) is np.ndarray
    b.sum()
    np.ones(4).sum()
    assert [e[1] for e in log] == ["numpy.multiply"]


def test_the_allocators_are_wrapped_and_restored(monkeypatch, log):
    fake = types.ModuleType("cupyx")
    fake.zeros_pinned = lambda n, dtype=np.float32: np.zeros(n, dtype=dtype)
    monkeypatch.setitem(sys.modules, "cupyx", fake)
    original = fake.zeros_pinned
    hooks = HostArrayHooks(lambda kind, **f: None, "cupyx")
    assert hooks.install() == ["cupyx.zeros_pinned"]
    assert isinstance(fake.zeros_pinned(4), PinnedHostArray)
    hooks.uninstall()
    assert fake.zeros_pinned is original and host_arrays._SINK[0] is None
