"""SL404 missing-record-stream: a tensor used on another stream is freed without record_stream."""

from __future__ import annotations

import libcst as cst

from streamlint.fixes.edits import FixBuilder, bound_before, is_pasteable, make_fix
from streamlint.fixes.idioms import stream_named_at
from streamlint.fixes.model import Applicability
from streamlint.model.domain.paths import Index, RootKind
from streamlint.model.domain.streams import StreamRefKind
from streamlint.model.findings import Placement
from streamlint.model.syntax.ancestry import Ancestry
from streamlint.model.syntax.children import walk
from streamlint.rules._hazard_words import (
    Words,
    allocation_name,
    allocation_node,
    is_module_level,
    made_in_block,
    stored_allocation_node,
    wait_scope,
)
from streamlint.rules._shared import handed_to_callers_of, is_placeholder, may_be_none_in, named, stream_code
from streamlint.rules.base import Finding, Rule


class MissingRecordStream(Rule):
    """
    ## What it does
    Flags a PyTorch CUDA tensor that was allocated while stream A was current, is
    used by work on another stream B, and is then released (`del`, rebinding its
    name, or the function returning without handing it out) without
    `t.record_stream(B)` and without A waiting on B before the release. The finding
    is at the first use on B, where `record_stream` belongs; the message names the
    release.

    A tensor left on a shared holder by another function (a pipeline stage's
    `node.state.x = ...`) is flagged too when this function records a sibling the same
    function left there in the same way (`node.state.y.record_stream(current)`): that
    record says the holder's tensors come from another stream, and the holder's next
    rebinding releases the one not recorded.

    A tensor a method allocates on a side stream and keeps in a container on `self`
    (`self.store[key] = t`) whose entries a public method of the class hands to the
    caller (`return self.store.pop(key)`) is flagged at the allocation: the caller
    uses it on its current stream and drops it, and the class records nothing.

    A method no caller in sight calls that allocates its output on a stream the object
    keeps (`with torch.cuda.stream(self.side):`) and returns it, alone or inside a dict
    (`{**mp_out, **dp_out}`), is flagged at the `return`: the callers use it on their
    current stream and drop it, and the next call's allocation on the kept stream may
    take that memory while their work still reads it. Not flagged when a method of the
    class makes that stream wait for the current one (the next allocation's writes are
    ordered after the callers' work), or when the object keeps the output itself. The
    tensors one `return` hands out are one finding. Where that stream also reads what
    the current stream made with no wait, the one missing wait is reported once, by
    SL401, whose message names the returned memory too.

    A generator that makes a side stream, allocates each batch on it and yields the
    batch (a prefetching loader) is flagged at the `yield`, once per allocation: its
    consumers use the batch on their current stream and drop it, and the generator's
    next copy on the side stream may take that memory while their work still reads
    it. The advice records the tensor where it is made, after the side stream's `with`
    block. A generator whose side stream waits for the current stream before every
    copy orders its next allocation after the consumer's work, and is not flagged.

    ## Why is this bad?
    PyTorch's caching allocator ties each block to the stream that was current
    when it was allocated. When the tensor is freed, the block can be handed to the
    next allocation on A at once, while B's queued work still reads or writes it:
    the new owner and the old user race on the same memory (illegal addresses in
    NVIDIA/TensorRT-LLM#15265, NaNs in meta-pytorch/torchrec#4231). `wait_stream`
    orders execution but does not tell the allocator anything; only
    `record_stream`, or keeping a reference until A has waited on B, does.

    ## Example
    ```python
    import torch


    def project(host_batch, weight):
        side = torch.cuda.Stream()
        host = host_batch.pin_memory()
        with torch.cuda.stream(side):
            batch = host.cuda(non_blocking=True)     # allocated on `side`
        torch.cuda.current_stream().wait_stream(side)
        out = batch @ weight.cuda()                  # used on the default stream
        del batch                                    # block may go back to `side`
        return out
    ```

    ## Use instead
    ```python
    import torch


    def project(host_batch, weight):
        side = torch.cuda.Stream()
        host = host_batch.pin_memory()
        with torch.cuda.stream(side):
            batch = host.cuda(non_blocking=True)
        torch.cuda.current_stream().wait_stream(side)
        batch.record_stream(torch.cuda.current_stream())
        out = batch @ weight.cuda()
        del batch
        return out
    ```

    ## Fix safety
    The fix inserts `t.record_stream(B)` before the statement that uses `t` on
    stream B (PyTorch only, when `t` and the stream can be named there), under
    `if t is not None:` when `t` may be None there (`getattr(holder, "t", None)`, a
    parameter defaulting to None). It is
    **unsafe**: the caching allocator then keeps the block until B's work queued at
    the time of the release is done, so peak memory can grow; `wait_stream` before
    the release is the alternative when memory is tight.

    ## Known limits
    - Only tensors created in the same function (by a PyTorch op, factory or copy
      under a known current stream) are followed; a tensor returned to the caller or
      stored in `self.` or a container is not released here (but see the
      containers a public method pops entries from, above; only methods of the
      same class are read for that, not those of a base class).
    - `record_stream` makes memory use less predictable (pytorch/pytorch#76861);
      where you own the tensor's lifetime, `side.wait_stream(current)` before the
      release is the alternative the rule accepts.

    ## References
    - [API facts](../api-facts.md): §4.5 (caching allocator and `record_stream`),
      §8 item 5.
    """

    code = "SL404"
    name = "missing-record-stream"
    summary = "A tensor used on another stream is released without record_stream"
    fix_availability = "sometimes"

    def check(self, analysis):
        words = Words(analysis)
        unjoined = words.unjoined_side_streams()
        returned: dict = {}  # a return's node -> the memory it made and hands out unrecorded (one problem)
        for h, buffer in _one_per_use(words):
            if (wait_scope(h), h.later.stream) in unjoined and h.later.access.path.root.kind is RootKind.FRESH \
                    and h.hazard.placement is Placement.AT_BOUNDARY:
                continue  # (one problem: the side stream's missing wait for the callers, reported by its read)
            owner_label = words.stream(h.later.stream, h, h.later)
            user_label = words.stream(h.earlier.stream, h, h.earlier)
            user, owner = stream_code(user_label, "torch", analysis), stream_code(owner_label, "torch", analysis)
            made = allocation_node(words.model, h) or stored_allocation_node(words.model, h)
            buffer = allocation_name(words, h, made) or buffer
            tensor = buffer if _names_one_tensor(words, h, buffer) else ""
            if h.hazard.placement is Placement.AT_BOUNDARY:
                # used and released in the callers, not here: name their lines
                callers = handed_to_callers_of(analysis, h.function.node, h.function.class_name,
                                               "use it on their current stream and release it when they drop it",
                                               yielded=isinstance(h.node, cst.Yield))
                # the object's own memory handed out (a getter): at its read, where `record_stream` goes
                getter = h.earlier.access.path.root.kind is RootKind.SELF
                node = words.first_read(h, buffer) if getter else h.node
                if isinstance(h.node, cst.Return) and h.later.access.path.root.kind is RootKind.FRESH:
                    if _items_handed_out(h):  # (tensors a callee made, in what the function returns: a dict of them)
                        buffer = f"the tensors in `{analysis.code(h.node.value)}`"
                    returned.setdefault(id(h.node), []).append((h, buffer, made, owner_label, user))
                    continue
                yield Finding(
                    node,
                    f"{named(buffer)} was allocated on {named(owner_label)}{_at_line(words, made)} and is "
                    f"{callers}, without `record_stream`: its memory may go to new work on {named(owner_label)} too early",
                    # (at its read in the getter, else where it is handed out: the callers' stream is current there)
                    help=_record_help(tensor, user) if getter else _record_after_allocation(words, h.node, made, user)
                    or _record_at_return(words, h.function.node, user),
                )
                continue
            producer = _producer(h.later.stream)
            if producer:
                # left on a holder by another function, whose next store there releases it (D-16)
                stored, recorded = _holder_lines(words, h)
                yield Finding(
                    h.node,
                    f"{named(buffer)} is left on its holder {stored} together with a tensor this function records on "
                    f"{named(user_label)}{recorded}, so it comes from the stream `{producer}` ran on too; it is used "
                    f"on {named(user_label)} here without `record_stream`: when {stored.removeprefix('at ')} rebinds "
                    f"it, its memory may go to new work on the stream `{producer}` ran on too early",
                    fix=_fix(words.builder, h, tensor, words.stream_for_code(h.earlier.stream, h, h.earlier)),
                    help=_record_help(tensor, user),
                )
                continue
            if h.released_at is None and is_module_level(h):
                released = "released when the script ends"
            elif h.released_at is None:
                qualname = h.function.qualname.removeprefix(h.function.module + ".")
                released = f"released when `{qualname}` returns"
            elif words.line(h.released_at, h.later.callee):  # (a callee's release: its line in its own file)
                released = f"released at line {words.line(h.released_at, h.later.callee)}{words.foreign(h.later.callee)}"
            else:
                released = "released in a function it is handed to"
            yield Finding(
                h.node,
                f"{named(buffer)} was allocated on {named(owner_label)}{_at_line(words, made)}, is used "
                f"on {named(user_label)} here, then {released} without `record_stream`: its memory may go to "
                f"new work on {named(owner_label)} too early",
                fix=_fix(words.builder, h, tensor, words.stream_for_code(h.earlier.stream, h, h.earlier)),
                help=_record_help(tensor, user) + (f" (or `{owner}.wait_stream({user})` before the release)"
                                                   if not is_placeholder(owner) else ""),
            )

        for hand_outs in returned.values():
            yield _returned_unrecorded(words, hand_outs)


