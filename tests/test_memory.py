"""Big parses take turns across the workers of a run (memory.py)."""

from __future__ import annotations

import multiprocessing
import threading
import time

import pytest

from streamlint import memory


@pytest.fixture
def budget(monkeypatch):
    """A shared budget for two big parses of 1 MB at most, in this process."""
    monkeypatch.setattr(memory, "BUDGET", 2 * 2**20 * memory.PARSE_MEMORY_FACTOR)
    monkeypatch.setattr(memory, "_shared", None)
    memory.init_worker(*memory.shared_budget(multiprocessing.get_context()))
    yield memory._shared[1]
    monkeypatch.setattr(memory, "_shared", None)


def _hold(size: int, entered: threading.Event, leave: threading.Event) -> None:
    with memory.parsing(size):
        entered.set()
        leave.wait(120)  # released by the test; the bound only ends a broken test


@pytest.mark.slow
def test_a_parse_waits_while_the_budget_is_spent(budget):
    events = [(threading.Event(), threading.Event()) for _ in range(3)]
    threads = [
        threading.Thread(target=_hold, args=(size, *pair))
        for size, pair in zip((2**20, 2**20, 2**20), events)
    ]
    for t in threads:
        t.start()
    # Wait for two parses to be in (however loaded the machine), then give the third
    # a moment in which it could wrongly get in too.
    deadline = time.monotonic() + 120
    while [entered.is_set() for entered, _ in events].count(True) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    assert [entered.is_set() for entered, _ in events].count(True) == 2  # the third waits
    assert budget.value == 0
    waiting = next(i for i, (entered, _) in enumerate(events) if not entered.is_set())
    first = next(i for i, (entered, _) in enumerate(events) if entered.is_set())
    events[first][1].set()  # one parse ends: the waiting one goes on
    assert events[waiting][0].wait(120)
    for _, leave in events:
        leave.set()
    for t in threads:
        t.join(120)
    assert budget.value == memory.BUDGET  # everything given back


def test_small_texts_never_wait(budget):
    budget.value = 0
    start = time.monotonic()
    with memory.parsing(memory.SMALL_TEXT - 1):
        pass
    # A wait would last MAX_WAIT_SECONDS (120 s): half of it is a bound no load reaches.
    assert time.monotonic() - start < memory.MAX_WAIT_SECONDS / 2 and budget.value == 0


def test_a_huge_text_reserves_at_most_the_whole_budget(budget):
    with memory.parsing(100 * 2**20):  # estimate above the budget: alone, but it runs
        assert budget.value == 0
    assert budget.value == memory.BUDGET


def test_waiting_is_bounded(budget, monkeypatch):
    monkeypatch.setattr(memory, "MAX_WAIT_SECONDS", 0.2)
    budget.value = 0  # as if a dead worker never gave its share back
    with memory.parsing(2**20):
        pass  # went ahead after the wait, reserving nothing
    assert budget.value == 0


def test_without_a_pool_nothing_is_reserved(monkeypatch):
    monkeypatch.setattr(memory, "_shared", None)
    with memory.parsing(10 * 2**20):
        pass
