"""How each framework spells the code a fix inserts, and how the checked file names the
framework's modules. Data first: a fix asks for an idiom by framework and fills it in.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from streamlint.fixes.edits import FixBuilder, binding_pattern, bound_before, is_pasteable

# "make stream {b} wait for the work queued so far on stream {a}", as statements.
# {m}: the file's name for the framework module below; {e}: a fresh variable.
WAIT_LINES: dict[str, tuple[str, ...]] = {
    "torch": ("{b}.wait_stream({a})",),
    "cupy": ("{b}.wait_event({a}.record())",),
    "numba": ("{e} = {m}.event()", "{e}.record(stream={a})", "{e}.wait(stream={b})"),
}
MODULE_OF: dict[str, str] = {"torch": "torch", "cupy": "cupy", "numba": "numba.cuda", "cuda-python": ""}

# The ambient stream, spelled for a place where it is the stream in question. Only the
# current stream of the place the code is inserted at can be named this way.
CURRENT_STREAM: dict[str, str] = {
    "torch": "{m}.cuda.current_stream()",
    "cupy": "{m}.cuda.get_current_stream()",
}
LEGACY_STREAM: dict[str, str] = {
    "torch": "{m}.cuda.default_stream()",
    "cupy": "{m}.cuda.Stream.null",
    "numba": "{m}.default_stream()",
}


def import_alias(module: cst.Module, dotted: str) -> Optional[str]:
    """The name the file's top-level imports give module `dotted` (`import cupy as cp`
    -> "cp"; `from numba import cuda` -> "cuda"; `import torch` -> "torch"), or None."""
    parent, _, leaf = dotted.rpartition(".")
    found: Optional[str] = None
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = _dotted(alias.name)
                    if alias.asname is not None and name == dotted:
                        found = _as(alias)
                    elif alias.asname is None and (name == dotted or name.startswith(dotted + ".")):
                        found = dotted
            elif isinstance(small, cst.ImportFrom) and parent and small.module is not None:
                if small.relative or _dotted(small.module) != parent or isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    if _dotted(alias.name) == leaf:
                        found = _as(alias) or leaf
    return found


def spell_stream(label: str, framework: str, module: cst.Module, *, current_ok: bool) -> Optional[str]:
    """Code for a stream the analysis labelled `label`, or None when it cannot be named.
    `current_ok`: the code goes where that stream is the ambient current stream."""
    if is_pasteable(label):
        return label
    table = None
    if label == "the legacy default stream":
        table = LEGACY_STREAM
    elif label == "the current stream" and current_ok:
        table = CURRENT_STREAM
    if table is None or framework not in table:
        return None
    alias = import_alias(module, MODULE_OF[framework])
    return table[framework].format(m=alias) if alias else None


def stream_at(builder: FixBuilder, record, label: str, framework: str, row: int, *, current_ok: bool) -> Optional[str]:
    """Code naming the stream labelled `label` at `row` of `record`'s body, or None.

    A label is the name the stream had where the analysis met it; it names the same
    stream at `row` only if that name is bound once in the function, before `row`, and
    the stream is not one of several drawn from a collection (`streams[i % 2]`)."""
    if is_pasteable(label):
        for op in record.ops:
            for stream in (op.stream, op.target):
                if stream is not None and stream.label == label and stream.one_of:
                    return None
    return stream_named_at(builder, record.node, label, framework, row, current_ok=current_ok)


def stream_named_at(builder: FixBuilder, function: cst.CSTNode, label: str, framework: str, row: int, *,
                    current_ok: bool) -> Optional[str]:
    """Code naming the stream labelled `label` at `row` of `function`'s body, or None: the
    label itself when its name is bound once in the function, before `row`; the framework's
    spelling of the legacy (or, where `current_ok`, the current) stream."""
    if not is_pasteable(label):
        return spell_stream(label, framework, builder.module, current_ok=current_ok)
    root = label.split(".", 1)[0]
    if not bound_before(builder, function, label, row):
        return None
    if root != "self" and _bindings(builder, function, root) > 1:
        return None
    return label


def _bindings(builder: FixBuilder, function: cst.CSTNode, name: str) -> int:
    rng = builder.analysis.position(function)
    if rng is None:
        return 2
    pattern = binding_pattern(name)
    return sum(1 for r in range(rng.start.line, rng.end.line + 1) if pattern.search(builder.line(r)))


def fresh_name(source: str, base: str) -> str:
    """`base`, or `base_2`, ... : a name the file does not use anywhere."""
    used = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", source))
    name, n = base, 2
    while name in used:
        name, n = f"{base}_{n}", n + 1
    return name


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _as(alias: cst.ImportAlias) -> Optional[str]:
    if alias.asname is None:
        return None
    name = alias.asname.name
    return name.value if isinstance(name, cst.Name) else None


def wait_lines(builder: FixBuilder, record, hazard) -> Optional[list[str]]:
    """Statements that make the reading stream wait for the writing one, placed before
    the statement of `hazard.node`; None when a stream cannot be named there."""
    template = WAIT_LINES.get(hazard.framework)
    if template is None or hazard.param:
        return None
    row = builder.analysis.line_of(hazard.node)
    writer = stream_at(builder, record, hazard.first, hazard.framework, row, current_ok=False)
    reader = stream_at(builder, record, hazard.second, hazard.framework, row, current_ok=True)
    if writer is None or reader is None or writer == reader:
        return None
    module = import_alias(builder.module, MODULE_OF[hazard.framework]) or ""
    if "{m}" in "".join(template) and not module:
        return None
    event = fresh_name(builder.analysis.source, "ready") if "{e}" in "".join(template) else ""
    return [line.format(a=writer, b=reader, m=module, e=event) for line in template]


def region_stream(builder: FixBuilder, record, op) -> Optional[str]:
    """The one explicit stream a function queues its own work on, named where `op` is;
    None when it uses several (which one is meant is a judgement call) or none."""
    streams = [w.stream for w in record.ops if w.on_explicit_stream and w.helper is None]
    if not streams or len({s.label for s in streams}) != 1 or any(s.one_of for s in streams):
        return None
    return stream_at(builder, record, streams[0].label, op.framework, builder.analysis.line_of(op.node),
                     current_ok=False)


def wait_statements(builder: FixBuilder, function: cst.CSTNode, writer: str, reader: str, framework: str,
                    row: int) -> Optional[list[str]]:
    """Statements that make stream `reader` wait for stream `writer` (labels), to be inserted
    at `row` of `function`; None when a stream cannot be named there or the framework has no idiom."""
    template = WAIT_LINES.get(framework)
    if template is None:
        return None
    writer_code = stream_named_at(builder, function, writer, framework, row, current_ok=False)
    reader_code = stream_named_at(builder, function, reader, framework, row, current_ok=True)
    if writer_code is None or reader_code is None or writer_code == reader_code:
        return None
    module = import_alias(builder.module, MODULE_OF[framework]) or ""
    if "{m}" in "".join(template) and not module:
        return None
    event = fresh_name(builder.analysis.source, "ready") if "{e}" in "".join(template) else ""
    return [line.format(a=writer_code, b=reader_code, m=module, e=event) for line in template]
