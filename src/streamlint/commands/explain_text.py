"""What a function does to streams, in words: its summaries and the contexts they were solved
under, as `streamlint explain FILE::QUALNAME` prints them and the `.summary` snapshots pin them."""

from __future__ import annotations

from streamlint.model.domain.order import HOST
from streamlint.model.domain.paths import Path
from streamlint.model.domain.streams import StreamRef
from streamlint.model.domain.values import AbsValue, Memory, ValueKind
from streamlint.model.file_model import FileModel
from streamlint.model.summary.codec import sealed
from streamlint.model.summary.effects import Effect, EffectKind
from streamlint.model.summary.function_summary import FunctionSummary
from streamlint.model.transfer.frame import CallContext


def explain(model: FileModel, qualname: str) -> str:
    """Every summary of `qualname` (as written in the file: "f", "C.m"), or "" when unknown."""
    wanted = f"{model.module}.{qualname}"
    blocks = [render(summary, context, model.module) for context, summary in model.solved.summaries_of(wanted)]
    return "\n".join(blocks)


def explain_module(model: FileModel) -> str:
    """Every function of the file with its summaries, in a stable order."""
    names = sorted({q for q, _ in model.solved.walks if q.startswith(model.module + ".")})
    blocks = []
    for qualname in names:
        rendered = sorted(render(s, c, model.module) for c, s in model.solved.summaries_of(qualname))
        blocks.extend(rendered)
    return "\n".join(blocks)


def render(summary: FunctionSummary, context: CallContext, module: str = "") -> str:
    """Names of the explained module's own functions are shown as written in it ("C.m")."""
    name = _local(summary.qualname, module)
    lines = [f"{name}({', '.join(summary.params)})", f"  context: {_context(context)}"]
    if summary.effects:
        lines.append("  effects:")
        lines.extend(f"    {_effect(e, module)}" for e in summary.effects)
    else:
        lines.append("  effects: none")
    if summary.returns.kind is not ValueKind.UNKNOWN or summary.returns.either:
        lines.append(f"  returns: {_value(summary.returns)}")
    for attr, value in summary.self_stores:
        lines.append(f"  leaves self.{attr} = {_value(value)}")
    for attr, value in summary.holder_stores:
        lines.append(f"  leaves .{attr} on a holder = {_value(value)}")
    for param, value in summary.param_stores:
        lines.append(f"  keeps in {param}: {_value(value)}")
    for param, key, value in summary.param_keys:
        lines.append(f"  leaves {param}[{key!r}] = {_value(value)}")
    for framework, stream in summary.enters:
        lines.append(f"  entered as a context, runs the body on {_stream(stream)} ({framework})")
    for param, tags in summary.evidence:
        lines.append(f"  uses {param} as: {', '.join(tags)}")
    if summary.truncated:
        lines.append("  (accesses dropped past the summary budget)")
    lines.append(f"  digest: {sealed(summary).digest}")
    return "\n".join(lines) + "\n"


def _context(context: CallContext) -> str:
    parts = [f"{name} = {_value(value)}" for name, value in context.args]
    if context.receiver is not None:
        parts.append(f"self = {_value(context.receiver)}")
    parts.extend(f"self.{attr} = {_value(value)}" for attr, value in context.receiver_state if attr and not attr.startswith("<"))
    if context.chosen:
        parts.append("under a stream the caller chose")
    if context.entered:
        parts.append(f"under the caller's current stream of {', '.join(context.entered)}")
    if context.hot:
        parts.append(f"hot: on every call of {context.hot}")
    if context.cold:
        parts.append(f"cold: reached from {context.cold} only")
    if context.thread:
        parts.append("on a thread of its own (PyTorch's default stream current)")
    if context.receiver_pending:
        left = ", ".join(f"write {a.path.spell()} on {_stream(a.stream)}" for a in context.receiver_pending)
        parts.append(f"other calls left in flight: {left}")
    if context.work_stream:
        parts.append(f"the callers hand `{context.work_stream}` for the work")
    if context.receiver_state and context.receiver_state[0][0] == "<globals>":
        return "the module's top level, calls opaque"
    return "; ".join(parts) if parts else "any caller (nothing known of the arguments)"


