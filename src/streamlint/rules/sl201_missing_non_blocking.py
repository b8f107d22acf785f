"""SL201 missing-non-blocking: a blocking torch host-to-device copy where an async one is possible."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.fixes.edits import FixBuilder, make_fix, with_keyword
from streamlint.fixes.model import Applicability
from streamlint.model.ops import OpKind
from streamlint.model.queries import hot_function, in_hot_path
from streamlint.model.values import Buffer, Mem
from streamlint.rules._shared import api_named, host_refills, leaves_stream_unordered, named
from streamlint.rules.base import Finding, Rule


class MissingNonBlocking(Rule):
    """
    ## What it does
    Flags a PyTorch host-to-device copy (`t.to(<cuda device>)`, `t.cuda()`, or
    `dst.copy_(src)` from a CPU tensor into a CUDA tensor) made without
    `non_blocking=True` when either
    - the source is pinned: made by `.pin_memory()`, created with
      `pin_memory=True`, or a batch of `DataLoader(..., pin_memory=True)`; or
    - the copy sits inside a side-stream context (`with torch.cuda.stream(s):`,
      `with s:`, after `torch.cuda.set_stream(s)`); or
    - the source is a tensor the code builds from Python values
      (`torch.tensor(0.0).to(dev)`, `torch.tensor([a, b], device="cuda")`, which
      builds it on the host and copies it; also one built there on some paths only,
      `(norm if grads else torch.tensor(0.0)).to(total.device)`, where `total` is a
      CUDA tensor on some path) and the upload runs in a hot path: a
      loop that queues GPU work, `forward`, a registered hook, or a helper of the
      same module that one of these calls on every call (reported in the helper,
      naming that function).
      No fix is offered there: build the tensor once on the device, or in pinned
      memory and copy it with `non_blocking=True`.

    ## Why is this bad?
    With `non_blocking=False` (the default) PyTorch queues the copy on the
    current stream and then calls `cudaStreamSynchronize` on that stream: the
    host waits for *everything* queued on the stream, not only for the copy.
    - From a pinned source the copy could have been fully asynchronous: with
      `non_blocking=True` the call returns at once (measured on an H200: 0.009 ms
      of host time for 256 MB) and the host goes on queuing kernels while the
      copy runs.
    - A side stream exists so that the copy overlaps work on other streams. A
      blocking copy inside its context makes the host wait for the side stream
      before it can queue anything else, so the overlap is lost.

    A `non_blocking=True` host-to-device copy is safe to consume on the same
    stream: stream order guarantees the copy finishes before later work on that
    stream reads the result. This rule is only about host-to-device copies; for
    device-to-host copies `non_blocking=True` makes the result unsafe to read
    before a synchronization (pytorch/pytorch#86264).

    ## Example
    ```python
    import torch
    from torch.utils.data import DataLoader

    loader = DataLoader(train_set, batch_size=256, num_workers=8, pin_memory=True)
    for images, labels in loader:
        images = images.to("cuda")  # pinned batch, but the host waits for the copy
        labels = labels.cuda()
        loss = criterion(model(images), labels)

    copy_stream = torch.cuda.Stream()
    with torch.cuda.stream(copy_stream):
        next_batch = host_batch.to("cuda")  # host waits for copy_stream to drain
    ```

    ## Use instead
    ```python
    import torch
    from torch.utils.data import DataLoader

    loader = DataLoader(train_set, batch_size=256, num_workers=8, pin_memory=True)
    for images, labels in loader:
        images = images.to("cuda", non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        loss = criterion(model(images), labels)

    copy_stream = torch.cuda.Stream()
    with torch.cuda.stream(copy_stream):
        next_batch = host_batch.to("cuda", non_blocking=True)
    ```
    After switching to `non_blocking=True`, do not modify the pinned source
    until the copy has run: it is read by the copy engine later, and changing it
    early corrupts the device data (pytorch/pytorch#127612). A result produced
    on a side stream and used on another stream still needs
    `wait_stream` / `wait_event` there. A pageable source copied inside a
    side-stream context does not overlap even with `non_blocking=True` (see
    SL301): pin it where it is created.

    ## Fix safety
    The fix adds `non_blocking=True` (or turns `non_blocking=False` into `True`);
    it is not offered when `non_blocking` could be passed positionally or through
    `*args`/`**kwargs`, when the source is pageable (the copy would still not
    overlap: SL301), when the host writes into the source again after the copy (a
    later call or iteration refilling a pinned buffer would race the copy: SL402),
    or when the copy is on a side stream that nothing orders afterwards in the function
    (no `wait_stream`, event or synchronization: the result would be read before it is
    written). It is **unsafe**: after the change the host no longer waits
    for the copy, so writing to the pinned source before the copy has run corrupts
    the device data (pytorch/pytorch#127612), and a pageable source now makes SL301
    report the copy.

    ## Known limits
    - Pinnedness of a tensor created elsewhere (a parameter, another module) is
      unknown; outside a side-stream context such a copy is not reported.
    - The target must be recognizably a CUDA device (`"cuda"`, `"cuda:1"`,
      `torch.device("cuda")`, a name bound to one of these, `.cuda()`);
      `.to(device)` with an unknown `device` stays silent.

    ## References
    - PyTorch: `Tensor.to`, `Tensor.cuda` and `Tensor.copy_` docstrings
      (`torch/_tensor_docs.py`); copy implementation `aten/src/ATen/native/cuda/Copy.cu`.
    - PyTorch tutorials: `intermediate_source/pinmem_nonblock.py` (pinned memory
      and `non_blocking`).
    - pytorch/pytorch#127612 (mutating a pinned source after a non-blocking copy),
      pytorch/pytorch#86264 (device-to-host non-blocking reads).
    - [API facts](../api-facts.md) (the fact base behind the tables in `src/streamlint/model/api/`): §4.3 *Transfers and tensor creation*, §8 items 1-3.
    """

    code = "SL201"
    name = "missing-non-blocking"
    summary = "PyTorch H2D copy without non_blocking=True from a pinned tensor or inside a side stream"
    fix_availability = "sometimes"

    def check(self, analysis):
        builder = FixBuilder(analysis)
        for record, op in analysis.all_ops():
            if op.kind is not OpKind.COPY_H2D or op.framework != "torch" or op.non_blocking is not False:
                continue
            pinned = isinstance(op.host_buffer, Buffer) and op.host_buffer.mem is Mem.PINNED
            if not _copy_method(op) and not _made_here(op):
                continue  # (a creation call takes no `non_blocking`)
            if pinned:
                why = "the source is pinned, so the copy could run asynchronously"
            elif op.on_explicit_stream and _copy_method(op):
                why = f"inside the side-stream context of {named(op.stream.label)} it blocks the host until that stream drains"
            elif _made_here(op) and in_hot_path(record, op):
                # A host tensor built from Python values and uploaded on every step: the
                # blocking copy drains the stream each time (no fix: pageable + non_blocking is SL301).
                where = f"call of {hot_function(record)}" if op.in_forward and not op.loops else "iteration"
                yield Finding(
                    op.node,
                    f"{api_named(op.api)} uploads a tensor built on the host and waits for the stream to drain on every {where}",
                    help="build it on the device once, outside the hot path, or in pinned memory with "
                         "`non_blocking=True`",
                )
                continue
            else:
                continue
            unsafe_because = _async_breaks(analysis, record, op)
            yield Finding(
                op.node,
                f"{api_named(op.api)} copies to the GPU without `non_blocking=True`: {why}",
                fix=_fix(builder, op.node) if unsafe_because is None else None,
                help=unsafe_because or "pass `non_blocking=True`",
            )


def _async_breaks(analysis, record, op) -> Optional[str]:
    """None when `non_blocking=True` alone keeps the program right; else what else it
    takes (the help, as no fix is offered): not from pageable memory (no overlap:
    SL301), not from a source the host refills while the copy may still read it
    (SL402), not when nothing orders the side stream the copy is left on (SL401)."""
    source = op.host_buffer
    if isinstance(source, Buffer) and source.mem is Mem.PAGEABLE:
        return "pin the source where it is made, then pass `non_blocking=True`"
    if host_refills(analysis, record, op):
        return (f"pass `non_blocking=True` and, before the host writes into `{source.label}` again, wait for "
                f"an event recorded after this copy")
    if leaves_stream_unordered(record, op):
        return (f"pass `non_blocking=True` and make the streams that use the result wait for "
                f"`{op.stream.label}` (`wait_stream`)")
    return None


def _copy_method(op) -> bool:
    """A copy that takes `non_blocking` (`t.to`, `t.cuda`, `dst.copy_`), not a creation
    call such as `torch.tensor([a, b], device="cuda")`."""
    node = op.node
    return not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in ("tensor", "as_tensor"))


def _made_here(op) -> bool:
    """The copy's source is a tensor this code builds from Python values (`torch.tensor(0.0)`,
    `torch.tensor([a, b])`): the same upload every step, where the device could build it."""
    source = op.host_buffer
    return isinstance(source, Buffer) and source.mem is Mem.PAGEABLE and source.literal


# Positional arguments before `non_blocking` in each copy method: `t.to(device, dtype,
# non_blocking)`, `t.cuda(device, non_blocking)`, `dst.copy_(src, non_blocking)`.
_POSITIONAL_BEFORE = {"to": 2, "cuda": 1, "copy_": 1}


def _fix(builder: FixBuilder, node):
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return None
    limit = _POSITIONAL_BEFORE.get(node.func.attr.value)
    positional = [a for a in node.args if a.keyword is None]
    if limit is None or len(positional) > limit or any(a.star for a in node.args):
        return None  # `non_blocking` given positionally, or hidden in *args/**kwargs
    return make_fix(
        "Pass `non_blocking=True`",
        Applicability.UNSAFE,
        [builder.replace(node, with_keyword(node, "non_blocking", "True"))],
    )
