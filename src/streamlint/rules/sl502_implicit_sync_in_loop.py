"""SL502 implicit-sync-in-loop: an implicit host synchronization on GPU data in a hot path."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import libcst as cst

from streamlint.model import api
from streamlint.model.api import cupy as cupy_api
from streamlint.model.api import python_std, torch_api
from streamlint.model.readings.hot_paths import (
    Work,
    bound_by_the_host,
    callers_operations,
    calling_loops,
    drained_before,
    off_the_hot_path,
    own_operations,
    read_just_before,
    repeating_loops,
    waited_later_in_pass,
    work_in,
)
from streamlint.model.readings.operations import OperationAt, round_trips
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.model.syntax.children import walk
from streamlint.model.syntax.sync_purpose import (
    Purpose,
    SyncPurposes,
    comprehension_of,
    element_read,
    over_held_values,
)
from streamlint.model.syntax.tests import update_boundaries
from streamlint.rules._shared import (
    OPERATION_WORDS,
    STEP_TIMING_HELP,
    api_named,
    calling_loop_named,
    hot_entry_name,
    start_of,
)
from streamlint.rules.base import Finding, Rule
from streamlint.rules.sl202_blocking_copy_in_stream_region import BlockingCopyInStreamRegion


class ImplicitSyncInLoop(Rule):
    """
    ## What it does
    Flags an operation that implicitly copies GPU data to the host and waits for
    it, in a hot path (a loop body that queues GPU work, the `forward` method
    of an `nn.Module` subclass or a function stored as a module's `forward`, a
    function registered as an autograd or module hook, the `__getitem__` of a
    `torch.utils.data.Dataset` subclass (once per sample), a method a framework
    calls once per step of a loop out of sight (a custom autograd function's
    `forward`/`backward`, Lightning's `training_step` and batch hooks, a
    Hugging Face trainer's `training_step` and callbacks' `on_step_end`, a Gym
    environment's `step` and what it calls on the environment every call, an
    iterator's `__next__`), or a helper of the same module that one of these calls on every call:
    reported in the helper, naming that `forward` or hook):
    - PyTorch, on a CUDA tensor: `.item()`, `.tolist()`, `.cpu()`,
      `.numpy(force=True)`, `.to("cpu")` without `non_blocking=True`,
      `print()`, `str()`, `repr()` or `format()` of the tensor, an f-string or
      `%` formatting of it (`f"loss {loss}"`), its truth value (`if t:`,
      `bool(t)`, `while t:`), and operations whose result's size depends on the
      data (`nonzero`, `argwhere`, `masked_select`, `unique`,
      `unique_consecutive`, `torch.where(cond)` with one argument, indexing
      with a boolean mask, `x[mask]`, and storing a tensor under one,
      `x[mask] = y`; a number stored under one mask is `masked_fill_`, no
      read), storing a CUDA tensor into a CPU tensor (`pose[:3, :3] = rot`,
      a copy back to the host), and a
      CUDA tensor where the host needs a Python integer (a slice bound,
      `x[:n]`; `topk`'s and `kthvalue`'s `k`, `narrow`'s `start` and
      `length`): PyTorch reads it back, whatever the integer is for.
    - CuPy, on a CuPy array: `.get()`, `cp.asnumpy()`, `float(x)`, `int(x)`,
      `x.item()`, indexing with a boolean mask and storing under one.

    A mask is a tensor or array that how it was made shows holds booleans: a
    comparison (`x > t`), `~`, `&`, `|` of masks, `.bool()`, a predicate such as
    `isnan` or `logical_and`. An index of unknown kind is no mask.

    A comprehension that queues GPU work for each element and synchronizes on it
    (`[int(t.sum().item()) for t in parts]`) is reported too, whatever the values
    are for: one read of all of them replaces one wait per element (not one over
    a mapping's items, `{k: v.mean().item() for k, v in metrics.items()}`, once
    per named value, that nothing around repeats on a hot path: an evaluation's
    summary, an export; a comprehension that only reads, the work queued before
    it, waits once, and is reported where its loop repeats it, as a plain read). So is a loop
    that reads one element of the same tensor per iteration by the loop's index
    (`for b in range(n): ... lengths[b].item()`) and does not change that tensor:
    one `.tolist()` before the loop reads them all (not in assertions, timing or
    debug logs, which read elements on purpose). So is Python's `all()` or
    `any()` of a CUDA tensor (`if all(done): break`): it iterates the tensor on
    the host and reads each element's truth with a wait of its own, where
    `done.all()` reads the answer once, even where the loop needs it to exit.

    It stays silent where the code's shape shows that the host needs the value
    now, so that the wait is the price of the logic rather than a stall:
    - the value decides the control flow: a `while` test (`while err > tol:`),
      an `if` that leaves the loop or the function or queues other work
      (`if cp.all(new == old): break`), a `for` iterable, a `range()` bound;
    - it decides the shape of the next arrays (`n = int(mask.sum())` then
      `torch.empty(n)`, a slice bound, `view`/`reshape` arguments); a result
      sized by the data in a pass that reads such a count anyway is part of
      that pass's shapes;
    - an assertion checks it (`assert`, `np.testing.assert_*`,
      `torch.testing.assert_close`, `self.assert*`), or it is compared with a
      reference on the host (`np.allclose(x.get(), ref)`, `np.array_equal`,
      a printed `np.linalg.norm(cp.asnumpy(x) - ref)`);
    - it ends a timed or measured region (a host timer, `elapsed_time`,
      `torch.cuda.max_memory_allocated()`, `memory_stats()`, CuPy's pool
      `used_bytes()` right next to it), or precedes a CUDA-graph capture;
    - it is printed or logged in a block of log lines under a switch the loop
      does not change (`if verbosityLevel > 0:`): a debug path, off unless
      asked for;
    - later in the same pass, on every pass, the host reads a value it needs in
      one of these ways (a decoding loop keeps the new token with
      `generated.append(tok.item())`, then breaks on `if tok.item() == eos:` or
      on a score threshold): that read waits for everything the earlier one
      waits for, so the earlier one adds no wait of its own.

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

    In a training loop (its body calls the methods
    `backward()` and `step()`), a read next to a timer or a memory statistic
    on every step is reported: timing every step is the stall there, and the
    advice is to time a window of steps.

    The value is followed through assignments (`res = float(diff)` then
    `if res < tol: break`). The advice fits what the value feeds: a branch that
    only picks between values gets `torch.where` / `cp.where`; a branch that
    only raises or logs gets "check every N steps"; an array read back in a
    loop that is fed chunk by chunk and keeps each result (stored, appended,
    yielded) is a streaming pipeline's output, where reading once after the loop
    is no option: it gets the non-blocking read-back into pinned buffers.

    CPU tensors and NumPy arrays are never reported, nor are comparisons of
    Python ints taken from arrays (`a.data.ptr == b.data.ptr`,
    `x.shape[0] == n`, `t.numel()`).

    The reads of one pass that follow each other in one block with no GPU
    work queued between them (`times[k] = t.cpu().numpy()`, then
    `positions[k] = xyz.cpu().numpy()`) are one problem: the first waits for
    the stream, the others add a copy each. One finding, at the first, names
    the lines of the others; a read after other GPU work starts a run of its
    own. A read under a test that read the value already (`if mean > 50:`
    then `logger.warning(f"mean {mean}")`), with no GPU work queued between,
    adds no wait either: it joins that read's finding, or is silent when the
    host needs the tested value.

    **One stream or several.** A blocking copy in a loop that uses one stream
    costs host/GPU overlap: the host waits for the stream every iteration and
    cannot queue the next iteration's work while the GPU runs. SL502 reports
    that. When work on *another* stream is queued after the copy, the copy also
    keeps the streams from overlapping; SL202 reports it then, and SL502 does not
    report the same call again.

    ## Why is this bad?
    Each of these reads device memory on the host, so the host must wait until
    every operation queued before it on the stream has finished (PyTorch
    synchronizes the current stream; CuPy's `get()` synchronizes the whole
    stream it runs on). Inside a loop the host stops once per iteration: the
    GPU drains its queue and then sits idle while Python prepares and launches
    the next iteration's work, instead of the host staying ahead of the GPU.
    These operations are also illegal during CUDA graph capture.

    Keep the values on the device and read them once, after the loop, or at a
    coarser interval; or, for a pipeline's output, read back without blocking.

    ## Example
    ```python
    import torch


    def train(model, optimizer, steps, batch, dim):
        target = torch.zeros(batch, 1, device="cuda")
        history = []
        for step in range(steps):
            x = torch.randn(batch, dim, device="cuda")
            loss = (model(x) - target).pow(2).mean()
            loss.backward()
            optimizer.step()
            history.append(loss.item())  # host waits for the whole step
        return history
    ```
    ```python
    import cupy as cp

    results = []
    for chunk in chunks:
        spectrum = cp.fft.fft(cp.asarray(chunk))
        results.append(cp.asnumpy(spectrum))  # host waits for every chunk
    ```

    ## Use instead
    ```python
    import torch


    def train(model, optimizer, steps, batch, dim):
        target = torch.zeros(batch, 1, device="cuda")
        history = torch.empty(steps, device="cuda")
        for step in range(steps):
            x = torch.randn(batch, dim, device="cuda")
            loss = (model(x) - target).pow(2).mean()
            loss.backward()
            optimizer.step()
            history[step] = loss.detach()
        return history.tolist()  # one transfer, one wait
    ```
    The chunks stream through the GPU, so their results are the output: read
    each one back without blocking, into pinned memory, and wait once.
    ```python
    import cupy as cp
    import cupyx

    stream = cp.cuda.Stream(non_blocking=True)
    results = []
    with stream:
        for chunk in chunks:
            spectrum = cp.fft.fft(cp.asarray(chunk))
            out = cupyx.empty_pinned(spectrum.shape, dtype=spectrum.dtype)
            spectrum.get(stream=stream, out=out, blocking=False)
            results.append(out)
    stream.synchronize()  # once, before the host reads `results`
    ```

    ## Fix safety
    There is no fix: removing a host synchronization means keeping the value on the
    device or reading it less often, which changes the program.

    ## Known limits
    - Only values known to be CUDA tensors or CuPy arrays are reported; values
      returned by unknown calls or received as parameters stay silent.
    - Whether a value is needed is decided from the body it is read in: a value
      returned to a caller that branches on it is still reported.
    - Other implicitly synchronizing operations, such as boolean-mask indexing
      and `nonzero()`, are not reported by this rule (`torch.equal` on CUDA
      tensors is, since it ends in `.item()`).
    - `Tensor.numpy()` without `force=True` raises on a CUDA tensor rather than
      synchronizing.
    - A read of a CuPy value made only from host numbers (`int(cp.ceil(n / 32))`)
      is SL503's, in a loop or not: it needs no device at all.

    ## References
    - PyTorch: `torch.cuda.set_sync_debug_mode` (runtime detection of
      synchronizing operations).
    - CuPy: `cupy.ndarray.get`, `cupy.asnumpy` (blocking by default since v13,
      cupy/cupy#7938; `blocking=False` needs a pinned `out`, cupy/cupy#1692).
    - pytorch/pytorch#87794 (synchronization during graph capture).
    - [API facts](../api-facts.md) (the fact base behind the tables in `src/streamlint/model/api/`): §2.4 *Kernels and implicitly synchronizing
      operations*, §4.4 *Implicitly synchronizing ops*, §8 items 11-12.
    """

    code = "SL502"
    name = "implicit-sync-in-loop"
    summary = "Implicit host synchronization on a CUDA tensor or CuPy array in a hot path"

    def check(self, analysis):
        model = analysis.v3
        ancestry = Ancestry(analysis.module)
        purposes = SyncPurposes(ancestry)
        trips = {trip.read_site for trip in round_trips(model)}  # SL503's: the value needs no device at all
        operations = own_operations(model)
        by_callers = callers_operations(model)  # (placed at the callers' loops only)
        found: list[tuple[Finding, _Sync]] = []
        for own in operations + by_callers:
            operation = own.operation
            if operation.op not in _READS or own.site in trips:
                continue
            if operation.op == _D2H and not _blocking_read_back(own):
                continue
            node = model.node_of(own.site)
            if node is None:
                continue
            if _truth_value(own, node):
                while isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
                    node = node.expression  # (`if not torch.isfinite(z).all():` reads the value under the `not`)
            sync = _Sync(own, node, ancestry.loops_around(node), comprehension_of(node, ancestry))
            finding = _at_callers(analysis, model, ancestry, purposes, sync) if own in by_callers \
                else _finding(analysis, model, ancestry, purposes, sync, operations)
            if finding is not None:
                found.append((finding, sync))
        yield from _one_per_run(analysis, model, ancestry, found, operations)


def _one_per_run(analysis, model, ancestry: Ancestry, found: list, operations: list) -> list[Finding]:
    """One finding per run of reads: reads of one pass in one block (one statement, or statements side by side) with
    no GPU work queued between them wait once, at the first; the others add a copy each, not a wait for the stream.
    The first is reported, naming the lines of the others (a read per element or per comprehension stays its own).
    A run whose first read follows, with nothing queued since, an earlier read that runs whenever it does (the test
    of the `if` it is under) adds no wait either: it joins that read's run, or, when that read is not reported (the
    host needs its value), it is silent."""
    position = start_of(analysis)
    runs: list[list] = []
    for finding, sync in sorted(found, key=lambda pair: position(pair[0].node) or (0, 0)):
        last = runs[-1][-1][1] if runs else None
        if last is not None and _runs_on(model, ancestry, last, sync):
            runs[-1].append((finding, sync))
        else:
            runs.append([(finding, sync)])
    kept: list[list] = []
    for run in runs:
        first = run[0][1]
        if _drained(model, ancestry, first, position):
            continue
        earlier = read_just_before(model, ancestry, operations, first.own, first.node, position) \
            if _groups(first) else None
        if earlier is None:
            kept.append(run)
            continue
        joined = next((k for k in kept if any(sync.node is earlier for _, sync in k)), None)
        if joined is not None:
            joined.extend(run)
    return [_naming_the_rest(analysis, ancestry, run) for run in kept]


def _drained(model, ancestry: Ancestry, sync: "_Sync", position) -> bool:
    """A device-wide wait earlier in the pass drained the stream before the run's first read: the run adds copies,
    not a stall (that wait is the stall, SL103's to judge, or a measurement's)."""
    if not _groups(sync) or not sync.loops:
        return False
    hot = repeating_loops(model, sync.own.function, sync.node, ancestry)
    return bool(hot) and drained_before(model, sync.own.function, hot[-1], ancestry, position, sync.node)


def _runs_on(model, ancestry: Ancestry, earlier: "_Sync", later: "_Sync") -> bool:
    """Does `later` read right after `earlier` in the same pass: one function, one block, no GPU work queued between
    (in the text between them: the body of an `if` whose test is `earlier` included)?"""
    if not (_groups(earlier) and _groups(later)) or earlier.own.function != later.own.function:
        return False
    first, second = _statement_of(ancestry, earlier.node), _statement_of(ancestry, later.node)
    if first is None or second is None or ancestry.parent(first) is not ancestry.parent(second):
        return False
    if first is second:
        return True
    body = list(getattr(ancestry.parent(first), "body", ()))
    at = {id(statement): index for index, statement in enumerate(body)}
    if id(first) not in at or id(second) not in at or at[id(first)] > at[id(second)]:
        return False
    between = body[at[id(first)] + 1:at[id(second)]] + _blocks_after(first, earlier.node, ancestry)
    return not any(work_in(model, earlier.own.function, statement, ancestry, Work.QUEUED) for statement in between)


def _blocks_after(statement: cst.CSTNode, read: cst.CSTNode, ancestry: Ancestry) -> list:
    """The blocks of a compound statement that run after a read in its header (`if t > 0:` then its sides)."""
    blocks = [getattr(statement, "body", None), getattr(statement, "orelse", None)]
    return [b for b in blocks if isinstance(b, cst.CSTNode) and not ancestry.inside(read, b)]


def _groups(sync: "_Sync") -> bool:
    """A read of the pass itself (not one per element, nor per comprehension, nor only sometimes)."""
    per_element = _reads_an_element(sync) and element_read(sync.node, sync.loops[-1])
    return sync.comprehension is None and not sync.own.operation.conditional and not per_element


def _reads_an_element(sync: "_Sync") -> bool:
    """A read of a value in a loop (`q[b].item()`, `if q[b] < 0:`) that may be one element's; a selection sized by
    the data (`x[mask]`, `nonzero`) reads a count, never an element, whatever it indexes."""
    return sync.own.operation.op == _IMPLICIT and bool(sync.loops) and not _sized_by_data(sync.own.operation.api)


def _statement_of(ancestry: Ancestry, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    return next((a for a in ancestry.ancestors(node) if isinstance(a, cst.BaseStatement)), None)


def _naming_the_rest(analysis, ancestry: Ancestry, run: list) -> Finding:
    finding = run[0][0]
    if len(run) == 1:
        return finding
    lines = sorted({analysis.position(f.node).start.line for f, _ in run[1:] if analysis.position(f.node) is not None})
    named = ", ".join(str(line) for line in lines)
    store = _gathering_store(ancestry, run[0][1])
    if store is not None and all(ancestry.inside(sync.node, store.value) for _, sync in run[1:]):
        # (the value's own gather by the same mask: the help computes the value on every element instead)
        return replace(finding, message=f"{finding.message}, and its value's gather by the same mask waits too "
                                        f"(line{'s' if len(lines) > 1 else ''} {named})")
    more = f"{len(run) - 1} more read{'s' if len(run) > 2 else ''} right after it (line{'s' if len(lines) > 1 else ''} {named})"
    # (masks: their indices taken once wait once, and indexing by them waits for nothing)
    rest = _MASKS_ONCE if finding.help == _FIXED_SHAPES else "read the values of the reads after it in the same copy"
    return replace(finding, message=f"{finding.message}, with {more}",
                   help=f"{finding.help}; {rest}" if finding.help else None)


@dataclass(frozen=True)
class _Sync:
    own: OperationAt
    node: cst.CSTNode
    loops: list  # loop statements around it in its function, outermost first
    comprehension: Optional[cst.CSTNode]

    @property
    def framework(self) -> str:
        return api.framework_of(self.own.operation.api) or self.own.framework or "torch"

    def purpose(self, model, ancestry: Ancestry, purposes: SyncPurposes):
        loop = self.loops[-1] if self.loops else None
        uploads = loop is not None and work_in(model, self.own.function, loop, ancestry, Work.UPLOAD)
        copy = self.own.operation.op == _D2H
        into = copy and self.own.operation.into_given  # (`x.get(out=buf)` writes a buffer; it returns no value)
        return purposes.purpose(self.node, True, copy, self.own.operation.conditional, uploads, into=into)


def _finding(analysis, model, ancestry: Ancestry, purposes: SyncPurposes, sync: _Sync, operations: list
             ) -> Optional[Finding]:
    operation = sync.own.operation
    what = _what(analysis, sync)
    if operation.api in python_std.ELEMENTWISE_TRUTH:
        return _elementwise_truth(analysis, model, ancestry, purposes, sync)
    # (a slice bound's read shows at its subscript, whose indexed tensor is not the one read)
    if _reads_an_element(sync) and sync.framework in ("torch", "cupy") \
            and operation.api != torch_api.SLICE_BOUND and not bound_by_the_host(model, sync.loops, ancestry) \
            and not off_the_hot_path(model, sync.own.function):
        read_by_element = element_read(sync.node, sync.loops[-1])
        if read_by_element and sync.purpose(model, ancestry, purposes) not in _ELEMENT_READ_NEEDED:
            return Finding(
                sync.node,
                f"{what} waits for the stream on every iteration to read one element of `{read_by_element}`",
                help=f"read all the elements once before the loop (`{read_by_element}.tolist()`) and index that list",
            )
    if sync.comprehension is not None and operation.conditional:
        return None
    if sync.comprehension is not None and work_in(model, sync.own.function, sync.comprehension, ancestry, Work.QUEUED):
        if over_held_values(sync.comprehension) and not _repeated(model, ancestry, sync):
            return None  # (once per value a mapping holds, once: an export, a summary)
        if _sized_by_data(operation.api):
            if _shaped_by_the_host(analysis, model, ancestry, purposes, operations, sync):
                return None
            return Finding(sync.node, f"{what} sizes its result from the data, so the host waits for the stream once "
                                      f"per element of this comprehension", help=_ONE_SELECTION)
        # Needed or not, the values can come back in one copy instead of one per element.
        return Finding(
            sync.node,
            f"{what} waits for the stream once per element of this comprehension",
            help=_ONE_READ.get(sync.framework, _ONE_READ["torch"]),
        )
    where = _hot_where(model, ancestry, sync) or _called_in_loop(analysis, model, ancestry, purposes, sync)
    if where is None:
        return None
    if operation.op == _D2H and any(f.node is sync.node for f in BlockingCopyInStreamRegion().check(analysis)):
        return None  # SL202 reports this call (other streams' work could overlap it)
    if operation.api in _READ_AS_INTEGER:  # (a tensor where the host needs a Python integer: the read is the problem)
        return Finding(sync.node, f"{what} is a GPU value the host reads back as an integer, so it waits for the stream "
                                  f"on every {where}", help=_READ_ONCE)
    purpose = sync.purpose(model, ancestry, purposes)
    if purpose is not None and purpose.needed:
        return None  # the host needs the value: control flow, a shape, a test, a measurement
    if sync.loops and waited_later_in_pass(model, ancestry, purposes, operations, sync.own, sync.node, sync.loops[-1],
                                           start_of(analysis)):
        return None  # a later read of the same pass that the host needs waits for all this one waits for
    if _sized_by_data(operation.api):
        if _shaped_by_the_host(analysis, model, ancestry, purposes, operations, sync):
            return None
        if operation.api == torch_api.MASK_STORE:
            return Finding(sync.node, f"{what} counts the mask's items on the host first, so the host waits for the "
                                      f"stream on every {where}", help=_masked_write(analysis, ancestry, sync))
        return Finding(sync.node, f"{what} sizes its result from the data, so the host waits for the stream on every "
                                  f"{where}", help=_FIXED_SHAPES)
    return _worded(analysis, sync, what, where, purpose)


def _at_callers(analysis, model, ancestry: Ancestry, purposes: SyncPurposes, sync: _Sync) -> Optional[Finding]:
    """A read only some callers' facts show (the value's device): reported where those callers' loops run it on every
    pass (the message names the loop), unless needed."""
    where = _called_in_loop(analysis, model, ancestry, purposes, sync)
    purpose = sync.purpose(model, ancestry, purposes) if where is not None else None
    if where is None or (purpose is not None and purpose.needed):
        return None
    return _worded(analysis, sync, _what(analysis, sync), where, purpose)


def _gathering_store(ancestry: Ancestry, sync: "_Sync") -> Optional[cst.Assign]:
    """The store `x[mask] = f(x[mask])` whose value gathers by the same mask from the same holder, else None."""
    node = sync.node
    target = ancestry.parent(node)
    statement = ancestry.parent(target) if isinstance(target, cst.AssignTarget) else None
    if not (isinstance(statement, cst.Assign) and isinstance(node, cst.Subscript) and len(node.slice) == 1):
        return None
    return statement if _same_gathers(statement.value, node) else None


def _same_gathers(value: cst.BaseExpression, store: cst.Subscript) -> list:
    """The subscripts in `value` that index a holder by the store's index, as written (`x[m] = x[m] - c`,
    `final[done] = running[done]`): a gather by the same mask, of a holder of the store's shape."""
    return [n for n in walk(value, ()) if isinstance(n, cst.Subscript) and len(n.slice) == len(store.slice)
            and all(a.deep_equals(b) for a, b in zip(n.slice, store.slice))]


