"""Progress on long runs: a counter line on a terminal after about a second, cleared
at the end; -v names each file; nothing when stderr is no terminal, or with -q. The
clock is driven by the test, never waited for."""

from __future__ import annotations

import io
import threading

from conftest import needs_fork
from streamlint.engine import run as engine_run
from streamlint.engine.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_no_progress_when_stderr_is_not_a_terminal_or_quiet():
    assert Progress.for_stream(10, io.StringIO(), quiet=False, verbose=False) is None
    assert Progress.for_stream(10, Terminal(), quiet=True, verbose=False) is None


def test_the_counter_appears_after_a_second_and_is_cleared_at_the_end():
    clock, screen = Clock(), Terminal()
    progress = Progress(4, screen, counter=True, clock=clock)
    clock.now += 0.5
    progress.file_done("a.py")
    assert screen.getvalue() == ""  # a short run shows nothing
    clock.now += 1.0
    progress.file_done("b.py")
    shown = screen.getvalue()
    assert shown.startswith("\rstreamlint: 2/4 files checked in 1 s, ") and shown.endswith(" files/s")
    clock.now += 2.0
    progress.tick()  # the timer's redraw while one large file is analysed
    assert screen.getvalue().split("\r")[-1].startswith("streamlint: 2/4 files checked in 3 s")
    progress.close()
    assert screen.getvalue().endswith("\r" + " " * len(shown.split("\r")[-1]) + "\r")


def test_the_rate_is_the_recent_one():
    clock, screen = Clock(), Terminal()
    progress = Progress(100, screen, counter=True, clock=clock)
    for _ in range(10):  # 10 files in the first 10 s, then 20 files in 2 s
        clock.now += 1.0
        progress.file_done("slow.py")
    for _ in range(20):
        clock.now += 0.1
        progress.file_done("fast.py")
    # Over the last 5 s: 3 or 4 slow files (one is at the window's edge) and the 20
    # fast ones; the average over the whole run would be 30 / 12 s = 2.5.
    rate = float(progress.line(clock.now).rsplit(", ", 1)[1].split()[0])
    assert 23 / 5 <= rate <= 24 / 5


def test_verbose_lists_files_above_the_counter():
    clock, screen = Clock(), Terminal()
    progress = Progress(3, screen, counter=True, verbose=True, clock=clock)
    clock.now += 2.0
    progress.file_done("a.py")
    progress.file_done("b.py")
    lines = screen.getvalue().split("\r")
    assert "streamlint: checked a.py\n" in screen.getvalue()
    assert any(line.startswith(" ") for line in lines)  # the counter is wiped before a name is written
    progress.close()


def test_the_engine_reports_every_file_once(tmp_path, fake_engine):
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text("import torch.cuda\nhit(SL101)\n")
    seen = []

    class Recorder(Progress):
        def file_done(self, path: str) -> None:
            seen.append(path)

    items = [(tmp_path / n, engine_run.Settings()) for n in ("a.py", "b.py", "c.py")]
    engine_run.lint_files(items, jobs=1, progress=Recorder(3, io.StringIO(), counter=False))
    assert sorted(seen) == [str(tmp_path / n) for n in ("a.py", "b.py", "c.py")]


def test_a_timer_keeps_the_counter_current(monkeypatch):
    # The real timer thread, with its redraw interval at zero: it draws without any file done.
    from streamlint.engine import progress as module

    monkeypatch.setattr(module, "REDRAW_EVERY", 0.0)
    monkeypatch.setattr(module, "SHOW_AFTER", 0.0)
    screen = Terminal()
    progress = Progress.for_stream(1, screen, quiet=False, verbose=False)
    try:
        # The thread draws within milliseconds; 60 s only ends a broken test on any load.
        deadline = module.time.monotonic() + 60
        while "0/1 files checked" not in screen.getvalue() and module.time.monotonic() < deadline:
            module.time.sleep(0.001)
    finally:
        progress.close()
    assert "0/1 files checked" in screen.getvalue()


def test_nothing_is_drawn_while_workers_are_forked(monkeypatch):
    # A fork while the timer thread writes would leave stderr's lock held in the child.
    clock, screen = Clock(), Terminal()
    progress = Progress(2, screen, counter=True, clock=clock)
    clock.now += 5
    with progress.still():
        drawer = threading.Thread(target=progress.tick)
        drawer.start()
        drawer.join(0.2)
        assert drawer.is_alive() and screen.getvalue() == ""  # the timer waits
    drawer.join(60)
    assert "0/2 files checked" in screen.getvalue()


@needs_fork  # the fake rules reach pool workers only when they are forked
def test_a_parallel_run_reports_each_file(tmp_path, fake_engine):
    names = [f"m{i}.py" for i in range(12)]
    for name in names:
        (tmp_path / name).write_text("import torch.cuda\nhit(SL101)\n")
    seen = []

    class Recorder(Progress):
        def file_done(self, path: str) -> None:
            seen.append(path)

    items = [(tmp_path / n, engine_run.Settings()) for n in names]
    engine_run.lint_files(items, jobs=2, progress=Recorder(12, io.StringIO(), counter=False))
    assert sorted(seen) == sorted(str(tmp_path / n) for n in names)
