"""SL403 host-read-before-sync: the host reads an async D2H copy's destination too early."""

from __future__ import annotations

from streamlint.rules._shared import hazards, inside, named, stream_code
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

    ## Known limits
    - A copy into pageable memory blocks the host in practice (the driver stages
      it), so it is not reported; a destination whose memory kind is unknown is
      not reported either.
    - Only reads of the destination in the same function are seen.

    ## References
    - [API facts](../api-facts.md): §4.3 (`Tensor.to` D2H), §3.2 (`copy_to_host`),
      §2.3 (`asnumpy`/`get`), §8 items 1 and 6.
    """

    code = "SL403"
    name = "host-read-before-sync"
    summary = "The host reads the destination of an async device-to-host copy before synchronizing"

    def check(self, analysis):
        for _, h in hazards(analysis, self.code):
            at = analysis.line_of(h.node)
            stream = stream_code(h.first, h.framework, analysis)
            yield Finding(
                h.node,
                f"the host reads `{h.buffer}` here, but the asynchronous copy into it on {named(h.first)} "
                f"(line {analysis.line_of(h.other)}{inside(analysis, h.other_via)}) may not have finished",
                help=f"`{stream}.synchronize()` (or an event recorded after the copy) before line {at}",
            )
