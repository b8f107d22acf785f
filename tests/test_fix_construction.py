"""Fixes right by construction where they are offered: SL501 moves every creation its
finding names (streams and events) and drops a comment the move makes false; the
Numba SL401 fix makes its event before the loop (no new SL501)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from streamlint.engine.lint import lint_fix, lint_text
from streamlint.settings import Settings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _fixed(source: str, code: str) -> str:
    outcome = lint_fix(textwrap.dedent(source), "t.py", Settings(select=(code,)), unsafe=True)
    assert outcome.refused == [], outcome.refused
    assert code in [d.code for d in outcome.applied]
    return outcome.source


def test_sl501_moves_the_stream_and_drops_a_comment_made_false_leaving_timing_marks():
    source = (FIXTURES / "SL501" / "positive_numba_stream_per_batch.py").read_text()
    source = source.replace("stream = nc.stream()  # expect: SL501", "stream = nc.stream()  # a new stream every batch")
    fixed = _fixed(source, "SL501")
    assert (
        "    checksums, times_ms = [], []\n"
        "    stream = nc.stream()\n"
        "    for b in range(n_batches):\n"
        "        start = nc.event()\n"
        "        end = nc.event()\n"
        "        start.record(stream)\n"
    ) in fixed  # (the events only time the batch: no part of the finding, left where they are)
    assert "SL501" not in [d.code for d in lint_text(fixed, "t.py", Settings())]


def test_sl501_moves_the_events_with_the_stream():
    fixed = _fixed("""\
        import cupy as cp


        def process(chunks):
            out = []
            for chunk in chunks:
                stream = cp.cuda.Stream(non_blocking=True)  # a new stream every chunk
                copied = cp.cuda.Event()
                with stream:
                    d = cp.asarray(chunk)
                    copied.record()
                cp.cuda.get_current_stream().wait_event(copied)
                out.append(cp.fft.fft(d))
            return out
        """, "SL501")
    assert (
        "    out = []\n"
        "    stream = cp.cuda.Stream(non_blocking=True)\n"
        "    copied = cp.cuda.Event()\n"
        "    for chunk in chunks:\n"
        "        with stream:\n"
    ) in fixed
    assert "SL501" not in [d.code for d in lint_text(fixed, "t.py", Settings())]


def test_sl501_keeps_a_comment_that_stays_true():
    fixed = _fixed("""\
        import cupy as cp


        def process(chunks):
            out = []
            for chunk in chunks:
                stream = cp.cuda.Stream(non_blocking=True)  # overlaps the host's parsing
                with stream:
                    out.append(cp.asarray(chunk).sum())
            return out
        """, "SL501")
    assert "    stream = cp.cuda.Stream(non_blocking=True)  # overlaps the host's parsing\n    for chunk" in fixed


def test_sl501_in_forward_drops_the_comment_on_the_line_that_now_reads_the_attribute():
    fixed = _fixed("""\
        import torch
        from torch import nn


        class Tower(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def forward(self, x):
                side = torch.cuda.Stream()  # a fresh stream per call
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    y = self.lin(x)
                torch.cuda.current_stream().wait_stream(side)
                return y
        """, "SL501")
    assert "        self._side = torch.cuda.Stream()\n" in fixed
    assert "        side = self._side\n" in fixed


NUMBA_LOOP = """\
    import numpy as np
    from numba import cuda


    @cuda.jit
    def smooth(x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = x[i] * 0.5


    def pipeline(chunks, n):
        producer = cuda.stream()
        consumer = cuda.stream()
        d_a = cuda.device_array(n, dtype=np.float32)
        d_b = cuda.device_array(n, dtype=np.float32)
        d_c = cuda.device_array(n, dtype=np.float32)
        for chunk in chunks:
            d_a.copy_to_device(chunk, stream=producer)
            smooth[4, 256, producer](d_a, d_b)
            smooth[4, 256, consumer](d_b, d_c)
            consumer.synchronize()
        return d_c
    """


def test_numba_sl401_fix_makes_its_event_before_the_loop():
    fixed = _fixed(NUMBA_LOOP, "SL401")
    assert (
        "    ready = cuda.event()\n"
        "    for chunk in chunks:\n"
        "        d_a.copy_to_device(chunk, stream=producer)\n"
        "        smooth[4, 256, producer](d_a, d_b)\n"
        "        ready.record(stream=producer)\n"
        "        ready.wait(stream=consumer)\n"
        "        smooth[4, 256, consumer](d_b, d_c)\n"
    ) in fixed
    assert [d.code for d in lint_text(fixed, "t.py", Settings())] == []