def _masked_write(analysis, ancestry: Ancestry, sync: _Sync) -> str:
    """The store `x[mask] = v` written through the mask with no count, in the user's names where one mask is the
    whole index."""
    node = sync.node
    target = ancestry.parent(node)  # (`x[mask] = v`: Assign > AssignTarget > Subscript)
    statement = ancestry.parent(target) if isinstance(target, cst.AssignTarget) else None
    if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(statement, cst.Assign) and len(statement.targets) == 1):
        return "write through the mask on the device with no count (`where`), or select with fixed shapes"
    holder, mask, value = (analysis.module.code_for_node(n).strip() for n in (node.value, node.slice[0].slice.value,
                                                                               statement.value))
    if sync.framework == "cupy":
        return f"write through the mask on the device, with no count: `cp.copyto({holder}, {value}, where={mask})`"
    gathers = _same_gathers(statement.value, node)
    if gathers:  # `x[m] = y[m] - c`: the value computed for every element has `x`'s shape, and no gather
        whole = statement.value
        for gather in gathers:
            whole = whole.deep_replace(gather, gather.value)
        rewritten = analysis.module.code_for_node(whole).strip()
        return (f"write through the mask on the device, with no count and no gather: "
                f"`{holder}.copy_(torch.where({mask}, {rewritten}, {holder}))`")
    # (measured, torch 2.11: `where` and `masked_scatter_` wait for nothing; `masked_fill_` with a 0-d CUDA tensor
    # waits, and a row mask must be widened to broadcast: benchmarks/probes/mask_writes*.py)
    return (f"write through the mask on the device, with no count: `{holder}.copy_(torch.where({mask}, {value}, {holder}))`"
            f" when the value is a 0-d tensor or has `{holder}`'s shape, `{holder}.masked_scatter_({mask}, {value})` "
            f"when it holds only the selected items (either way the mask widened to `{holder}`'s shape: "
            f"`[:, None]` for a mask of its rows)")


