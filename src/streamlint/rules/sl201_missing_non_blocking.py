"""SL201 missing-non-blocking: a blocking torch host-to-device copy where an async one is possible."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.fixes.edits import FixBuilder, make_fix, with_keyword
from streamlint.fixes.model import Applicability
from streamlint.model.api.facts import OpKind
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.values import HostBuilt, Memory
from streamlint.model.readings.operations import drained_alone, host_writes_into, leaves_unordered, own_operations
from streamlint.model.summary.effects import Operation
from streamlint.model.syntax import ancestry as nesting
from streamlint.rules import _labels as labels
from streamlint.rules._hot_uploads import hot_blocking_uploads, reuploaded_source
from streamlint.rules._shared import api_named, named
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
      CUDA tensor on some path), or one a factory makes on the host with no
      `device=` (`torch.zeros(n).cuda()`, `torch.randn(b, d).to("cuda")`; not
      `torch.empty`, a buffer the code fills), or an index the host holds that
      indexes a CUDA tensor (`rays[np.random.choice(n, k)]`, `x[idx]` with `idx`
      a CPU tensor, `x[[0, 2, 4]]`: PyTorch copies the index to the device first,
      with a blocking copy; one index used for several tensors is one finding),
      or a pageable tensor an object made in its constructor and keeps
      (`self.K = torch.from_numpy(intrinsics)`, uploaded as `self.K.to(device)`
      on every call: the same values each time; not one another method stores
      again or writes into, `self.pose.copy_(p)`, whose values change)
      and the upload runs in a hot path: a
      loop that queues GPU work, `forward` (or a function stored as a module's
      `forward`), a registered hook, a dataset's `__getitem__` (once per
      sample), a method a framework calls once per step (Lightning's
      `training_step`, an environment's `step`, an iterator's `__next__`),
      or a helper of the
      same module that one of these calls on every call (reported in the helper,
      naming that function).
      No fix is offered there: build the tensor once on the device, or in pinned
      memory and copy it with `non_blocking=True`.
    - the source is pageable data the loop only reads, uploaded (all of it or a
      part, `batch["rgb"][idx].to(device)`) with a blocking copy on every pass of
      a loop that queues GPU work: a parameter or a local bound before the loop
      that the loop never rebinds, stores into, hands to a call or changes with
      an in-place method (an optimisation loop over one frame's data, a loop of
      minibatches cut from one host tensor). Every pass waits for the stream to
      drain and moves data it could have moved once. The copies of one source in
      one loop are one finding, at the first. A loader's batch the loop takes
      itself is SL302's; one taken before the loop and moved again every pass is
      this rule's (pinning the loader would not end the copies).

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

    A tensor built on the host and uploaded in a pass that goes on, on every
    pass, to a host read it needs (`if has_data.item() == 0: break` after the
    ranks reduce a flag) is not reported: that read waits for all the upload
    waits for.

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
      before it can queue anything else, so the overlap is lost. (Not reported
      when the function waits for that stream, or the whole device, before it
      queues work on any other stream: there is no overlap to lose.)

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
    - An upload of a tensor built on the host right after another wait of the
      same pass (a blocking copy, a read back) with no GPU work queued between
      them is not reported: the stream is already drained, and the first wait
      is the problem (`yield image.cuda(), intrinsics.cuda()`).
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
        model = analysis.v3
        builder = FixBuilder(analysis)
        reported: set[str] = set()
        for qualname, at in _uploads(model):
            call = model.node_of(at.site)
            if not isinstance(call, cst.Call):
                continue
            reported.add(at.site)
            if at.operation.host_memory is Memory.PINNED:
                why = "the source is pinned, so the copy could run asynchronously"
            elif drained_alone(model, qualname, at):
                continue  # the host drains the side stream next anyway: no overlap to lose
            else:
                why = (f"inside the side-stream context of {named(stream_label(model, at.stream, analysis.module))} "
                       f"it blocks the host until that stream drains")
            unsafe_because = _async_breaks(model, qualname, at, call, analysis)
            yield Finding(
                call,
                f"{api_named(_spelling(call.func, analysis))} copies to the GPU without `non_blocking=True`: {why}",
                fix=_fix(builder, call) if unsafe_because is None else None,
                help=unsafe_because or "pass `non_blocking=True`",
            )
        yield from _host_built_uploads(model, analysis, reported)
        yield from _unchanged_source_uploads(model, analysis, reported)



def _host_built_blocking(operation: Operation) -> bool:
    return operation.op == OpKind.COPY_H2D.value and bool(operation.host_built) and operation.non_blocking is False


def _host_built_uploads(model, analysis, reported: set[str]):
    """A tensor built on the host from Python values and uploaded with a blocking copy on every
    iteration of a loop that queues GPU work, or on every call of a hot entry (no fix: a non-blocking
    copy of pageable memory is SL301's problem)."""
    found = list(hot_blocking_uploads(analysis, model, _host_built_blocking, set(reported), drain_only=True))
    by_index: dict[tuple, list] = {}  # (one host index used for several tensors: one problem, made where it is made)
    for own, call, where in found:
        if isinstance(call, cst.Subscript):
            key = own.operation.value_site or own.site  # (where the index is made: one fix there ends every upload)
            by_index.setdefault(key, []).append((call, where))
    for uses in by_index.values():
        (call, where), later = uses[0], [c for c, _ in uses[1:]]
        again = f" (and again at line {', '.join(str(analysis.position(c).start.line) for c in later)})" if later else ""
        indexed = labels.spelled(call.value) or analysis.code(call.value)
        listed = next((e.slice.value for e in call.slice if isinstance(e.slice, cst.Index)
                       and isinstance(e.slice.value, cst.List)), None)
        if listed is not None:  # (`x[:, [0]]`: a list written out, made into a CPU index tensor per call)
            yield Finding(
                call,
                f"indexing `{indexed}` with the list `{analysis.code(listed)}` copies it to the GPU as an index "
                f"and waits for the stream to drain {where}{again}",
                help="write evenly spaced positions as a slice (`[0]` as `0:1`, `[0, 2, 4]` as `0:5:2`: a view, no "
                     "copy), or make the index on the GPU once and keep it",
            )
            continue
        yield Finding(
            call,
            f"indexing `{indexed}` with an index the host holds "
            f"copies the index to the GPU and waits for the stream to drain {where}{again}",
            help="make the index on the GPU (a `torch` factory with `device=` set), or upload it once and keep "
                 "the device copy",
        )
    for own, call, where in found:
        if isinstance(call, cst.Subscript):
            continue
        if own.operation.host_built is HostBuilt.KEPT:
            yield Finding(
                call,
                f"{api_named(_spelling(call.func, analysis))} uploads a tensor the object keeps in host memory (the same "
                f"values every time) and waits for the stream to drain {where}",
                help="move it to the GPU once, where it is made, and keep that copy",
            )
            continue
        yield Finding(
            call,
            f"{api_named(_spelling(call.func, analysis))} uploads a tensor built on the host and waits for the "
            f"stream to drain {where}",
            help="build it on the device once, outside the hot path, or in pinned memory with `non_blocking=True`",
        )


def _pageable_blocking(operation: Operation) -> bool:
    """A blocking upload by a copy method of pageable memory the code did not build from Python values."""
    return _blocking_torch_upload(operation) and operation.host_memory is Memory.PAGEABLE and not operation.host_built


def _unchanged_source_uploads(model, analysis, reported: set[str]):
    """Pageable data a loop only reads (a frame's arrays, a dataset tensor, bound before the loop) uploaded again, a
    part of it or all, with a blocking copy on every pass: the copy waits for the stream to drain each time, and
    moves data the loop could have moved once. The copies of one source in one loop are one finding, at the first."""
    ancestry = nesting.Ancestry(analysis.module)
    by_source: dict[tuple, list] = {}
    for _, call, where in hot_blocking_uploads(analysis, model, _pageable_blocking, set(reported)):
        name = reuploaded_source(ancestry, call, where)
        if name is not None:
            by_source.setdefault((id(ancestry.loops_around(call)[-1]), name), []).append(call)
    for (_, name), calls in by_source.items():
        first, later = calls[0], calls[1:]
        lines = ", ".join(str(analysis.position(c).start.line) for c in later)
        again = f", and again at line{'s' if len(later) > 1 else ''} {lines}" if later else ""
        yield Finding(
            first,
            f"{api_named(_spelling(first.func, analysis))} uploads data from `{name}`, which the loop only reads, with a "
            f"blocking copy of pageable memory that waits for the stream to drain on every iteration{again}",
            help=f"move `{name}` (or the part the loop reads) to the GPU once before the loop and index that copy on the "
                 f"device; or pin it and copy with `non_blocking=True`",
        )


def _uploads(model) -> list:
    """Each blocking upload site once: from pinned memory under some context (that reason
    first), else queued on a stream the code chose."""
    best: dict[str, tuple] = {}
    for qualname, at in own_operations(model):
        if not _blocking_torch_upload(at.operation):
            continue
        memory = at.operation.host_memory  # (a source of unknown memory may be on the device: no copy)
        rank = 0 if memory is Memory.PINNED else 1 if _chosen(at.stream) and memory is Memory.PAGEABLE else 2
        if rank < 2 and (at.site not in best or rank < best[at.site][0]):
            best[at.site] = (rank, qualname, at)
    return [(qualname, at) for _, qualname, at in best.values()]


_TORCH_COPIES = frozenset({"torch.Tensor.to", "torch.Tensor.copy_"})


def _blocking_torch_upload(operation: Operation) -> bool:
    """A PyTorch upload by a copy method (`t.to`, `t.cuda`, `dst.copy_`) whose call says
    `non_blocking=False` (or leaves it at its default)."""
    return (operation.op == OpKind.COPY_H2D.value and operation.api in _TORCH_COPIES
            and operation.non_blocking is False)


def _chosen(stream: Optional[StreamRef]) -> bool:
    """A stream the code chose (made, or held in a variable), not the current stream at entry."""
    return stream is not None and stream.kind in (StreamRefKind.CREATED, StreamRefKind.PATH)


def stream_label(model, stream: StreamRef, module: cst.Module) -> str:
    """How a message names a stream: the name a made stream was bound to, a held one's path."""
    if stream.kind is StreamRefKind.PATH and stream.path is not None:
        return stream.path.spell()
    made = model.node_of(stream.site) if stream.kind is StreamRefKind.CREATED else None
    return (labels.bound_name(made, module) if made is not None else "") or "the side stream"


def _refilled(model, qualname: str, at, call: cst.Call) -> bool:
    """Might the host write into the copy's source while a non-blocking copy still reads it:
    a write after it, or one in the loop around it (the next iteration's)?"""
    writes = host_writes_into(model, qualname, at)
    if any(after for _, after in writes):
        return True
    function = model.solver.program.function(qualname)
    loop = nesting.outermost_loop(function.node, call) if function is not None else None
    return loop is not None and any(nesting.holds(loop, model.node_of(site)) for site, _ in writes)


def _spelling(func: cst.BaseExpression, analysis) -> str:
    """`t.to`, `torch.randn(...).cuda`, `(...).to` for a receiver written over several lines."""
    text = labels.spelled(func) or analysis.code(func)
    if "\n" in text and isinstance(func, cst.Attribute):
        return f"(...).{func.attr.value}"
    return text


def _async_breaks(model, qualname: str, at, call: cst.Call, analysis) -> Optional[str]:
    """None when `non_blocking=True` alone keeps the program right; else what else it
    takes (the help, as no fix is offered): not from pageable memory (no overlap:
    SL301), not from a source the host refills while the copy may still read it
    (SL402), not when nothing orders the side stream the copy is left on (SL401)."""
    operation = at.operation
    if operation.host_memory is Memory.PAGEABLE:
        return "pin the source where it is made, then pass `non_blocking=True`"
    if _refilled(model, qualname, at, call):
        source = labels.at(call, operation.host_at, analysis.module)
        return (f"pass `non_blocking=True` and, before the host writes into `{source}` again, wait for "
                f"an event recorded after this copy")
    if _chosen(at.stream) and leaves_unordered(model, qualname, at):
        return (f"pass `non_blocking=True` and make the streams that use the result wait for "
                f"`{stream_label(model, at.stream, analysis.module)}` (`wait_stream`)")
    return None


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