def _returned_unrecorded(words: Words, hand_outs: list) -> Finding:
    """Memory a function makes on a stream it keeps and returns unrecorded, at one return: one problem (one
    return hands it all out), its tensors named together, recorded together after the block that made them."""
    h, _, _, owner_label, user = hand_outs[0]
    hand_outs = sorted(hand_outs, key=lambda item: words.line(item[2]) if item[2] is not None else 0)
    names = [buffer for _, buffer, _, _, _ in hand_outs]
    lines = [words.line(made) for _, _, made, _, _ in hand_outs if made is not None]
    helps = [_record_after_allocation(words, h.node, made, user) for _, _, made, _, _ in hand_outs]
    callers = handed_to_callers_of(words.analysis, h.function.node, h.function.class_name,
                                   "use it on their current stream and release it when they drop it")
    if len(hand_outs) == 1 and names[0].startswith(_ITEMS):
        held = names[0][len(_ITEMS):]
        return Finding(h.node, f"{names[0]} were allocated on {named(owner_label)}{_made_in(words, h)} "
                               f"and are {_plural(callers)}, without `record_stream`: their "
                               f"memory may go to new work on {named(owner_label)} too early",
                       help=f"record each tensor in {held} for the callers' stream (`.record_stream({user})`) before "
                            f"line {words.line(h.node)}")
    if len(hand_outs) == 1:
        return Finding(h.node, f"{named(names[0])} was allocated on {named(owner_label)}{_at_line(words, hand_outs[0][2])} "
                               f"and is {callers}, without `record_stream`: its memory may go to new work on "
                               f"{named(owner_label)} too early",
                       help=helps[0] or _record_at_return(words, h.function.node, user))
    where = f" (lines {', '.join(map(str, lines[:-1]))} and {lines[-1]})" if len(lines) == len(names) else ""
    callers = _plural(callers)
    return Finding(h.node, f"{_listed(names)} were allocated on {named(owner_label)}{where} and are {callers}, "
                           f"without `record_stream`: their memory may go to new work on {named(owner_label)} too early",
                   help=_joined_helps(helps, user))