def _shaped_by_the_host(analysis, model, ancestry: Ancestry, purposes: SyncPurposes, operations: list, sync: _Sync) -> bool:
    """The pass reads, on every pass, another value the host needs (a count that sizes a buffer): its shapes are the
    host's to decide anyway, and fixed shapes are no advice for it."""
    return bool(sync.loops) and waited_later_in_pass(model, ancestry, purposes, operations, sync.own, sync.node,
                                                     sync.loops[-1], start_of(analysis), before_too=True)


def _sized_by_data(api_name: str) -> bool:
    """`x.nonzero()`, `torch.unique(x)`, `torch.where(cond)`, `cupy.where(cond)`: the host reads the result's size first."""
    short = api_name.rsplit(".", 1)[-1]
    return short in torch_api.SIZED_BY_DATA or api_name in ("torch.where", "cupy.where", *_MASKED) \
        or (api_name.startswith("cupy.") and short in cupy_api.SIZED_BY_DATA)


_MASKED = (torch_api.MASK_INDEX, torch_api.MASK_STORE)
_READ_AS_INTEGER = frozenset({torch_api.SLICE_BOUND, torch_api.INTEGER_ARGUMENT})
_READ_ONCE = ("read the values the host needs once, outside the per-step path (`.tolist()`), or keep the shapes fixed on "
              "the device (a mask, `torch.where(mask, x, 0)`)")
