"""SL502 implicit-sync-in-loop: an implicit host synchronization on GPU data in a hot path."""

from __future__ import annotations

import libcst as cst

from streamlint.model.ops import OpKind
from streamlint.model.purpose import Purpose, sync_purpose
from streamlint.model.queries import host_round_trip, hot_function, in_hot_path, per_element_read, per_element_sync
from streamlint.model.values import Buffer, Mem
from streamlint.rules._shared import STEP_TIMING_HELP, api_named, blocking_copy_in_region
from streamlint.rules.base import Finding, Rule


class ImplicitSyncInLoop(Rule):
    """
    ## What it does
    Flags an operation that implicitly copies GPU data to the host and waits for
    it, in a hot path (a loop body that queues GPU work, the `forward` method
    of an `nn.Module` subclass, a function registered as an autograd or module
    hook, or a helper of the same module that one of these calls on every call:
    reported in the helper, naming that `forward` or hook):
    - PyTorch, on a CUDA tensor: `.item()`, `.tolist()`, `.cpu()`,
      `.numpy(force=True)`, `.to("cpu")` without `non_blocking=True`,
      `print()` of the tensor, and its truth value (`if t:`, `bool(t)`,
      `while t:`).
    - CuPy, on a CuPy array: `.get()`, `cp.asnumpy()`, `float(x)`, `int(x)`,
      `x.item()`.

    A comprehension that queues GPU work for each element and synchronizes on it
    (`[int(t.sum().item()) for t in parts]`) is reported too, whatever the values
    are for: one read of all of them replaces one wait per element. So is a loop
    that reads one element of the same tensor per iteration by the loop's index
    (`for b in range(n): ... lengths[b].item()`) and does not change that tensor:
    one `.tolist()` before the loop reads them all (not in assertions, timing or
    debug logs, which read elements on purpose).

    It stays silent where the code's shape shows that the host needs the value
    now, so that the wait is the price of the logic rather than a stall:
    - the value decides the control flow: a `while` test (`while err > tol:`),
      an `if` that leaves the loop or the function or queues other work
      (`if cp.all(new == old): break`), a `for` iterable, a `range()` bound;
    - it decides the shape of the next arrays (`n = int(mask.sum())` then
      `torch.empty(n)`, a slice bound, `view`/`reshape` arguments);
    - an assertion checks it (`assert`, `np.testing.assert_*`,
      `torch.testing.assert_close`, `self.assert*`), or it is compared with a
      reference on the host (`np.allclose(x.get(), ref)`, `np.array_equal`,
      a printed `np.linalg.norm(cp.asnumpy(x) - ref)`);
    - it ends a timed or measured region (a host timer, `elapsed_time`,
      `torch.cuda.max_memory_allocated()`, `memory_stats()`, CuPy's pool
      `used_bytes()` right next to it), or precedes a CUDA-graph capture;
    - it is printed or logged in a block of log lines under a switch the loop
      does not change (`if verbosityLevel > 0:`): a debug path, off unless
      asked for.

    A loop over a literal sequence (`for t in [a, b]:`) is judged by the loop
    around it, and a loop that waits for a person every iteration (`input()`)
    is no hot path. In a training loop (its body calls the methods
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
        for record, op in analysis.all_ops():
            if host_round_trip(record, op) is not None:
                continue  # SL503: the value needs no device at all
            per_element = per_element_sync(record, op)
            read_by_element = per_element_read(record, op)
            if read_by_element and sync_purpose(analysis, record, op) not in _ELEMENT_READ_NEEDED:
                yield Finding(
                    op.node,
                    f"{api_named(op.api)} waits for the stream once per element of `{read_by_element}`",
                    help=f"read all the elements once before the loop (`{read_by_element}.tolist()`) "
                         "and index that list",
                )
                continue
            if not per_element and not in_hot_path(record, op):
                continue
            if op.kind is OpKind.IMPLICIT_SYNC:
                what = api_named(op.api) if op.api != "truth value" else "the truth value of a GPU array"
            elif (
                op.kind is OpKind.COPY_D2H and op.host_blocking is True and op.framework in ("torch", "cupy")
                and isinstance(op.receiver, Buffer) and op.receiver.mem is Mem.DEVICE
            ) or (op.kind is OpKind.COPY_D2H and op.framework == "cupy" and op.host_blocking is True):
                if blocking_copy_in_region(record, op):
                    continue  # SL202 reports this call (other streams' work could overlap it)
                what = api_named(op.api)
            else:
                continue
            if per_element:
                # Needed or not, the values can come back in one copy instead of one per element.
                yield Finding(
                    op.node,
                    f"{what} waits for the stream once per element of this comprehension",
                    help=_ONE_READ[op.framework] if op.framework in _ONE_READ else _ONE_READ["torch"],
                )
                continue
            purpose = sync_purpose(analysis, record, op)
            if purpose is not None and purpose.needed:
                continue  # the host needs the value: control flow, a shape, a test, a measurement
            where = f"call of {hot_function(record)}" if op.in_forward and not op.loops else "iteration"
            if purpose is Purpose.SELECTION:
                yield Finding(
                    op.node,
                    f"{what} waits for the stream on every {where} only to choose between values",
                    help=f"select on the device: `{_WHERE[op.framework]}(cond, a, b)`",
                )
            elif purpose is Purpose.CHECK:
                yield Finding(
                    op.node,
                    f"{what} waits for the stream on every {where} only for a check or a log line",
                    help="check every N steps, or keep the values on the device and inspect them once after the loop",
                )
            elif purpose is Purpose.STEP_TIMING:
                yield Finding(
                    op.node,
                    f"{what} waits for the stream on every step of a training loop, to time or measure the step",
                    help=STEP_TIMING_HELP,
                )
            elif purpose is Purpose.OUTPUT:
                yield Finding(
                    op.node,
                    f"{what} waits for the stream on every {where} of this streaming loop, "
                    f"so the next chunk's work cannot overlap the read-back",
                    help=_STREAM_OUT[op.framework].replace("x.", f"{_operand(analysis, op)}.", 1)
                    .replace("(x,", f"({_operand(analysis, op)},"),
                )
            else:
                yield Finding(
                    op.node,
                    f"{what} copies GPU data to the host and waits for the stream on every {where}",
                    help="keep the value on the device and read it once after the loop (or every N steps)"
                    if where == "iteration" else
                    "keep the value on the device (a tensor in the computation, not a Python number), or "
                    "read it outside the per-step path",
                )


# A test or a measurement reads elements one by one on purpose.
_ELEMENT_READ_NEEDED = frozenset({Purpose.ASSERTION, Purpose.VERIFY, Purpose.MEASUREMENT, Purpose.DEBUG})
# One read-back for all the elements' values, instead of one wait per element.
_ONE_READ = {
    "torch": "compute the values on the device, then read them all at once with one `.tolist()`",
    "cupy": "compute the values on the device, then read them all at once with one `cp.asnumpy(...)`",
}


def _operand(analysis, op) -> str:
    """The array read back, as spelled (`r` of `r.get()` or `cp.asnumpy(r)`)."""
    node = op.node
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("get", "cpu", "to", "numpy"):
            text = analysis.code(node.func.value)
        elif node.args:
            text = analysis.code(node.args[0].value)
        else:
            text = ""
        if text and len(text) <= 30 and "\n" not in text:
            return text
    return "x"


_WHERE = {"torch": "torch.where", "cupy": "cp.where"}
# A streaming pipeline's read-back: keep it per iteration, but without the wait.
_STREAM_OUT = {
    "cupy": "read back without waiting: `x.get(stream=s, out=pinned[i], blocking=False)` into "
            "`cupyx.empty_pinned` buffers, then one `s.synchronize()` before the host uses them",
    "torch": "read back without waiting: `pinned[i].copy_(x, non_blocking=True)` into "
             "`pin_memory=True` buffers, then one stream or event `synchronize()` before the host uses them",
}
