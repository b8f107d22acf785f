"""SL303 pin-on-the-fly: pin_memory() in a hot path feeding one host-to-device copy each time."""

from __future__ import annotations

import libcst as cst

from streamlint.model.api.facts import OpKind
from streamlint.model.readings.operations import own_operations
from streamlint.rules import _labels as labels
from streamlint.rules.base import Finding, Rule


class PinOnTheFly(Rule):
    """
    ## What it does
    Flags a PyTorch `t.pin_memory()` call in a hot path (a loop body, or the
    `forward` method of an `nn.Module` subclass) whose result feeds a single
    host-to-device copy, such as `x.pin_memory().to("cuda", non_blocking=True)`.

    ## Why is this bad?
    `pin_memory()` returns a pinned *copy* of the tensor: the calling thread
    copies the data on the host first, and when the pinned allocator has no
    free block it calls `cudaHostAlloc`, which is expensive and an implicit
    synchronization point. Done for every copy, the host pays for pinning every
    time: measured on an H200 with 128 KB batches, the loop took 80.6 ms against
    60.5 ms with the batches pinned once (runtime_checks/reports, SL303). PyTorch's
    own tutorial notes that `pin_memory().to(..., non_blocking=True)` can be up to
    2x slower than a plain `.to()`; with large batches we measured the opposite (a
    plain pageable copy of 16 MB batches was 2.8x slower than pinning each one), so
    the fix is to pin once, not to drop pinning.

    Pinning pays off when it happens once, or off the main thread, and the pinned
    buffer is then copied many times or asynchronously.

    ## Example
    ```python
    import torch

    for x_cpu in host_batches:
        x = x_cpu.pin_memory().to("cuda", non_blocking=True)
        out = model(x)
    ```

    ## Use instead
    Pin once at set-up, or let a `DataLoader(pin_memory=True)` pin batches in its
    pin-memory thread:
    ```python
    import torch

    host_batches = [x.pin_memory() for x in host_batches]  # once, at set-up
    for x_cpu in host_batches:
        x = x_cpu.to("cuda", non_blocking=True)
        out = model(x)
    ```
    If the data cannot be pinned ahead of time, copy it into one pinned staging
    buffer allocated once (`staging.copy_(x_cpu)`) and upload from that. A pinned
    buffer that is refilled and reused must not be overwritten before the previous
    non-blocking copy from it has run (pytorch/pytorch#127612, SL402).

    ## Fix safety
    There is no fix: the pinned buffer has to be allocated once and reused, which
    means restructuring the code around the loop.

    ## Known limits
    - The rule does not know whether the tensor is already pinned (then
      `pin_memory()` returns it unchanged and costs little); drop the redundant
      call or suppress the finding.
    - A pinned result that feeds several copies, or is kept beyond the
      iteration, is not reported.

    ## References
    - PyTorch tutorials: `intermediate_source/pinmem_nonblock.py` (cost of
      `pin_memory()` before `.to()`).
    - PyTorch: `Tensor.pin_memory` documentation (`torch/_tensor_docs.py`).
    - CUDA Programming Guide: *Implicit Synchronization* (page-locked host
      allocation).
    - [API facts](../api-facts.md) (the fact base behind the tables in `src/streamlint/model/api/`): §1.3, §4.3, §8 item 2.
    """

    code = "SL303"
    name = "pin-on-the-fly"
    summary = "pin_memory() in a hot path feeding a single host-to-device copy"

    def check(self, analysis):
        model = analysis.v3
        found = own_operations(model)
        reported: set[str] = set()
        for qualname, at in found:
            operation = at.operation
            if operation.op != OpKind.PIN.value or not (operation.in_loop or at.hot) or at.site in reported:
                continue
            feeds = {c.site for q, c in found if q == qualname and c.operation.op == OpKind.COPY_H2D.value
                     and c.reads_made_at(at.site)}
            call = model.node_of(at.site)
            if len(feeds) != 1 or not isinstance(call, cst.Call):
                continue
            reported.add(at.site)
            yield Finding(
                call,
                f"`{labels.spelled(call.func) or analysis.code(call.func)}()` pins a fresh copy on every "
                f"{'iteration' if operation.in_loop else 'call'} "
                f"for a single H2D copy: an extra host copy (and possibly a cudaHostAlloc) each time",
                help="pin once outside the hot path (e.g. `DataLoader(pin_memory=True)` "
                "or a pinned staging buffer reused with `copy_`)",
            )