_ONE_SELECTION = ("select for all the elements at once on the device (one mask over the whole batch, "
                  "`torch.where(mask, x, 0)`), or read the sizes once with one `.tolist()`")
_FIXED_SHAPES = ("keep shapes fixed on the device: a mask (`torch.where(mask, x, 0)`, or `x * mask` where `x` holds no "
                 "NaN) instead of the indices or values it selects, or do it once outside the per-step path")
_MASKS_ONCE = ("or take each mask's indices once (`idx = mask.nonzero()[:, 0]`, one wait) and index with them "
               "(`x[idx]` waits for nothing)")


def _blocking_read_back(own: OperationAt) -> bool:
    """A PyTorch or CuPy device-to-host copy of device memory that the host waits for (`t.cpu()`,
    `x.get()`, `cp.asnumpy(x)`; a host tensor's `copy_` from the device is SL301's and SL202's)."""
    framework = api.framework_of(own.operation.api)
    return own.operation.host_blocking is True and framework in ("torch", "cupy") and own.operation.api not in _INTO_HOST


def _repeated(model, ancestry: Ancestry, sync: _Sync) -> bool:
    """Does something around the read repeat it on a hot path: a loop of its function, a hot entry, a caller's loop?"""
    return _hot_where(model, ancestry, sync) is not None or bool(calling_loops(model, sync.own, ancestry, Work.QUEUED))


