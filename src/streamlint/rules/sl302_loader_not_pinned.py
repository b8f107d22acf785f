"""SL302 loader-not-pinned: copies of batches from a DataLoader without pin_memory=True (non-blocking ones, and
blocking ones that repeat on a hot path)."""

from __future__ import annotations

import libcst as cst

from streamlint.model.api.facts import OpKind
from streamlint.model.domain.values import Memory
from streamlint.model.readings.operations import own_operations
from streamlint.model.summary.effects import Operation
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.rules import _labels as labels
from streamlint.rules._hot_uploads import hot_blocking_uploads, reuploaded_source
from streamlint.rules._shared import start_of
from streamlint.rules.base import Finding, Rule


class LoaderNotPinned(Rule):
    """
    ## What it does
    Flags a PyTorch host-to-device copy of a batch from a
    `torch.utils.data.DataLoader` that was created without `pin_memory=True`:
    - with `non_blocking=True` (`.to(<cuda device>, non_blocking=True)`,
      `.cuda(non_blocking=True)`), wherever it is;
    - without it (`.cuda()`, `.to(device)`), where it repeats on a hot path:
      every iteration of a loop that queues GPU work (a training or
      evaluation loop), every call of `forward` or another hot entry. The
      batch's copies of one pass are one finding, at the first (the others
      wait for their own copy only, the stream being drained already).

    ## Why is this bad?
    Without `pin_memory=True` the loader yields batches in pageable memory, and
    an asynchronous copy of pageable memory is not asynchronous in practice: the
    driver may synchronize and stage it while the host waits, and the copy
    does not overlap the compute. Measured on an H200 (256 MB): 27.0 ms of host time inside
    `.to("cuda", non_blocking=True)` for a pageable tensor, 0.009 ms for a
    pinned one; a two-stream pipeline with pageable buffers was no faster than
    sequential code (56.1 ms against 53.3 ms).

    A blocking copy (`non_blocking=False`, the default) is worse on every step:
    PyTorch queues it and then synchronizes the stream, so the host waits for
    everything the previous step queued before it can queue the next step's
    kernels, and the GPU idles while the host catches up.

    With `pin_memory=True` a dedicated pin-memory thread copies each batch into
    pinned memory off the main thread, so `non_blocking=True` becomes a truly
    asynchronous copy. Calling `.pin_memory()` on each batch in the loop instead
    pays the extra host copy on the main thread (SL303). Writing only
    `non_blocking=True` without pinning the loader leaves the first case.

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
    summary = "Copy of a batch from a DataLoader created without pin_memory=True (non-blocking, or blocking every step)"

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
        yield from _blocking_batch_uploads(analysis, model, reported)


def _blocking_batch_uploads(analysis, model, reported: set[str]):
    """Blocking copies of an unpinned loader's batch that repeat on a hot path: one per pass, at the first."""
    ancestry = Ancestry(analysis.module)
    runs: dict[int, list] = {}  # the innermost loop (or the function) -> the pass's uploads, in order
    for _, call, where in hot_blocking_uploads(analysis, model, _blocking_unpinned_batch_upload, reported):
        if reuploaded_source(ancestry, call, where) is not None:
            continue  # (a batch taken before the loop, moved again on every pass: SL201's, which pinning would not end)
        loops = ancestry.loops_around(call)
        # (a helper's copies, placed at the loop that calls it: the helper's one pass, `prepare_batch`'s keys)
        function = next((a for a in ancestry.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
        runs.setdefault(id(loops[-1]) if loops else id(function or call), []).append((call, where))
    position = start_of(analysis)
    for uploads in runs.values():
        uploads.sort(key=lambda pair: position(pair[0]) or (0, 0))
        (call, where), rest = uploads[0], uploads[1:]
        more = ""
        if rest:
            lines = ", ".join(str(analysis.line_of(c)) for c, _ in rest)
            more = (f", and the batch's other copy after it (line {lines}) waits for its own" if len(rest) == 1 else
                    f", and the batch's other {len(rest)} copies after it (lines {lines}) wait for their own")
        yield Finding(
            call,
            f"`{labels.spelled(call.func) or analysis.code(call.func)}` copies a batch of a DataLoader created without "
            f"`pin_memory=True` and waits for the stream to drain {where}{more}",
            help="create the DataLoader with `pin_memory=True` and copy with `non_blocking=True`",
        )


def _blocking_unpinned_batch_upload(operation: Operation) -> bool:
    return _unpinned_batch_upload(operation, blocking=True)


def _unpinned_batch_upload(operation: Operation, blocking: bool = False) -> bool:
    """An upload of a data loader's batch that is pageable (the loader was not asked to pin): non-blocking, or
    (`blocking`) one the host waits for."""
    return (operation.op == OpKind.COPY_H2D.value and operation.non_blocking is (not blocking)
            and operation.host_loader_batch and operation.host_memory is Memory.PAGEABLE)