_ITEMS = "the tensors in "  # (a label: the items of what a function returns)


def _items_handed_out(h) -> bool:
    """The memory handed out is an item of what the return hands out, made by a callee (`batch = self.batch;
    self.preload(); return batch`: the tensors an earlier `preload()` put in the dict)."""
    node = h.node
    return ">" in h.later.access.path.root.site and node.value is not None and not isinstance(node.value, cst.Call)


def _made_in(words: Words, h) -> str:
    """` in `preload()` (line 115)`: the function whose allocation it is (the last call of its site's chain)."""
    last = h.later.access.path.root.site.rsplit(">", 1)[-1]
    function = last.rpartition("#")[0].rsplit(".", 1)[-1]
    node = words.model.node_of(last)
    line = words.line(node) if node is not None else None
    return f" in `{function}()`" + (f" (line {line})" if line else "") if function else ""


def _plural(callers: str) -> str:
    return callers.replace("use it on", "use them on").replace("release it when they drop it",
                                                               "release them when they drop them")


def _listed(names: list) -> str:
    quoted = [named(n) for n in names]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _joined_helps(helps: list, user: str) -> str:
    """One paste for several records that go after the same `with` block; else each tensor where it is made."""
    parts = [h.partition("` after the `with` block that ends at line ") for h in helps]
    if all(code.startswith("`") and sep for code, sep, _ in parts) and len({end for _, _, end in parts}) == 1:
        codes = "; ".join(code.removeprefix("`") for code, _, _ in parts)
        return f"`{codes}` after the `with` block that ends at line {parts[0][2]}"
    return f"`.record_stream({user})` on each tensor it returns, where it is made"