def _elementwise_truth(analysis, model, ancestry: Ancestry, purposes: SyncPurposes, sync: _Sync) -> Optional[Finding]:
    """`all(done)` of a CUDA tensor in a hot loop: one wait per element, where the tensor's own method reads the answer
    in one copy (needed or not, as the loop's exit test: one read instead of one per element)."""
    node = sync.node
    if not isinstance(node, cst.Call) or len(node.args) != 1 or sync.comprehension is not None:
        return None
    where = _hot_where(model, ancestry, sync) or _called_in_loop(analysis, model, ancestry, purposes, sync)
    if where is None:
        return None
    spelled = analysis.module.code_for_node(node.args[0].value).strip()
    method = python_std.ELEMENTWISE_TRUTH[sync.own.operation.api]
    return Finding(node, f"`{method}({spelled})` reads the tensor's elements one by one on the host, a copy and a "
                         f"wait for the stream per element read, on every {where}",
                   help=f"test them in one read: `{spelled}.{method}()`")


def _hot_where(model, ancestry: Ancestry, sync: _Sync) -> Optional[str]:
    """"iteration" in a loop that queues GPU work on every pass, "call of `forward`" on every call
    of a hot entry; None when not on a hot path (or only sometimes)."""
    own = sync.own
    if own.operation.conditional:
        return None
    scopes = [*sync.loops, *([sync.comprehension] if sync.comprehension is not None else [])]
    if own.entry and not any(work_in(model, own.function, scope, ancestry, Work.QUEUED) for scope in scopes):
        # (loops of its own that queue no GPU work: the first read of a call waits, the others copy)
        return f"call of `{hot_entry_name(own.entry, own.function)}`"
    loops = repeating_loops(model, own.function, sync.node, ancestry)
    if own.entry and loops:
        return "iteration"
    # (a nested loop that only reads values back repeats the wait of the loop around it that queues the work)
    if any(work_in(model, own.function, loop, ancestry, Work.QUEUED) for loop in loops):
        return "optimizer step" if _at_update(ancestry, sync.node, loops[-1]) else "iteration"
    return None