def _value(value: AbsValue) -> str:
    words = [value.kind.value]
    if value.memory is not Memory.UNKNOWN:
        words.append(value.memory.value)
    if value.framework:
        words.append(value.framework)
    if value.stream is not None:
        words.append(f"on {_stream(value.stream)}")
    if value.identity is not None:
        words.append(f"at {value.identity.spell()}")
    if value.target:
        words.append(value.target)
    if value.may_be_none:
        words.append("or None")
    if value.either:
        words.append("[memory on some path: " + "; ".join(_value(v) for v in value.either) + "]")
    if value.keys:
        words.append("{" + ", ".join(f"{k!r}: {_value(p)}" for k, p in zip(value.keys, value.positions)) + "}")
    elif value.positions:
        words.append("(" + ", ".join(_value(p) for p in value.positions) + ")")
    elif value.kind is ValueKind.CONTAINER and value.element is not None \
            and (value.element.kind is not ValueKind.UNKNOWN or value.element.identity is not None):
        words.append(f"of {_value(value.element)}")
    return " ".join(words)


def _stream(ref: StreamRef) -> str:
    if ref == HOST:
        return "the host"
    return ref.spell()


def _path(path: Path | None) -> str:
    return path.spell() if path is not None else "?"


def _local(name: str, module: str) -> str:
    if module and name.startswith(module + "."):
        return name[len(module) + 1:]
    return name.split(".", 1)[1] if not module and "." in name else name


def _effect(effect: Effect, module: str = "") -> str:
    site = _local(effect.site, module)
    via = f" via {' > '.join(_local(c, module) for c in effect.chain)}" if effect.chain else ""
    kind = effect.kind
    if kind is EffectKind.ACCESS:
        what = f"{'write' if effect.write else 'read'} {_path(effect.path)} on {_stream(effect.stream)}"
    elif kind is EffectKind.WAIT_STREAM:
        what = f"{_stream(effect.stream)} waits for {_stream(effect.other)}"
    elif kind in (EffectKind.RECORD_EVENT, EffectKind.WAIT_EVENT):
        verb = "records" if kind is EffectKind.RECORD_EVENT else "waits for"
        what = f"{_stream(effect.stream)} {verb} event {_path(effect.path)}"
    elif kind is EffectKind.SYNC:
        target = _stream(effect.stream) if effect.stream else _path(effect.path) if effect.path else "the device"
        what = f"host may wait for {target} (a tensor of a device not told)" if effect.may else f"host waits for {target}"
    elif kind in (EffectKind.RECORD_STREAM, EffectKind.RELEASE):
        verb = "kept for" if kind is EffectKind.RECORD_STREAM else "released, made on"
        what = f"{_path(effect.path)} {verb} {_stream(effect.stream)}"
    elif kind is EffectKind.COUNTER:
        what = f"{_path(effect.path)} {'set: its slots are forgotten' if effect.write else 'moves on by one'}"
    elif kind is EffectKind.PIN:
        what = f"{_path(effect.path)} page-locked in place"
    elif kind is EffectKind.OPERATION and effect.operation is not None:
        op = effect.operation
        where = f" on {_stream(effect.stream)}" if effect.stream else ""
        blocks = {True: ", host waits", False: "", None: ", host may wait"}[op.host_blocking]
        memory = f", host memory {op.host_memory.value}" if op.host_memory is not Memory.UNKNOWN else ""
        hosts = f", host arrays at {', '.join(map(str, op.host_arrays))}" if op.host_arrays else ""
        sometimes = " (only sometimes)" if op.conditional else ""
        what = f"{op.api or op.op}: {op.op}{where}{blocks}{memory}{hosts}{' (in a loop)' if op.in_loop else ''}{sometimes}"
    else:
        what = f"{kind.value} {_stream(effect.stream) if effect.stream else ''}".strip()
    return f"{what}  [{site}{via}]"
