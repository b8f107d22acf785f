"""SL103 device-synchronize: device-wide synchronization in a hot path or between stream work."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.api import step_entries, torch_api
from streamlint.model.readings import hot_paths
from streamlint.model.readings.hot_paths import Work, work_in
from streamlint.model.readings.operations import measuring_calls, own_operations, stream_work_around
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.model.syntax.purpose import imported_modules, timed, trains
from streamlint.model.syntax.sync_purpose import Purpose, SyncPurposes, comprehension_of
from streamlint.rules import _labels as labels
from streamlint.rules._shared import STEP_TIMING_HELP, api_named, calling_loop_named, hot_entry_name, start_of
from streamlint.rules.base import Finding, Rule
from streamlint.rules.sl101_default_stream_barrier import DefaultStreamBarrier


class DeviceSynchronize(Rule):
    """
    ## What it does
    Flags a device-wide synchronization in a hot path (a loop body, the
    `forward` method of an `nn.Module` subclass or a function stored as a
    module's `forward` (`UNet.forward = patched_forward`), a function registered as a
    hook with `register_hook`, `register_post_accumulate_grad_hook`,
    `register_forward_pre_hook` and the like, which PyTorch calls on every
    backward or forward pass, the `__getitem__` of a `torch.utils.data.Dataset`
    subclass, which the data loader calls once per sample, a method a framework
    calls once per step of a loop out of sight (a custom autograd function's
    `forward` and `backward`, a Lightning module's `training_step` and batch
    hooks, a Hugging Face trainer's `training_step` and a trainer callback's
    `on_step_end`, a Gym environment's `step` and what it calls on the
    environment on every call, an iterator's `__next__`), or a helper of the
    same module that one of these calls on every call) or between work on
    explicit streams:
    - PyTorch: `torch.cuda.synchronize()`, `torch.cuda.empty_cache()` (it returns the
      cached blocks with `cudaFree`, which waits for the whole device)
    - CuPy: `cp.cuda.Device().synchronize()`, `cp.cuda.runtime.deviceSynchronize()`
    - Numba-CUDA: `numba.cuda.synchronize()`
    - cuda-python: `cudaDeviceSynchronize()`; also `cudaMalloc` and `cudaFree`
      (`cuMemAlloc`, `cuMemFree`), which are not stream-ordered and
      synchronize the device as a side effect

    Which loops make a hot path is the same for SL103, SL201, SL501 and SL502:
    {loop_policy}
    - an outer loop, whose every pass runs a nested loop (its own, or in a
      function it calls) that already waits for the GPU on every pass, or
      its own nested loop of training steps (a backward pass and an update
      every pass), is an epoch around its steps: no hot path for what it
      does outside that nested loop (one wait more per epoch is spread over
      the epoch's steps);
    - a block under a test of the loop's counter against a written constant
      (`if i < 25:`) runs on the first passes only; so does one under a test
      that runs now and then (`if step % 100 == 0:`, `if debug:`), in an
      `except` handler, or after an early `return` that a cache hit takes.

    One synchronization before any stream work, or at the end after the
    pipeline, is fine and not flagged; nor is a second one of a loop's pass
    with no GPU work queued since the first (that first one is the stall). Nor is one whose neighbours show what it is
    for (decided from the code's shape, never from file names):
    - a test's assertion follows it (`assert`, `torch.testing.assert_close`,
      `np.testing.assert_*`, `self.assert*`), or a read-back whose value an
      assertion or a comparison with a reference checks
      (`out = d.copy_to_host()`, then `assert np.allclose(out, ref)`);
    - it bounds a timed or measured region: a host timer, `elapsed_time`, a
      memory statistic (`torch.cuda.max_memory_allocated()`, `memory_stats()`,
      `reset_peak_memory_stats()`, CuPy's pool `used_bytes()`), a profiler
      range (`cudaProfilerStart()`, `torch.cuda.profiler.start()`) or a call of
      a project function that reads a timer or an elapsed time stands next to
      it, or the loop reads a host timer (a benchmark), itself or through a
      call on its passes (a sweep over configurations, each timed by a helper,
      that frees the cache between them);
    - a CUDA-graph capture follows it (`with torch.cuda.graph(g):`,
      `g.capture_begin()`, `stream.begin_capture()`, also as the first
      statement of a `with torch.cuda.stream(s):` block), also from inside the
      warm-up loop just before the capture, and past the capture's set-up lines
      (assignments that make graph objects or list the static buffers).
    Stream waits, other synchronizations, barriers, NVTX ranges and log lines
    (also under an `if`) between the sync and what follows are looked past.

    A training loop is no measurement harness: in a loop whose body runs a
    backward pass and an update (methods `backward()` and `step()` of values,
    not functions of an imported module), itself or in a step helper it calls, a sync that times or measures every
    step is reported, with the advice to time a window of steps instead; one
    under `if step % N == 0:` is that window, and silent.

    ## Why is this bad?
    A device-wide synchronization blocks the host until *every* stream of the
    device (Numba: of the context) has finished all of its queued work. While it
    waits, the host cannot queue the next copies and kernels, so the GPU runs dry
    at every iteration and the overlap between streams that the pipeline was
    built for is lost.

    Usually only one dependency is needed, and there are narrower tools:
    - To order work between streams, make one stream wait for another on the
      device: the host does not wait at all (`s.wait_stream(other)` and
      `s.wait_event(e)` in PyTorch, `s.wait_event(e)` in CuPy, `e.wait(stream)`
      in Numba, `cudaStreamWaitEvent` in cuda-python).
    - When the host really needs a result, wait for the stream or event that
      produces it (`s.synchronize()`, `e.synchronize()`,
      `cudaStreamSynchronize`, `cudaEventSynchronize`).
    - To time GPU work, record events and synchronize the end event once.
    - `torch.cuda.empty_cache()` hands the allocator's cached blocks back:
      the allocator would have reused them, so freeing them every step only
      makes the step wait for the device and allocate again. Free the cache
      once, between phases, or when an allocation fails.

    ## Example
    ```python
    import torch


    def train(encoder, head, batches):
        side = torch.cuda.Stream()
        for x in batches:
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                feats = encoder(x)
            torch.cuda.synchronize()  # host waits for the whole device, every batch
            logits = head(feats)
    ```
    ```python
    import cupy as cp

    streams = [cp.cuda.Stream() for _ in range(2)]
    for i, chunk in enumerate(chunks):
        with streams[i % 2]:
            spectra[i] = cp.fft.fft(chunk)
        cp.cuda.Device().synchronize()  # serializes the two streams
    ```

    ```python
    from cuda.bindings import runtime as cudart


    def stage(batches, d_out, stream):
        for d_batch, nbytes in batches:
            err, tmp = cudart.cudaMalloc(nbytes)  # synchronizes the device, every batch
            cudart.cudaMemcpyAsync(tmp, d_batch, nbytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice, stream)
            cudart.cudaMemcpyAsync(d_out, tmp, nbytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice, stream)
            cudart.cudaFreeAsync(tmp, stream)
    ```

    ## Use instead
    ```python
    import torch


    def train(encoder, head, batches):
        side = torch.cuda.Stream()
        for x in batches:
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                feats = encoder(x)
            torch.cuda.current_stream().wait_stream(side)  # ordered on the device
            logits = head(feats)
    ```
    ```python
    import cupy as cp

    streams = [cp.cuda.Stream() for _ in range(2)]
    for i, chunk in enumerate(chunks):
        with streams[i % 2]:
            spectra[i] = cp.fft.fft(chunk)
    cp.cuda.Device().synchronize()  # once, after the pipeline
    ```

    ```python
    from cuda.bindings import runtime as cudart


    def stage(batches, d_out, stream):
        for d_batch, nbytes in batches:
            err, tmp = cudart.cudaMallocAsync(nbytes, stream)  # stream-ordered
            cudart.cudaMemcpyAsync(tmp, d_batch, nbytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice, stream)
            cudart.cudaMemcpyAsync(d_out, tmp, nbytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice, stream)
            cudart.cudaFreeAsync(tmp, stream)
    ```

    ## Fix safety
    There is no fix: whether a device-wide synchronization can become a stream or
    event wait depends on what the host does next, which a linter cannot decide.

    ## Known limits
    - Only the calls listed above are reported. Entering `torch.cuda.graph(...)`,
      which synchronizes as a side effect, is not this rule. A raw allocation
      between work on streams outside a hot path is SL101's barrier, not this
      rule's; a `cudaMalloc` right after a `cudaFree` of the previous pass is
      reported although that pass's free already drained the device.
    - Synchronizations inside functions of other modules are not seen.
    - Only the statements right after the synchronization (up to three, past
      other waits) are read for an assertion, a measurement or a capture; a sync
      whose purpose lies further away is still reported.
    - Whether a synchronization is really needed (for example before host code
      reads memory written by a kernel) cannot always be decided statically;
      where a device-wide one is intended, suppress the finding on that line.

    ## References
    - CUDA Runtime API: `cudaDeviceSynchronize`, `cudaStreamWaitEvent`,
      `cudaStreamSynchronize`, `cudaEventSynchronize`.
    - PyTorch documentation: *CUDA semantics* (`docs/source/notes/cuda.rst`,
      stream synchronization with `wait_stream`).
    - [API facts](../api-facts.md) (the fact base behind the tables in `src/streamlint/model/api/`): §2.1, §3.1, §4.1, §5.1 (stream and device
      synchronization), §9.
    """

    code = "SL103"
    name = "device-synchronize"
    summary = "Device-wide synchronization in a hot path or between stream work"

    def check(self, analysis):
        model = analysis.v3
        ancestry = Ancestry(analysis.module)
        purposes = SyncPurposes(ancestry)
        entries = {own.site: own for own in hot_paths.own_operations(model) if own.operation.op in _SYNCS}
        reported: set[str] = set()
        barriers = None  # (the nodes SL101 reports, read once a raw allocation is hot)
        syncs = [at for _, at in own_operations(model) if at.operation.op == _DEVICE_SYNC]
        for qualname, at in own_operations(model):
            operation = at.operation
            node = model.node_of(at.site)
            if operation.op not in _SYNCS or at.site in reported or node is None:
                continue
            loops = ancestry.loops_around(node)
            if comprehension_of(node, ancestry) is not None or _in_timed_loop(loops, purposes.modules) \
                    or any(hot_paths.measures(model, qualname, loop, ancestry) for loop in loops):
                continue  # (a benchmark's sync ends its timed region; a sweep's sits between measurements)
            where = _where(model, ancestry, qualname, at, node, loops, entries.get(at.site), syncs,
                           start_of(analysis)) or _called_in_loop(
                model, ancestry, at, loops, purposes.modules, analysis)
            if where is None:
                continue
            if operation.op == _RAW_ALLOC:
                if barriers is None:
                    barriers = {id(f.node) for f in DefaultStreamBarrier().check(analysis)}
                if where == _BETWEEN or id(node) in barriers:
                    continue  # (a raw allocation between stream work is SL101's barrier)
            reported.add(at.site)
            probes = frozenset(id(model.node_of(site)) for site in measuring_calls(model, qualname))
            purpose = purposes.purpose(node, False, False, operation.conditional, False, probes)
            if purpose is not None and purpose.needed:
                continue  # before an assertion, a timer or memory statistic, a graph capture
            what = api_named(_spelled(node, analysis))
            if operation.op == _RAW_ALLOC:
                yield Finding(
                    node,
                    f"{what} is not stream-ordered: it synchronizes the device {where}",
                    help="allocate once at set-up and reuse the memory, or use the stream-ordered "
                         "`cudaMallocAsync`/`cudaFreeAsync` on the stream that uses it",
                )
                continue
            if purpose is Purpose.STEP_TIMING:
                yield Finding(
                    node,
                    f"{what} waits for every stream on the device on every "
                    f"step of a training loop, to time or measure the step",
                    help=STEP_TIMING_HELP,
                )
                continue
            yield Finding(
                node,
                f"{what} waits for every stream on the device {where}",
                help=_CACHE_HELP if operation.api in torch_api.CACHE_RELEASES else
                "wait only for what is needed: `s.synchronize()`, an event, or "
                "`wait_stream`/`wait_event` to order streams on the device",
            )


# (the allocator reuses its cached blocks: freeing them every pass makes the next pass allocate again)
_CACHE_HELP = ("free the cache once, outside the per-step path (between phases, or when an allocation fails): the "
               "allocator reuses its cached blocks, and freeing them each time waits for the device")
_DEVICE_SYNC = "device synchronize"  # Operation.op (the fact tables' kind)
_RAW_ALLOC = "raw allocation"  # cudaMalloc / cudaFree: not stream-ordered, they synchronize the device
_SYNCS = frozenset({_DEVICE_SYNC, _RAW_ALLOC})
_BETWEEN = "between stream work"


def _in_timed_loop(loops: list, modules: frozenset) -> bool:
    """Inside a loop that reads a host timer: its synchronizations bound timed regions. Not a
    training loop's: timing every step there is the stall."""
    return not any(trains(loop, modules) for loop in loops) and any(timed(loop) for loop in loops)


def _drained_before(model, ancestry: Ancestry, function: str, at, node, loop, syncs: list, position) -> bool:
    """An earlier device sync of the same pass, on every pass, with no work queued since: the device is already
    drained here, so this wait costs nothing of its own (the earlier one is the stall)."""
    for other in syncs:
        if other.function != function or other.site == at.site or other.operation.conditional or other.chain:
            continue
        earlier = model.node_of(other.site)
        if earlier is None or not ancestry.every_pass(earlier, loop) or not ancestry.inside(earlier, loop):
            continue
        before, here = position(earlier), position(node)
        if before is None or here is None or before >= here:
            continue
        if not hot_paths.work_between(model, function, loop, ancestry, position, earlier, node, Work.QUEUED):
            return True
    return False


def _where(model, ancestry: Ancestry, qualname: str, at, node, loops: list, own, syncs: list = (),
           position=None) -> Optional[str]:
    """Where the sync stalls the device: on every call of a hot entry, on every iteration of a loop
    that queues GPU work, or between stream work; None when nowhere."""
    operation = at.operation
    function = qualname[len(model.module) + 1:]
    if own is not None and own.entry and not operation.conditional:
        return f"in `{_entry_named(own.entry, function)}`, on every call"
    if not operation.conditional:
        hot = hot_paths.repeating_loops(model, function, node, ancestry)
        # (a training step in a loop that waits for the CUDA device every pass runs on that device: the sync says
        # where the program trains, as a CUDA device on one path does)
        if hot and not _drained_before(model, ancestry, function, at, node, hot[-1], syncs, position):
            if work_in(model, function, hot[-1], ancestry, Work.QUEUED, Work.ORDERING):
                return "on every iteration of a loop that queues GPU work"
            if trains(hot[-1], imported_modules(ancestry.module)):
                return "on every step of a training loop"
    before, after = stream_work_around(model, qualname, at, ancestry)
    return _BETWEEN if before and after else None


def _called_in_loop(model, ancestry: Ancestry, at, loops: list, modules: frozenset, analysis) -> Optional[str]:
    """A helper's sync (no loop of its own) that a loop of another function of the file runs on every pass."""
    if loops:
        return None
    callers = [c for c in hot_paths.calling_loops(model, at, ancestry, Work.QUEUED, Work.ORDERING)
               if not _in_timed_loop(ancestry.loops_around(c.call), modules)]
    named = calling_loop_named(analysis, callers)
    return f"on every {named}" if named else None


def _entry_named(entry: str, function: str) -> str:
    """A framework step entry by its name (`forward`, `training_step`: `api/step_entries`); a hook PyTorch calls by
    its qualified name (`ParamOffloader._fetch`); a helper by its entry's."""
    method = entry.rsplit(".", 1)[-1]
    if entry == function and method not in step_entries.STEP_METHODS:
        return entry
    return hot_entry_name(entry, function)


def _spelled(node, analysis) -> str:
    func = node.func if isinstance(node, cst.Call) else node
    return labels.spelled(func) or analysis.code(func)