def _at_line(words: Words, made) -> str:
    """" (line N)" of the allocation, or nothing where the model holds no node for it (an
    allocation only known as the items a container was filled with)."""
    return f" (line {words.line(made)})" if made is not None else ""


def _names_one_tensor(words: Words, h, buffer: str) -> bool:
    """False where the label names the container an item came from (`self._results` for one
    of its items): a list has no `record_stream`, so no advice or fix may call it there."""
    path = h.later.access.path
    return not (any(isinstance(step, Index) for step in path.steps) and buffer == words.path(path, h))


def _producer(stream) -> str:
    """The function whose current stream a tensor was made on, for one a producer left on a
    holder (`StreamRef.produced`); "" otherwise."""
    return stream.site.rpartition(".")[2] if stream is not None and stream.kind is StreamRefKind.PRODUCED else ""


def _holder_lines(words: Words, h) -> tuple[str, str]:
    """Where the producer stores the tensor on the holder ("at line N", or "by `producer`" when
    the text does not show it), and " (line M)" for the `record_stream` of a sibling here."""
    path, producer = h.earlier.access.path, h.later.stream.site
    attr = path.steps[-1] if path.steps and isinstance(path.steps[-1], str) else ""
    function = words.model.solver.program.function(producer)
    store = next((n for n in _nodes(function.node if function is not None else None)
                  if isinstance(n, (cst.Assign, cst.AnnAssign, cst.AugAssign))
                  and any(isinstance(t, cst.Attribute) and t.attr.value == attr for t in _assigned(n))), None)
    line = words.line(store, function) if store is not None else 0
    stored = f"at line {line}{words.foreign(function)}" if line else f"by `{producer.rpartition('.')[2]}`"
    holder = words.path(type(path)(path.root, path.steps[:-1]), h) + "."
    aliases = {t.value for n in _nodes(h.function.node) if isinstance(n, cst.Assign)
               for t in _assigned(n) if isinstance(t, cst.Name) and holder in _code(n.value)}
    record = next((n for n in _nodes(h.function.node) if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                   and n.func.attr.value == "record_stream"
                   and (_code(n.func.value).startswith(holder) or _code(n.func.value) in aliases)
                   and not _code(n.func.value).endswith(f".{attr}")), None)
    return stored, (f" (line {words.line(record)})" if record is not None else "")


def _assigned(node) -> list:
    return [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]


def _nodes(node):
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _code(node) -> str:
    return cst.Module(body=[]).code_for_node(node).strip()


def _one_per_use(words: Words):
    """The releases to report, with their buffer's label: one per use of a name on another
    stream (the `record_stream` goes there once, whichever allocation the name held there: the
    one made before a loop or the last iteration's), the one the code drops at a rebinding or
    `del` before the one dropped when the function ends."""
    chosen: dict = {}
    for h in words.hazards("SL404"):
        if h.framework != "torch":
            continue  # the caching allocator that hands memory back early is PyTorch's
        # (a generator's yields of one allocation are one problem: recorded once where it is made)
        made = allocation_node(words.model, h) if isinstance(h.node, cst.Yield) else None
        key = (id(made) if made is not None else id(h.node), words.buffer(h))
        # (of two uses on different streams, the one queued last: a record there covers what it waited for)
        if key not in chosen or (chosen[key].released_at is None and h.released_at is not None) \
                or ((chosen[key].released_at is None) == (h.released_at is None) and h.hazard.behind < chosen[key].hazard.behind):
            chosen[key] = h
    return [(h, key[1]) for key, h in chosen.items()]


