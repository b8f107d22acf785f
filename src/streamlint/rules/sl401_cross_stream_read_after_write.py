"""SL401 cross-stream-read-after-write: a stream reads what another stream wrote, unordered."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.checked_file import spell
from streamlint.fixes.edits import FixBuilder, make_fix
from streamlint.fixes.idioms import wait_statements
from streamlint.fixes.model import Applicability
from streamlint.model.domain.paths import RootKind
from streamlint.model.domain.streams import StreamRefKind
from streamlint.model.findings import Placement
from streamlint.model.readings.waits import self_waits
from streamlint.model.summary.effects import EffectKind
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.rules._hazard_words import Words, allocation_name, allocation_node, wait_scope
from streamlint.rules._shared import handed_to_callers_of, named, stream_code, wait_idiom, wait_line
from streamlint.rules.base import Finding, Rule


class CrossStreamReadAfterWrite(Rule):
    """
    ## What it does
    Flags work on one stream that reads a buffer written by work queued on another
    stream when nothing orders the two: no `wait_stream`, no event recorded after
    the write and waited on by the reader, no host synchronization in between.

    It follows kernels (Numba launches, CuPy RawKernels and array operations,
    PyTorch ops and `nn.Module` calls), copies (source read, destination written)
    and views of the same array, on explicit streams, on the current stream set by
    `with s:` / `torch.cuda.stream(s)`, and on the legacy default stream. A
    function's parameters are taken as produced on the caller's current stream, so
    a PyTorch side stream that reads a parameter must first wait for that stream;
    so is object state (`self.x`) that the body hands to an NCCL collective (a CUDA
    tensor) and that the class does not make where the analysis can see it.

    A wait that names the wrong stream is reported at the wait itself: a side
    stream waiting on `torch.cuda.default_stream()` for tensors the current stream
    produced, the default stream (not the current one) waiting on a side stream
    whose results the following work uses, and the current stream waiting on one
    side stream while the body's writes on another are never waited for. So is a
    stream made to wait for itself, which orders nothing:
    `torch.cuda.current_stream().wait_stream(s)` inside `with torch.cuda.stream(s):`
    (the current stream there is `s`), whether or not the reader it was meant for is
    in sight (a prefetching generator's consumer). A CUDA
    graph (`s.end_capture()`, `torch.cuda.graph(g)`) replays its captured reads and
    writes on the stream it is launched on, at each `launch()` / `replay()`.

    A method that takes the stream its work belongs on (a parameter it hands on to its
    calls on one path) but launches on the current stream on another path is reported
    at that launch when every project call that passes the parameter passes a
    non-blocking stream (subclasses calling the inherited method through `self`
    included): the callers' work on that stream, before and after the call, is not
    ordered with it.

    When a method of the same object makes memory on that side stream and returns it,
    the same missing wait also lets the next call's allocations there take that memory
    while the callers still use it: the message says so, and no separate SL404 is
    reported (one wait fixes both).

    ## Why is this bad?
    Streams run independently: the reader can start before the writer finishes and
    see old or half-written data. Nothing fails; the results are wrong only some of
    the time. Measured on an H200: a consumer kernel on one Numba stream reading
    what a slow producer on another stream writes gave 9.8% wrong outputs in 4 of 5
    runs; with an event recorded on the producer's stream and waited on by the
    consumer's, 0%.

    PyTorch side streams (and CuPy `Stream(non_blocking=True)`) are non-blocking:
    they are not ordered even against work on the default stream, so a side stream
    reading a tensor the default stream produced needs `wait_stream` too. Blocking
    CuPy, Numba and cuda-python streams are ordered after earlier work on the legacy
    default stream, but not against each other.

    ## Example
    ```python
    import numpy as np
    from numba import cuda


    @cuda.jit
    def produce(x, y):
        i = cuda.grid(1)
        y[i] = 2.0 * x[i]


    @cuda.jit
    def consume(y, z):
        i = cuda.grid(1)
        z[i] = y[i] + 1.0


    s1 = cuda.stream()
    s2 = cuda.stream()
    x = cuda.to_device(np.ones(n, dtype=np.float32))
    y = cuda.device_array_like(x)
    z = cuda.device_array_like(x)
    produce[blocks, threads, s1](x, y)   # writes y
    consume[blocks, threads, s2](y, z)   # reads y: may run before produce finishes
    ```
    ```python
    import torch

    side = torch.cuda.Stream()
    x = torch.randn(1024, 1024, device="cuda")   # on the default stream
    with torch.cuda.stream(side):
        y = x @ x                                # side never waited for x
    ```

    ## Use instead
    ```python
    import numpy as np
    from numba import cuda


    @cuda.jit
    def produce(x, y):
        i = cuda.grid(1)
        y[i] = 2.0 * x[i]


    @cuda.jit
    def consume(y, z):
        i = cuda.grid(1)
        z[i] = y[i] + 1.0


    s1 = cuda.stream()
    s2 = cuda.stream()
    x = cuda.to_device(np.ones(n, dtype=np.float32))
    y = cuda.device_array_like(x)
    z = cuda.device_array_like(x)
    done = cuda.event()
    produce[blocks, threads, s1](x, y)
    done.record(s1)
    done.wait(s2)
    consume[blocks, threads, s2](y, z)
    ```
    ```python
    import torch

    side = torch.cuda.Stream()
    x = torch.randn(1024, 1024, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = x @ x
    ```
    CuPy: `s2.wait_event(s1.record())`; cuda-python: `cudaEventRecord(e, s1)` then
    `cudaStreamWaitEvent(s2, e, 0)`.

    ## Fix safety
    The fix inserts the framework's wait just before the statement that reads:
    `B.wait_stream(A)` for PyTorch, `B.wait_event(A.record())` for CuPy, and
    `e = cuda.event(); e.record(stream=A); e.wait(stream=B)` for Numba (three lines,
    with a fresh name). It is offered only when both streams can be named there (a
    name bound once before the read, or the current stream where the read runs on
    it); cuda-python gets no fix. It is **unsafe**: the reading stream then waits
    for everything queued on the writing one so far, which removes the race but
    also some overlap you may have wanted.

    ## Known limits
    - Buffers are followed by name and by the call that made them, in the same
      module (and through helpers of the same module). Arrays from unknown calls
      or other modules are not followed.
    - Slices with different bounds (`x[:half]`, `x[half:]`, also along one other axis:
      `x[:, :, a:b]`) are taken as disjoint; slices along different axes overlap. A name
      bound to a view keeps the part it names. A fill at a running offset
      (`x[off : off + n]`, with `off = 0` and `off += n`, or an offset the object keeps)
      and the prefix up to it (`x[:off]`) are one region.
    - A parameter tested against constants in exclusive branches (`if mode == 2:` ...
      `elif mode == 3:`) and never rebound is followed one value at a time: a wait on
      one value's path does not order another value's reads.
    - A call given part of a buffer this body allocated and nothing wrote yet is taken
      to fill it (an output argument).
    - An event the analysis cannot follow is assumed to order everything. Memory
      a function hands its callers is ordered for them by an event recorded
      after its last write on the writing stream when the callers hold that event:
      returned with it, or at a parameter's path (`ctx.finished.record(ctx.stream)`
      in an autograd function's `backward`, the event its caller handed to
      `forward`); their wait is out of sight.
    - Kernel arguments of CuPy RawKernels and of Numba kernels defined elsewhere are
      taken as read and written.

    ## References
    - [API facts](../api-facts.md): §1.1 (default streams), §4.1 and §4.5
      (`wait_stream`), §6, §8 item 4.
    - pytorch/pytorch#2702, #3054, #101300 (side streams are non-blocking).
    - PyTorch's CUDA sanitizer (`TORCH_CUDA_SANITIZER=1`) finds the same races at run
      time, for PyTorch ops only.
    """

    code = "SL401"
    name = "cross-stream-read-after-write"
    summary = "A stream reads a buffer another stream wrote, with no wait or event in between"
    fix_availability = "sometimes"

    def check(self, analysis):
        placed = []
        for finding in self._hazards(analysis):
            placed.append(finding.node)
            yield finding
        yield from _self_waits(analysis, placed)

    def _hazards(self, analysis):
        words = Words(analysis)
        builder = words.builder
        handed_out = words.made_here_handed_out()
        for h in words.hazards(self.code):
            at = analysis.line_of(h.node)
            buffer, first = words.buffer(h), words.stream(h.earlier.stream, h, h.earlier)
            second = words.stream(h.later.stream, h, h.later)
            if h.from_caller:
                what = "state made before this call" if h.caller_root is RootKind.SELF else "a parameter"
                origin = f"{named(buffer)} is produced on the caller's current stream ({what})"
            else:
                origin = (f"{named(buffer)} is written on {named(first)} at line {analysis.line_of(h.earlier.shown)}"
                          f"{words.inside(h.earlier)}")
            if h.hazard.placement is Placement.AT_WAIT:
                yield _wrong_wait(analysis, words, h, buffer, first, second)
                continue
            if h.from_caller and h.earlier.stream.kind is StreamRefKind.PATH:
                # the callers' memory taken as made on the stream they hand in for the work
                # (CallContext.work_stream), used here on another stream
                yield Finding(
                    h.node,
                    f"{named(buffer)} is used on {named(second)} here{words.inside(h.later)}, but the callers hand "
                    f"this method the non-blocking stream {named(first)} for its work: nothing orders this with "
                    f"their work on it there",
                    help=f"queue this work on {named(first)} (`stream={first}`)",
                )
                continue
            writer = words.stream_for_code(h.earlier.stream, h, h.earlier)
            reader = words.stream_for_code(h.later.stream, h, h.later)
            idiom = wait_idiom(writer, reader, h.framework, analysis, legacy=True)
            if h.hazard.placement is Placement.AT_BOUNDARY and not h.from_caller:
                function = h.function.node
                handed = handed_to_callers_of(analysis, function, h.function.class_name,
                                              "read it on their current stream", yielded=isinstance(h.node, cst.Yield))
                # the object's own memory handed out (a getter): at its read, where the wait goes;
                # a result: at the return
                node = words.first_read(h, buffer) if h.earlier.access.path.root.kind is RootKind.SELF else h.node
                yield Finding(node, f"{origin} and {handed} with no wait in between",
                              help=_handed_out_help(analysis, h, idiom, wait_line(builder, node, h.earlier.shown, writer, h.framework)))
                continue
            inner = _wait_in_callee(words, builder, h, writer, reader, idiom)
            if inner is not None:  # (a wait at this call would come too late: the callee writes, then reads)
                yield Finding(h.node, f"{origin} and read on {named(second)} here{words.inside(h.later)} with no wait "
                                      f"in between", help=inner)
                continue
            fix, lines = (None, None) if h.from_caller else _fix(
                builder, h, words.stream_for_code(h.earlier.stream, h, h.earlier),
                words.stream_for_code(h.later.stream, h, h.later))
            early = _wait_on_an_earlier_record(words, h)
            also = _also_unordered(words, h, handed_out.pop((wait_scope(h), h.later.stream), None), second)
            yield Finding(
                h.node,
                f"{origin} and read on {named(second)} here{words.inside(h.later)} with no wait in between{also}"
                if not early else
                f"{origin} and read on {named(second)} here{words.inside(h.later)} with no wait for the write in "
                f"between: the wait at line {early[0]} is for an event recorded at line {early[1]}, before the write",
                fix=fix,
                # PyTorch's advice is the code the fix inserts, so that the two name each stream
                # alike: the legacy default stream as `default_stream()` (another stream than the
                # current one in a method), a script's as `current_stream()`
                help=f"`{'; '.join(lines)}` before line {at}" if lines and h.framework == "torch"
                else f"{idiom}{words.in_maker(h.later)}" if words.in_maker(h.later)
                else f"{idiom} before line {wait_line(builder, h.node, h.earlier.shown, writer, h.framework)}",
            )


def _self_waits(analysis, placed: list):
    """A wait of a stream for itself that no race in sight shows (the reader is a caller out of sight, or a
    generator's consumer): it orders nothing, whatever follows."""
    ancestry = Ancestry(analysis.module)
    for wait in self_waits(analysis.v3):
        node = analysis.v3.node_of(wait.site)
        if not isinstance(node, cst.Call) or any(node is p for p in placed) or not node.args:
            continue
        receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
        argument = node.args[0].value
        # (the side spelled as a call is the current stream: `current_stream().wait_stream(s)` meant the stream
        # after the block to wait for `s`; `s.wait_stream(current_stream())`, `s` to wait for the one before it)
        named_side = receiver if isinstance(argument, cst.Call) and receiver is not None else argument
        stream = spell(named_side)
        if stream is None or isinstance(named_side, cst.Call):
            continue
        in_block = any(isinstance(a, cst.With) for a in ancestry.ancestors(node))
        if not in_block:
            advice = f"make the stream that uses what `{stream}` queued wait for it instead"
        elif named_side is argument:
            advice = f"move this wait after `{stream}`'s block, where the current stream is the one that uses its results"
        else:
            advice = f"move this wait before `{stream}`'s block, where the current stream is the one `{stream}` must follow"
        yield Finding(
            node,
            f"`{stream}` waits for itself here (the current stream is `{stream}` at this line), so this wait orders "
            f"nothing" + (f": the work that uses what `{stream}` queued does not wait for it" if named_side is argument
                          else ": the work it runs does not wait for what the stream current before its block queued"),
            help=advice,
        )


def _also_unordered(words: Words, h, handed_out, stream: str) -> str:
    """The other thing the same missing wait leaves unordered, said once with it (one problem): memory this
    function makes on the side stream and returns, which the next call's allocations there may take while the
    callers still use it."""
    if handed_out is None or h.earlier.stream.kind is not StreamRefKind.AMBIENT:
        return ""
    made = allocation_name(words, handed_out, allocation_node(words.model, handed_out)) or words.buffer(handed_out)
    function = handed_out.function.qualname.rpartition(".")[2]
    return (f"; nor is the next call's work on {named(stream)} ordered after the callers' use of "
            f"{named(made)}, which `{function}()` returns: its memory may go to that work too early")


def _wait_in_callee(words: Words, builder: FixBuilder, h, writer: str, reader: str, idiom: str) -> Optional[str]:
    """Where both accesses are made by one method of the same object that this function calls, the wait goes in that
    method before the read (outside a `with` that makes the reader current), naming streams it can name too (the
    current stream, the object's own): None for any other race."""
    earlier, later = h.earlier.access, h.later.access
    if h.from_caller or not (earlier.chain and later.chain):
        return None
    called = {_first_callee(earlier), _first_callee(later)}
    callee = words.model.solver.program.function(called.pop()) if len(called) == 1 else None
    if callee is None or callee.module != words.model.module or callee.class_name != h.function.class_name \
            or not isinstance(callee.node, cst.FunctionDef):
        return None
    if not all(label == "the current stream" or label.startswith("self.") for label in (writer, reader)):
        return None
    read, write = words.model.node_of(_in_callee(later)), words.model.node_of(_in_callee(earlier))
    if read is None:
        return None
    return f"{idiom} in `{callee.node.name.value}()` before line {wait_line(builder, read, write, writer, h.framework)}"


def _first_callee(access) -> str:
    return _in_callee(access).partition("#")[0]


def _in_callee(access) -> str:
    """The site in the first function called of an access made through calls (its call there, or itself)."""
    return access.chain[1] if len(access.chain) > 1 else access.site


def _wait_on_an_earlier_record(words: Words, h) -> Optional[tuple[int, int]]:
    """(the wait's line, the record's line) where the reading stream waits, between the write and this read, for an
    event the writing stream recorded before the write: that wait orders nothing about the write."""
    qualname = h.function.qualname
    for (name, _), walked in words.model.solved.walks.items():
        if name != qualname:
            continue
        effects = list(walked.effects)
        write = next((i for i, e in enumerate(effects) if e.site == h.earlier.access.site and not e.chain
                      and e.kind is EffectKind.ACCESS and e.write), None)
        if write is None:
            continue
        records = {e.path: i for i, e in enumerate(effects[:write])
                   if e.kind is EffectKind.RECORD_EVENT and e.stream == h.earlier.stream and not e.chain}
        for e in effects[write:]:
            if e.kind is EffectKind.WAIT_EVENT and e.stream == h.later.stream and e.path in records and not e.chain:
                wait, record = words.model.node_of(e.site), words.model.node_of(effects[records[e.path]].site)
                if wait is not None and record is not None:
                    return words.line(wait), words.line(record)
    return None


def _wrong_wait(analysis, words: Words, hazard, buffer: str, first: str, second: str) -> Finding:
    """A wait here names the wrong stream: the reading stream waited on the default stream for
    what the current stream produced, or the current stream waited on another stream than the
    one whose writes it must follow."""
    waited, waiter = hazard.hazard.waited, hazard.hazard.waiter
    if waiter is not None and waiter.kind is StreamRefKind.LEGACY:
        return Finding(
            hazard.node,
            f"the default stream waits on {named(words.stream(waited, hazard))} here, but the work after it "
            f"runs on the current stream, which is another stream under a caller's side stream or a CUDA graph",
            help=f"make `{stream_code('the current stream', 'torch', analysis)}` wait instead",
        )
    if waited.kind is StreamRefKind.LEGACY:
        return Finding(
            hazard.node,
            f"{named(second)} waits on the default stream here, but {named(buffer)} is produced on the current "
            f"stream, which is another stream under a caller's side stream or a CUDA graph",
            help=f"wait on `{stream_code('the current stream', 'torch', analysis)}` instead",
        )
    if waiter is not None and waiter == waited:
        stream = named(words.stream(waited, hazard))
        read = analysis.line_of(hazard.later.shown) if hazard.later.shown is not None else None
        where = f" at line {read}" if read is not None else ""
        handed = isinstance(hazard.later.shown, (cst.Yield, cst.Return))  # (its readers are out of sight)
        use = f"handed out{where} to be read on {named(second)}" if handed else f"read on {named(second)}{where}"
        return Finding(
            hazard.node,
            f"{stream} waits for itself here (the current stream is {stream} at this line), so this wait orders "
            f"nothing: {named(buffer)}, written on {stream} at line {analysis.line_of(hazard.earlier.shown)}, is "
            f"{use} with no wait in between",
            help=f"move this wait after {stream}'s block" + (f", before line {read}" if read is not None else "")
                 + f", where the current stream is the one that reads {named(buffer)}",
        )
    waited = words.stream(waited, hazard)
    return Finding(
        hazard.node,
        f"the current stream waits on {named(waited)} here, but {named(buffer)} is written on {named(first)} "
        f"(line {analysis.line_of(hazard.earlier.shown)}), which it never waits for",
        help=f"{wait_idiom(first, 'the current stream', hazard.framework, analysis)} before the work that uses it",
    )


def _handed_out_help(analysis, hazard, idiom: str, at: int) -> str:
    # Written on the line that returns it: the wait can only come after, in the callers.
    if analysis.line_of(hazard.earlier.shown) == at:
        return f"{idiom} in the callers, before they use the result"
    return f"{idiom} before line {at}"


def _fix(builder: FixBuilder, hazard, writer: str, reader: str):
    """The wait, just before the statement that reads, and the lines it inserts (None, None: no fix). Unsafe: it changes what runs
    concurrently (the reading stream now waits for everything queued on the writer).
    An event the wait needs (Numba) is made once, before the outermost loop around the
    read: made in the loop, it would be a new event every iteration (SL501)."""
    statement = builder.statement_of(hazard.node)
    if statement is None:
        return None, None
    function = hazard.function.node
    lines = wait_statements(builder, function, writer, reader, hazard.framework, builder.analysis.line_of(hazard.node))
    if lines is None:
        return None, None
    message = f"Insert `{'; '.join(lines)}`"
    if hazard.framework != "numba":
        return make_fix(message, Applicability.UNSAFE, [builder.insert_before(statement, lines)]), lines
    if isinstance(function, cst.FunctionDef) and function.name.value == "forward" and hazard.function.class_name:
        return None, None  # a new event on every call of forward
    creation, waits = lines[:1], lines[1:]
    loop = _outermost_loop(builder, statement, function)
    if loop is None:
        return make_fix(message, Applicability.UNSAFE, [builder.insert_before(statement, lines)]), lines
    return make_fix(message, Applicability.UNSAFE,
                    [builder.insert_before(loop, creation), builder.insert_before(statement, waits)]), lines


def _outermost_loop(builder: FixBuilder, statement, function):
    outermost = None
    for node in builder.ancestors(statement):
        if node is function:
            break
        if isinstance(node, (cst.For, cst.While)):
            outermost = node
    return outermost
