"""SL402 cross-stream-write-after-read: a buffer is overwritten while other work may still use it."""

from __future__ import annotations

import libcst as cst

from streamlint.model.findings import Placement
from streamlint.rules._hazard_words import Words
from streamlint.rules._shared import join_place, named, over_elements, stream_code, sync_idiom, wait_idiom, wait_line
from streamlint.rules.base import Finding, Rule


class CrossStreamWriteAfterRead(Rule):
    """
    ## What it does
    Flags a write to a buffer that work queued on another stream may still be
    reading or writing, with nothing ordering the two:
    - a kernel or copy on stream B overwrites what pending work on stream A reads
      (write-after-read) or writes (write-after-write);
    - the host overwrites a pinned host buffer (`h[:] = ...`, `np.copyto(h, ...)`,
      `h.copy_(batch)`, `h.fill_(0)`) while an asynchronous copy from it (or into
      it) may still be in flight on a stream. A buffer kept on `self` counts across
      calls: a method that refills a pinned staging buffer (or a view of it) and
      starts a `non_blocking` copy from it races that copy in its next call, unless
      it waits first (an event recorded after the copy and kept on `self` is taken
      to be waited on). It is reported once, at the first refill.
    - across calls on the device: a method that makes a side stream wait for the
      current stream (`side.wait_stream(current)`) and then reads (or writes) memory
      kept on `self` there, but never makes the current stream wait back, leaves that
      access pending when it returns; a later call that overwrites the memory on the
      current stream (a gradient hook refilling the bucket the reduction stream is
      still reducing) races it. Reported once, at that one-way wait. A stream the
      caller hands in, or an event kept on `self` recorded after the access, is taken
      to be ordered by the caller.

    ## Why is this bad?
    An asynchronous copy from pinned memory reads the host buffer when the stream
    reaches it, not when the call returns. Refilling the buffer before the stream
    has passed the copy sends the new data (or a mix) to the GPU
    (pytorch/pytorch#127612). On the device, a second writer on another stream, or
    a writer racing a slower reader, corrupts data in the same silent way.

    Seed 002's ping-pong loop is correct exactly because it calls
    `cudaStreamSynchronize(s)` before refilling `h_in[buf]`; without it, the refill
    races the copy of two iterations ago.

    ## Example
    ```python
    import numpy as np
    from numba import cuda

    s = cuda.stream()
    h = cuda.pinned_array(n, dtype=np.float32)
    for frame in frames:
        h[:] = frame                           # the previous copy may still read h
        d = cuda.to_device(h, stream=s)
        process[blocks, threads, s](d)
    ```

    ## Use instead
    ```python
    import numpy as np
    from numba import cuda

    s = cuda.stream()
    h = cuda.pinned_array(n, dtype=np.float32)
    for frame in frames:
        s.synchronize()                        # the copy from h has finished
        h[:] = frame
        d = cuda.to_device(h, stream=s)
        process[blocks, threads, s](d)
    ```
    Between streams, make the writer wait for the reader: torch
    `writer.wait_stream(reader)`, CuPy `writer.wait_event(reader.record())`, Numba
    `e.record(reader); e.wait(writer)`, cuda-python `cudaEventRecord` +
    `cudaStreamWaitEvent`. With two buffers, record an event per buffer after its
    copy and synchronize that event before refilling the buffer.

    ## Fix safety
    There is no fix: the writer must wait for the reader, and where to put that wait
    (or whether to double-buffer instead) changes the pipeline's structure.

    ## Known limits
    - A refill through a raw pointer (cuda-python `cudaMallocHost` memory viewed
      through ctypes) is not followed.
    - A pageable host buffer is staged by the driver before an asynchronous copy
      returns, so refilling it is safe and not reported.
    - A read-modify-write racing another writer is reported once, here, not also as
      SL401.

    ## References
    - [API facts](../api-facts.md): §1.2 (async copies), §2.3 (`ndarray.set`), §4.3, §8 item 3.
    - pytorch/pytorch#127612 (mutating a pinned source after a non-blocking copy).
    """

    code = "SL402"
    name = "cross-stream-write-after-read"
    summary = "A buffer is overwritten while work on another stream (or an async copy) may still use it"

    def check(self, analysis):
        words = Words(analysis)
        for h in words.hazards(self.code):
            at = analysis.line_of(h.node)
            buffer, first = words.buffer(h), words.stream(h.earlier.stream, h, h.earlier)
            other = words.line(h.earlier.shown)
            if h.later.on_host and h.at_earlier:
                # the copy an earlier call left reading what this call refills: reported at the copy,
                # the memory named as the refill names it
                buffer = words.stored_into(h.later) or buffer
                refill = words.line(h.later.shown)
                fix = (f"copy with `non_blocking=False`, or {sync_idiom(stream_code(first, h.framework, analysis))} "
                       f"(or an event recorded after this copy) before the refill at line {refill}")
                what = (f"this asynchronous copy may still be reading {named(buffer)} when a later call refills it "
                        f"on the host (line {refill})")
                yield Finding(h.node, what, help=fix)
                continue
            node = h.node
            if h.hazard.placement is Placement.AT_FORK:
                # a side stream forked off the current stream and never joined back: the next call's
                # write on the current stream is ordered after nothing the side stream did
                second = words.stream(h.later.stream, h, h.later)
                written = words.written_through(h.later) or buffer
                fix = f"{wait_idiom(first, second, h.framework, analysis)} {join_place(words.builder, h.earlier.shown, h.node)}"
                what = (f"{named(first)} waits for {named(second)} here, but {named(second)} never waits for it: a "
                        f"later call overwrites {named(written)} there (line {words.line(h.later.shown)}) while "
                        f"{named(first)} may still use it{words.inside(h.later)}")
                yield Finding(node, what, help=fix)
                continue
            if h.later.on_host:
                code = stream_code(first, h.framework, analysis)
                fix = f"{over_elements(sync_idiom(code), (code,))} (or an event recorded after that copy) before line {at}"
                what = (f"the host overwrites {named(buffer)} here while {named(first)} may still be copying it "
                        f"(line {other}{words.inside(h.earlier)})")
                node = words.pointed(h, buffer)
            else:
                second = words.stream(h.later.stream, h, h.later)
                # (the streams as code names them: the legacy default stream as `default_stream()`)
                writer = words.stream_for_code(h.earlier.stream, h, h.earlier)
                reader = words.stream_for_code(h.later.stream, h, h.later)
                at = wait_line(words.builder, node, h.earlier.shown, writer, h.framework)
                fix = f"{wait_idiom(writer, reader, h.framework, analysis, legacy=True)} before line {at}"
                if not _receiver_in_scope(reader, h.function.node):
                    # (a callee's stream kept on its own object, which has no name here: said in words)
                    fix = (f"make {named(second)}{words.inside(h.later)} wait for {named(first)} before it writes "
                           f"{named(buffer)}")
                what = (f"{named(buffer)} is overwritten on {named(second)} here while {named(first)} may still use it "
                        f"(line {other}{words.inside(h.earlier)}){words.inside(h.later)}")
            yield Finding(node, what, help=fix)


def _receiver_in_scope(code: str, function: cst.CSTNode) -> bool:
    """A stream spelled from `self` (or `cls`) names something only in a method whose first parameter it is."""
    root = code.split(".", 1)[0].split("[", 1)[0]
    if root not in ("self", "cls"):
        return True
    params = function.params.params if isinstance(function, cst.FunctionDef) else ()
    return bool(params) and params[0].name.value == root
