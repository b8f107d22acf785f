"""SL104 yield-inside-stream-block: a generator hands its items over while its side stream is current."""

from __future__ import annotations

import libcst as cst

from streamlint.checked_file import spell
from streamlint.model.readings.generators import yielding_on_chosen_streams
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.model.syntax.children import walk
from streamlint.rules.base import Finding, Rule


class YieldInsideStreamBlock(Rule):
    """
    ## What it does
    Flags a `yield` inside the block of a stream the generator made or keeps
    (`with torch.cuda.stream(self.stream):`, `with stream:` in CuPy) in a generator
    that is iterated for its items (not a `@contextlib.contextmanager`, whose
    `yield` runs the `with` body on purpose). While the generator is suspended at
    that `yield`, the block is still entered: the consumer's loop body runs with the
    side stream current.

    ## Why is this bad?
    A prefetching generator exists to copy the next batch on a side stream while the
    consumer computes on its own. Yielding inside the side stream's block puts the
    consumer's forward and backward passes on that same stream, behind the next
    batch's copies queued there before the `yield`: copies and compute run one after
    the other, and the prefetch overlaps nothing. The consumer's allocations also come
    from the side stream's memory pool, and any wait the generator makes for "the
    current stream" inside the block is the side stream waiting for itself (SL401).

    ## Example
    ```python
    import torch


    def prefetched(loader):
        stream = torch.cuda.Stream()
        for images in loader:
            with torch.cuda.stream(stream):
                images = images.cuda(non_blocking=True).float()
                yield images
    ```

    ## Use instead
    ```python
    import torch


    def prefetched(loader):
        stream = torch.cuda.Stream()
        for images in loader:
            with torch.cuda.stream(stream):
                images = images.cuda(non_blocking=True).float()
            torch.cuda.current_stream().wait_stream(stream)
            images.record_stream(torch.cuda.current_stream())
            yield images
    ```
    (A generator that keeps one batch in flight yields the previous batch after the
    block, so the next copy overlaps the consumer's step.)

    ## Fix safety
    There is no fix: moving the `yield` out of the block also needs the wait and the
    `record_stream` the consumer's stream then lacks (SL401, SL404), which this rule
    does not write.

    ## Known limits
    - Only the generator's own `yield` is read: a generator whose caller enters a
      stream around the loop is not this rule.
    - The stream must be one the generator made or keeps; a stream handed in as an
      argument that a caller may pass as its current stream is silent.

    ## References
    - PyTorch documentation: *CUDA semantics* (`docs/source/notes/cuda.rst`, CUDA
      streams: the current stream is set by `torch.cuda.stream` until its block exits).
    - [API facts](../api-facts.md) (the fact base behind the tables in `src/streamlint/model/api/`): §4.2 (the
      current stream and `torch.cuda.stream`).
    """

    code = "SL104"
    name = "yield-inside-stream-block"
    summary = "A generator yields inside its side stream's block: the consumer's work runs on that stream"

    def check(self, analysis):
        model = analysis.v3
        program = model.solver.program
        ancestry = Ancestry(analysis.module)
        for found in yielding_on_chosen_streams(model):
            function = program.function(f"{model.module}.{found.function}")
            if function is None or not isinstance(function.node, cst.FunctionDef):
                continue
            for node in _own_yields(function.node):
                stream = _stream_block(node, function.node, ancestry)
                if stream is None:
                    continue
                yield Finding(
                    node,
                    f"this `yield` hands the item over while `{stream}` is current: the consumer's work on it runs on "
                    f"`{stream}`, behind the next item's work queued there, so the prefetch overlaps nothing",
                    help=f"end `{stream}`'s block before the `yield`, and make the current stream there wait for "
                         f"`{stream}` (with `record_stream` for what it hands over)",
                )


def _own_yields(function: cst.FunctionDef) -> list[cst.Yield]:
    """The function's own `yield`s (not those of a function or lambda nested in it)."""
    nested = [n for n in walk(function.body) if isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef))]
    inner = {id(y) for n in nested for y in walk(n) if isinstance(y, cst.Yield)}
    return [n for n in walk(function.body) if isinstance(n, cst.Yield) and id(n) not in inner]


def _stream_block(node: cst.Yield, function: cst.FunctionDef, ancestry: Ancestry):
    """The stream, as spelled, of the innermost `with` around the `yield` in the function that enters a stream
    (`torch.cuda.stream(s)`, `s` itself as a context), or None."""
    for ancestor in ancestry.ancestors(node):
        if ancestor is function:
            return None
        if not isinstance(ancestor, cst.With):
            continue
        for item in ancestor.items:
            entered = item.item
            if isinstance(entered, cst.Call) and isinstance(entered.func, (cst.Attribute, cst.Name)) and entered.args \
                    and (entered.func.attr.value if isinstance(entered.func, cst.Attribute) else entered.func.value) \
                    == "stream":
                return spell(entered.args[0].value)
            if isinstance(entered, (cst.Name, cst.Attribute)):
                return spell(entered)
    return None