def _fix(builder: FixBuilder, hazard, buffer: str, user_label: str):
    """`t.record_stream(user)` before the statement that uses `t` on the other stream.
    Unsafe: the memory is then kept until that stream's work is done (more memory in
    use), which is the point, but it changes the allocator's behaviour."""
    if not is_pasteable(buffer):
        return None
    statement = builder.statement_of(hazard.node)
    if statement is None:
        return None
    function = hazard.function.node
    row = builder.analysis.line_of(hazard.node)
    user = stream_named_at(builder, function, user_label, "torch", row, current_ok=True)
    if user is None or not bound_before(builder, function, buffer, row + 1):
        return None
    line = f"{buffer}.record_stream({user})"
    if may_be_none_in(builder.analysis, function, buffer):
        # `getattr(holder, "x", None)`, a parameter defaulting to None: None has no record_stream
        guarded = [f"if {buffer} is not None:", f"{builder.indent_unit()}{line}"]
        return make_fix(f"Insert `{line}` where `{buffer}` is not None", Applicability.UNSAFE,
                        [builder.insert_before(statement, guarded)])
    return make_fix(f"Insert `{line}`", Applicability.UNSAFE, [builder.insert_before(statement, [line])])


def _record_at_return(words: Words, function: cst.CSTNode, user: str) -> str:
    """The advice where a function hands the tensor out: before its one `return` of a name."""
    returns = [n for n in walk(function.body) if isinstance(n, cst.Return)] if isinstance(function, cst.FunctionDef) else []
    if len(returns) == 1 and isinstance(returns[0].value, cst.Name):
        return f"`{returns[0].value.value}.record_stream({user})` before line {words.line(returns[0])}"
    name = function.name.value if isinstance(function, cst.FunctionDef) else "the function"
    return f"`.record_stream({user})` on the tensor `{name}()` returns, before it returns it"


def _record_after_allocation(words: Words, node: cst.CSTNode, made, user: str) -> str:
    """The advice where a generator or a method hands the tensor out: record it where it is made, just after the
    `with` block that makes its stream current (the consumer's stream is current again there: every allocation is
    recorded, and every `yield` or `return` of it covered); "" when the allocation is not so placed or bound to no
    name. A mapping of tensors (`**name`) has no `record_stream`: each of its tensors is recorded."""
    if not isinstance(node, (cst.Yield, cst.Return)):
        return ""
    # (a return's allocation this function does not bind: no place to name; a generator's: each where it is made)
    anywhere = f"`.record_stream({user})` on each tensor the generator yields, where it is made" \
        if isinstance(node, cst.Yield) else ""
    name, block = made_in_block(words, made) if made is not None else ("", None)
    if not name or block is None:
        return anywhere
    placed = words.analysis.position(block)
    if not placed:
        return ""
    if _splatted(words, made, name):
        return (f"record each tensor of `{name}` (`.record_stream({user})`) after the `with` block that ends at "
                f"line {placed.end.line}")
    return f"`{name}.record_stream({user})` after the `with` block that ends at line {placed.end.line}"


def _splatted(words: Words, made, name: str) -> bool:
    """The function spreads the name into a dict (`{**name}`): a mapping of tensors, not one."""
    ancestry = Ancestry(words.analysis.module)
    function = next((a for a in ancestry.ancestors(made) if isinstance(a, cst.FunctionDef)), None)
    return function is not None and any(
        isinstance(n, cst.StarredDictElement) and isinstance(n.value, cst.Name) and n.value.value == name
        for n in walk(function))


def _record_help(buffer: str, user: str) -> str:
    """The advice: tell the allocator of the stream that uses the tensor, where it is used."""
    if is_pasteable(buffer):
        return f"`{buffer}.record_stream({user})` here"
    return f"`.record_stream({user})` on the tensor used here"
