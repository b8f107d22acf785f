"""SL403 host-read-before-sync: the host reads an async D2H copy's destination too early."""

from __future__ import annotations

from streamlint.model.findings import Placement
from streamlint.rules._hazard_words import Words
from streamlint.rules._shared import handed_to_callers_of, is_placeholder, named, stream_code, sync_idiom
from streamlint.rules.base import Finding, Rule


class HostReadBeforeSync(Rule):
    """
    ## What it does
    Flags host code that reads the destination of an asynchronous device-to-host
    copy into pinned memory before the copy's stream, or an event recorded after
    the copy, has been synchronized:
    - PyTorch: `y = x.to("cpu", non_blocking=True)` (the result is pinned),
      `pinned.copy_(cuda_tensor, non_blocking=True)`;
    - Numba-CUDA: `d.copy_to_host(pinned, stream=s)` (or on an array bound to `s`);
    - CuPy: `cp.asnumpy(x, stream=s, blocking=False, out=pinned)`,
      `x.get(stream=s, out=pinned, blocking=False)`.
    Reading includes indexing, printing, host arithmetic, `.numpy()`, `float()`,
    and passing the array to NumPy.

    The copy may be made by a helper that returns its result (`return t.to("cpu",
    non_blocking=True)`), also when the destination is the helper's parameter and the
    call passes `"cpu"` or `torch.device("cpu")`, when the flag comes in a `**kwargs`
    built as `dict(non_blocking=True)` or `{"non_blocking": True}` (built so only for
    tensors, `... if isinstance(x, torch.Tensor) else {}`, it holds for the tensor's
    copy; under another test it may be either, and is not reported), or in a function
    nested in the helper that uses its parameter. Where the finding goes, one per
    problem:
    - at the helper's copy when every caller in the helper's file that reads the result
      reads it before a wait: the helper hands back unfinished data that its callers take
      as ready, so the wait (or a blocking copy) belongs in the helper;
    - at each read that has no wait before it when some caller there waits first (the
      helper leaves the wait to its callers), and when the helper is in another module.

    It also flags device buffers handed to CUDA-aware MPI (mpi4py's buffer methods:
    `comm.Send`, `comm.Allreduce`, `comm.Alltoall`, `comm.Bcast`, ...) while a stream
    that wrote them, or the caller's stream for a parameter, has not been
    synchronized: MPI reads the buffer from the host side when called and does not
    wait for any stream.

    ## Why is this bad?
    The call only queues the copy. Until the stream reaches it, the destination
    holds old data (often zeros), and the host reads whatever is there: no error,
    just wrong numbers, more often under load (pytorch/pytorch#86264, #137878,
    #140296; downstream fixes in DeepSpeed, SGLang and others).

    ## Example
    ```python
    import torch


    @torch.no_grad()
    def top_classes(features, weight):
        logits = features.cuda() @ weight.cuda()          # on the GPU
        cpu_logits = logits.to("cpu", non_blocking=True)
        return cpu_logits.argmax(dim=1).numpy()           # may read before the copy lands
    ```

    ## Use instead
    ```python
    import torch


    @torch.no_grad()
    def top_classes(features, weight):
        logits = features.cuda() @ weight.cuda()
        cpu_logits = logits.to("cpu", non_blocking=True)
        done = torch.cuda.Event()
        done.record()
        # ... other host work ...
        done.synchronize()
        return cpu_logits.argmax(dim=1).numpy()
    ```

    ## Fix safety
    There is no fix: the synchronization belongs where the host first needs the
    data, and that may be in another function.

    The same holds for MPI: synchronize the stream that produced the buffer just
    before the call (mpi4py's demo: "always make sure the GPU buffer is ready
    before any MPI operation").

    ```python
    import cupy as cp
    from mpi4py import MPI


    def average(comm, grads):
        flat = cp.concatenate([g.ravel() for g in grads])
        total = cp.empty_like(flat)
        cp.cuda.get_current_stream().synchronize()
        comm.Allreduce(flat, total)
        return total / comm.Get_size()
    ```

    ## Known limits
    - A copy into pageable memory blocks the host in practice (the driver stages
      it), so it is not reported; a destination whose memory kind is unknown is
      not reported either.
    - Reads of the destination in the same function are seen, and reads of what a
      helper of the project returns (a small helper: at most 40 statements, walked
      again for the call); a caller that only hands the result on (stores it, returns
      it, puts it on a queue) is not followed further, and a helper that returns the
      copy on one path and its argument on another (`out if out is not None else x`)
      is not seen as returning the copy.
    - A file with no GPU word (`cuda`, `non_blocking`, ...) is not checked, so its
      calls of such helpers are not seen.
    - MPI: only mpi4py's buffer methods on values the code shows to be device
      arrays; a synchronization of a stream the function received (it may be the
      producer) counts as enough. A buffer MPI only receives into is not checked.

    ## References
    - mpi4py `demo/cuda-aware-mpi/use_cupy.py`; chainer/chainermn f9d6c4f,
      PyLops/pylops-mpi#182 (syncs added before CUDA-aware MPI calls).
    - [API facts](../api-facts.md): §4.3 (`Tensor.to` D2H), §3.2 (`copy_to_host`),
      §2.3 (`asnumpy`/`get`), §8 items 1 and 6.
    """

    code = "SL403"
    name = "host-read-before-sync"
    summary = "The host reads the destination of an async device-to-host copy before synchronizing"

    def check(self, analysis):
        words = Words(analysis)
        for h in words.hazards(self.code):
            at = analysis.line_of(h.node)
            buffer, first = words.buffer(h), words.stream(h.earlier.stream, h, h.earlier)
            stream = stream_code(first, h.framework, analysis)
            if not h.earlier.access.host_memory:
                # device memory read from the host side, by a library outside the streams (MPI); not the host's own
                # read of what it took for host memory (memory told to be the device's elsewhere: no evidence)
                if not h.later.access.host_memory:
                    yield self.outside(analysis, words, h, buffer, first, stream, at)
                continue
            if h.readers:
                # a helper's copy every call of it reads unfinished: the wait belongs in the helper
                name = h.function.qualname.removeprefix(h.function.module + ".")
                lines = ", ".join(f"line {words.line(r)}" for r in h.readers)
                yield Finding(
                    h.node,
                    f"the asynchronous copy here on {named(first)} is returned by `{name}()` before it has "
                    f"finished, and its callers read the result on the host with no wait ({lines})",
                    help=f"{sync_idiom(stream)} (or an event recorded after the copy) before returning the result",
                )
                continue
            if h.hazard.placement is Placement.AT_BOUNDARY:
                # handed out unfinished: the reads are in the callers
                handed = handed_to_callers_of(analysis, h.function.node, h.function.class_name, "read it on the host")
                yield Finding(
                    h.node,
                    f"the asynchronous copy into {named(buffer)} on {named(first)} (line {words.line(h.earlier.shown)}"
                    f"{words.inside(h.earlier)}) may not have finished when it is {handed}",
                    help=f"{sync_idiom(stream)} (or an event recorded after the copy) before returning the result",
                )
                continue
            yield Finding(
                words.pointed(h, buffer),
                f"the host reads {named(buffer)} here, but the asynchronous copy into it on {named(first)} "
                f"(line {words.line(h.earlier.shown)}{words.inside(h.earlier)}{_in_method(h)}) may not have finished",
                help=f"{sync_idiom(stream)} (or an event recorded after the copy) before line {at}",
            )

    @staticmethod
    def outside(analysis, words, h, buffer: str, first: str, stream: str, at: int) -> Finding:
        """CUDA-aware MPI handed device memory that a stream may still be writing."""
        if h.from_caller:
            where = "the caller's stream"
            if is_placeholder(stream):  # no spelling in code: the stream in words, as the caller's
                stream = stream.replace("the ", "the caller's ", 1)
        else:
            where = f"{named(first)} (line {words.line(h.earlier.shown)}{words.inside(h.earlier)})"
        return Finding(
            h.node,
            f"MPI reads {named(buffer)} here, but {where} may still be writing it: MPI does not wait for streams",
            help=f"{sync_idiom(stream)} before line {at}",
        )


def _in_method(h) -> str:
    """', in `update()`' for a copy another method of the object made and left in flight on `self`."""
    made_in = h.earlier.access.site.partition("#")[0]
    if h.earlier.through_call or made_in == h.function.qualname:
        return ""
    return f", in `{made_in.rsplit('.', 1)[-1]}()`"