def _at_update(ancestry: Ancestry, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """In the `if` of a training loop that steps the update (gradient accumulation): once per optimizer step."""
    boundaries = update_boundaries([loop])
    if not boundaries:
        return False
    for ancestor in ancestry.ancestors(node):
        if ancestor is loop:
            break
        if type(ancestor) is cst.If and id(ancestor.test) in boundaries:
            return True
    # (after `if (i + 1) % accum: continue`, which lets through the passes that step)
    for statement in loop.body.body:
        if ancestry.inside(node, statement):
            return False
        if type(statement) is cst.If and id(statement.test) in boundaries:
            return True
    return False


def _called_in_loop(analysis, model, ancestry: Ancestry, purposes: SyncPurposes, sync: _Sync) -> Optional[str]:
    """A helper's read that a loop of another function of the file runs on every pass: one with no loop of its own, or
    in loops of its own that queue no GPU work (`for k, v in meters.items(): v.item()`: the first read waits, the others
    copy), so each call waits once. One whose value the helper hands back is the caller's to judge: only the loops whose
    call's value the host does not need there (nor hands back again) count."""
    scopes = [*sync.loops, *([sync.comprehension] if sync.comprehension is not None else [])]
    if any(work_in(model, sync.own.function, scope, ancestry, Work.QUEUED) for scope in scopes):
        return None
    loops = calling_loops(model, sync.own, ancestry, Work.QUEUED)
    if purposes.handed_back(sync.node):
        copy = sync.own.operation.op == _D2H
        loops = [c for c in loops if not purposes.handed_back(c.call) and not _needed(
            purposes.purpose(c.call, True, copy, False, work_in(model, c.function, c.loop, ancestry, Work.UPLOAD)))]
    return calling_loop_named(analysis, loops)


def _needed(purpose) -> bool:
    return purpose is not None and purpose.needed


def _truth_value(own: OperationAt, node: cst.CSTNode) -> bool:
    """A test's truth value read (`if t:`), not an explicit `bool(t)`."""
    explicit = isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "bool"
    return own.operation.api == "bool" and not explicit


def _what(analysis, sync: _Sync) -> str:
    node = sync.node
    if not isinstance(node, cst.Call) and sync.own.operation.api in OPERATION_WORDS:
        return api_named(sync.own.operation.api)  # "this f-string", "this string formatting"
    if _truth_value(sync.own, node) or not isinstance(node, cst.Call):
        return "the truth value of a GPU array"
    if isinstance(node.func, cst.Name):
        return f"`{node.func.value}()`"
    return f"`{analysis.code(node.func)}`"


def _worded(analysis, sync: _Sync, what: str, where: str, purpose) -> Finding:
    node, framework = sync.node, sync.framework
    if purpose is Purpose.SELECTION:
        return Finding(node, f"{what} waits for the stream on every {where} only to choose between values",
                       help=f"select on the device: `{_WHERE.get(framework, 'torch.where')}(cond, a, b)`")
    if purpose is Purpose.CHECK:
        return Finding(node, f"{what} waits for the stream on every {where} only for a check or a log line",
                       help="check every N steps, or keep the values on the device and inspect them once after the loop")
    if purpose is Purpose.STEP_TIMING:
        return Finding(node, f"{what} waits for the stream on every step of a training loop, to time or measure the step",
                       help=STEP_TIMING_HELP)
    if purpose is Purpose.OUTPUT:
        operand = _operand(analysis, node)
        return Finding(
            node,
            f"{what} waits for the stream on every {where} of this streaming loop, "
            f"so the next chunk's work cannot overlap the read-back",
            help=_STREAM_OUT.get(framework, _STREAM_OUT["torch"]).replace("x.", f"{operand}.", 1).replace("(x,", f"({operand},"),
        )
    if sync.comprehension is not None:  # (one read per element of a helper's comprehension, each call)
        return Finding(node, f"{what} copies GPU data to the host once per element and waits for the stream on every "
                             f"{where}", help=f"{_ONE_READ.get(framework, _ONE_READ['torch'])}, or read them outside the "
                                              f"per-step path")
    return Finding(
        node,
        f"{what} copies GPU data to the host and waits for the stream on every {where}",
        help="keep the value on the device and read it once after the loop (or every N steps)"
        if where == "iteration" else
        "keep the value on the device (a tensor in the computation, not a Python number), or "
        "read it outside the per-step path",
    )


_IMPLICIT, _D2H = "implicit synchronization", "D2H copy"  # Operation.op (the fact tables' kinds)
# Copies whose receiver is the host side (the destination written): not a read-back of the receiver.
_INTO_HOST = frozenset({"torch.Tensor.copy_"})
_READS = frozenset({_IMPLICIT, _D2H})


# A test or a measurement reads elements one by one on purpose.
_ELEMENT_READ_NEEDED = frozenset({Purpose.ASSERTION, Purpose.VERIFY, Purpose.MEASUREMENT, Purpose.DEBUG})
# One read-back for all the elements' values, instead of one wait per element.
_ONE_READ = {
    "torch": "compute the values on the device, then read them all at once with one `.tolist()`",
    "cupy": "compute the values on the device, then read them all at once with one `cp.asnumpy(...)`",
}


def _operand(analysis, node) -> str:
    """The array read back, as spelled (`r` of `r.get()` or `cp.asnumpy(r)`)."""
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("get", "cpu", "to", "numpy"):
            text = analysis.code(node.func.value)
        elif node.args:
            text = analysis.code(node.args[0].value)
        else:
            text = ""
        if text and len(text) <= 30 and "\n" not in text and "[...]" not in text:
            return text  # (an abridged subscript is no code to paste)
    return "x"


_WHERE = {"torch": "torch.where", "cupy": "cp.where"}
# A streaming pipeline's read-back: keep it per iteration, but without the wait.
_STREAM_OUT = {
    "cupy": "read back without waiting: `x.get(stream=s, out=pinned[i], blocking=False)` into "
            "`cupyx.empty_pinned` buffers, then one `s.synchronize()` before the host uses them",
    "torch": "read back without waiting: `pinned[i].copy_(x, non_blocking=True)` into "
             "`pin_memory=True` buffers, then one stream or event `synchronize()` before the host uses them",
}
