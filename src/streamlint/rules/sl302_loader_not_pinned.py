"""SL302 loader-not-pinned: non-blocking copies of batches from a DataLoader without pin_memory=True."""

from __future__ import annotations

import libcst as cst

from streamlint.model.api.facts import OpKind
from streamlint.model.domain.values import Memory
from streamlint.model.readings.operations import own_operations
from streamlint.model.summary.effects import Operation
from streamlint.rules import _labels as labels
from streamlint.rules.base import Finding, Rule


class LoaderNotPinned(Rule):
    """
    ## What it does
    Flags a PyTorch host-to-device copy with `non_blocking=True`
    (`.to(<cuda device>, non_blocking=True)`, `.cuda(non_blocking=True)`) of a
    batch from a `torch.utils.data.DataLoader` that was created without
    `pin_memory=True`.

    ## Why is this bad?
    Without `pin_memory=True` the loader yields batches in pageable memory, and
    an asynchronous copy of pageable memory is not asynchronous in practice: the
    driver may synchronize and stage it while the host waits, and the copy
    does not overlap the compute. Measured on an H200 (256 MB): 27.0 ms of host time inside
    `.to("cuda", non_blocking=True)` for a pageable tensor, 0.009 ms for a
    pinned one; a two-stream pipeline with pageable buffers was no faster than
    sequential code (56.1 ms against 53.3 ms).

    With `pin_memory=True` a dedicated pin-memory thread copies each batch into
    pinned memory off the main thread, so `non_blocking=True` becomes a truly
    asynchronous copy. Calling `.pin_memory()` on each batch in the loop instead
    pays the extra host copy on the main thread (SL303).

    ## Example
    ```python
    from torch.utils.data import DataLoader

    loader = DataLoader(train_set, batch_size=256, shuffle=True, num_workers=8)
    for images, labels in loader:
        images = images.to("cuda", non_blocking=True)  # pageable batch
        labels = labels.to("cuda", non_blocking=True)
        loss = criterion(model(images), labels)
    ```

    ## Use instead
    ```python
    from torch.utils.data import DataLoader

    loader = DataLoader(
        train_set, batch_size=256, shuffle=True, num_workers=8, pin_memory=True
    )
    for images, labels in loader:
        images = images.to("cuda", non_blocking=True)
        labels = labels.to("cuda", non_blocking=True)
        loss = criterion(model(images), labels)
    ```
    Batches of a custom type are pinned only if the type has a `pin_memory()`
    method.

    ## Fix safety
    There is no fix: adding `pin_memory=True` to a `DataLoader` changes its memory
    use and, on some machines, its speed (see the runtime report), which is the
    user's call.

    ## Known limits
    - Only loaders created in the same function or module (or assigned to
      `self.` in `__init__`) are known. A loader passed in as a parameter or
      built in another module has unknown pinning: the rule stays silent.
    - `pin_memory=` given a value that is not a literal is treated as unknown.

    ## References
    - PyTorch: `torch.utils.data.DataLoader` documentation (`pin_memory`).
    - PyTorch tutorials: `intermediate_source/pinmem_nonblock.py`.
    - pytorch/pytorch#42539 (`non_blocking` with pageable memory).
    - [API facts](../api-facts.md) (the fact base behind the tables in `src/streamlint/model/api/`): §4.3 *Transfers and tensor creation*, §8 item 2.
    """

    code = "SL302"
    name = "loader-not-pinned"
    summary = "Non-blocking copy of a batch from a DataLoader created without pin_memory=True"

    def check(self, analysis):
        model = analysis.v3
        reported: set[str] = set()
        for _, at in own_operations(model):
            operation = at.operation
            if at.site in reported or not _unpinned_batch_upload(operation):
                continue
            call = model.node_of(at.site)
            if not isinstance(call, cst.Call):
                continue
            reported.add(at.site)
            yield Finding(
                call,
                f"`{labels.spelled(call.func) or analysis.code(call.func)}(..., non_blocking=True)` moves a batch of a "
                f"DataLoader created without `pin_memory=True`: the batch is pageable, so the copy is not asynchronous",
                help="create the DataLoader with `pin_memory=True`",
            )


def _unpinned_batch_upload(operation: Operation) -> bool:
    """A non-blocking upload of a data loader's batch that is pageable (the loader was not asked to pin)."""
    return (operation.op == OpKind.COPY_H2D.value and operation.non_blocking is True
            and operation.host_loader_batch and operation.host_memory is Memory.PAGEABLE)
