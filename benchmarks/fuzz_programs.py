"""Random programs for fuzzing streamlint, and the properties every run must keep.

Programs come from two sources, then get GPU code spliced in:
- fixture files (fixtures/**/*.py), real stream-using code;
- hypothesmith's random programs from Python's grammar (valid, but rarely about GPUs).
A third source is hostile bytes: fixture files with random bytes (NULs, CRs, BOMs,
brackets, quotes, invalid UTF-8) inserted, deleted or overwritten (`byte_programs`).

The splicing (`mutate`) works on libcst trees, so every result is valid Python syntax:
it inserts GPU API calls (streams, events, copies, kernel launches, syncs, for four
frameworks) at random statement positions, wraps random runs of statements in `with`
stream blocks, loops, branches, `try`, functions and `forward` methods, and deletes or
duplicates statements. Every choice is drawn from hypothesis, so failures shrink.

`check_program` lints one program and returns the broken properties (empty: all held);
`check_bytes` does the same for hostile bytes, through the engine's decoding.
Used by tests/test_fuzz.py (a short run) and benchmarks/fuzz.py (the long run).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import libcst as cst
from hypothesis import strategies as st

from streamlint import rules as registry
from streamlint.config import Settings
from streamlint.engine.lint import lint_fix as fix_source
from streamlint.engine.lint import lint_text
from streamlint.engine.run import lint_bytes
from streamlint.selection import SOURCE_ERROR
from streamlint.source import decode
from streamlint.source import split_lines as source_lines

ROOT = Path(__file__).resolve().parent.parent
FILENAME = "fuzzed.py"

IMPORTS = (
    "import torch",
    "import cupy as cp",
    "import cupy",
    "import cupyx as cpx",
    "import numpy as np",
    "from numba import cuda",
    "from cuda import cudart",
    "from cuda.bindings import runtime as cudart",
)

# {s} {t}: streams, {x} {y}: tensors or arrays, {e}: an event, {k}: a kernel, {n}: a name.
SNIPPETS = (
    # PyTorch
    "{s} = torch.cuda.Stream()",
    "{s} = torch.cuda.Stream(priority=-1)",
    "{s} = torch.cuda.current_stream()",
    "{s} = torch.cuda.default_stream()",
    "{s}.wait_stream({t})",
    "torch.cuda.current_stream().wait_stream({s})",
    "torch.cuda.set_stream({s})",
    "{x} = {y}.to('cuda', non_blocking=True)",
    "{x} = {y}.to(device, non_blocking={n})",
    "{x} = {y}.cuda(non_blocking=True)",
    "{x} = {y}.cpu()",
    "{x} = {y}.to('cpu', non_blocking=True)",
    "{x} = torch.empty(1024, device='cuda')",
    "{x} = torch.zeros(8, 8)",
    "{x} = torch.empty(1024, pin_memory=True)",
    "{x} = torch.randn(8, 8).pin_memory()",
    "{x} = torch.from_numpy({y})",
    "{x}.copy_({y}, non_blocking=True)",
    "{x}.record_stream({s})",
    "{e} = torch.cuda.Event()",
    "{e} = torch.cuda.Event(enable_timing=True, blocking=True)",
    "{e}.record({s})",
    "{e}.record()",
    "{s}.wait_event({e})",
    "{e}.wait({s})",
    "{e}.synchronize()",
    "{s}.synchronize()",
    "torch.cuda.synchronize()",
    "{n} = {x}.item()",
    "print({x}.sum().item())",
    "{n} = {x}.tolist()",
    "{x}[0] = 1",
    "{x} += {y}",
    "{x} = {x} @ {y}",
    "{x} = torch.matmul({x}, {y})",
    "del {x}",
    "{n} = torch.utils.data.DataLoader({n}, batch_size=4, pin_memory=True)",
    "for batch in {n}:\n    {x} = batch.to('cuda', non_blocking=True)",
    "with torch.cuda.stream({s}):\n    {x} = {y} * 2",
    "with torch.cuda.stream({s}):\n    {x}.copy_({y}, non_blocking=True)",
    "{n} = torch.cuda.CUDAGraph()",
    "with torch.cuda.graph({n}):\n    {x} = {y} + 1",
    "if {x}.sum() > 0:\n    pass",
    "while {x}.max() > 1:\n    {x} = {x} / 2",
    "{n} = [torch.cuda.Stream() for _ in range(4)]",
    "for {s} in {n}:\n    {s}.synchronize()",
    "{n} = torch.accelerator.current_stream()",
    # CuPy
    "{s} = cp.cuda.Stream(non_blocking=True)",
    "{s} = cupy.cuda.Stream()",
    "{s} = cp.cuda.get_current_stream()",
    "{x} = cp.asarray({y})",
    "{x} = cp.asnumpy({y})",
    "{x} = cp.zeros(10)",
    "{x} = {y}.get(stream={s})",
    "{x}.set({y}, stream={s})",
    "with {s}:\n    {x} = cp.zeros(10)",
    "{s}.use()",
    "cp.cuda.Device().synchronize()",
    "{e} = {s}.record()",
    "{e} = cp.cuda.Event()",
    "cp.cuda.runtime.deviceSynchronize()",
    "{x} = cpx.empty_pinned((4,), dtype=np.float32)",
    "{n} = cp.cuda.alloc_pinned_memory(64)",
    # Numba
    "{s} = cuda.stream()",
    "{s} = cuda.default_stream()",
    "{x} = cuda.to_device({y}, stream={s})",
    "{x} = cuda.to_device({y})",
    "{x} = cuda.device_array(16, stream={s})",
    "{k}[32, 128, {s}]({x}, {y})",
    "{k}[32, 128]({x})",
    "{y} = {x}.copy_to_host(stream={s})",
    "{y} = {x}.copy_to_host()",
    "cuda.synchronize()",
    "@cuda.jit\ndef {k}(arr, out):\n    out[0] = arr[0]",
    "{x} = cuda.pinned_array(16)",
    "with cuda.pinned({y}):\n    {x} = cuda.to_device({y}, stream={s})",
    "with {s}.auto_synchronize():\n    {x} = cuda.to_device({y}, stream={s})",
    # cuda-python
    "err, {s} = cudart.cudaStreamCreate()",
    "err, {s} = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)",
    "err, = cudart.cudaMemcpyAsync({x}, {y}, 16, {n}, {s})",
    "cudart.cudaMemcpy({x}, {y}, 16, {n})",
    "cudart.cudaStreamSynchronize({s})",
    "cudart.cudaDeviceSynchronize()",
    "err, {e} = cudart.cudaEventCreate()",
    "cudart.cudaEventRecord({e}, {s})",
    "cudart.cudaStreamWaitEvent({s}, {e}, 0)",
    # plain Python around them
    "{n} = {x}",
    "{x}, {y} = {y}, {x}",
    "{n} = lambda: {x}.to('cuda', non_blocking=True)",
    "{n} = [{x}.cuda() for _ in range(3)]",
    "return {x}",
    "yield {x}",
    "break",
    "continue",
    "global {n}",
    "raise RuntimeError({x})",
    "assert {x}.is_cuda",
    "{n}({x}, {s})",
    "self.{n} = torch.cuda.Stream()",
    "self.{n} = {x}",
)

# Compound statements to put around a run of statements, which replaces `__body__`.
BODY = "__body__"
WRAPPERS = (
    "with torch.cuda.stream({s}):\n    __body__",
    "with {s}:\n    __body__",
    "for i in range(10):\n    __body__",
    "for step, batch in enumerate({n}):\n    __body__",
    "while True:\n    __body__",
    "if step % 10 == 0:\n    __body__",
    "if {x}.sum() > 0:\n    __body__\nelse:\n    pass",
    "try:\n    __body__\nexcept Exception:\n    pass",
    "try:\n    __body__\nfinally:\n    torch.cuda.synchronize()",
    "with torch.no_grad():\n    __body__",
    "with torch.cuda.graph({n}):\n    __body__",
    "def {n}({x}, {s}):\n    __body__",
    "async def {n}({x}):\n    __body__",
    "class {n}(torch.nn.Module):\n    def forward(self, {x}):\n        __body__",
    "match {x}:\n    case _:\n        __body__",
)

# Identifiers only: placeholders also name functions, loop targets and globals.
NAMES = ("s", "t", "x", "y", "e", "a", "b", "stream", "side", "out", "buf", "loader", "kern", "g")


@functools.cache
def fixture_sources() -> tuple[tuple[str, str], ...]:
    """(relative path, text) of every fixture file that libcst parses."""
    out = []
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        try:
            cst.parse_module(text)
        except cst.ParserSyntaxError:
            continue
        out.append((str(path.relative_to(ROOT)), text))
    return tuple(out)


# ---------------------------------------------------------------- the mutations


def _blocks(module: cst.Module) -> list[cst.CSTNode]:
    """The statement lists of a module: the module's and every indented block's."""
    found: list[cst.CSTNode] = [module]

    class Collect(cst.CSTVisitor):
        def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
            found.append(node)

    module.visit(Collect())
    return found


# Nodes that hold no statement: the walks below do not go into them (most of a tree is
# expressions and whitespace; libcst's own visit of every node is most of a mutation's time).
_NO_STATEMENTS = (cst.BaseExpression, cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace,
                  cst.Comment, cst.Newline, cst.Decorator, cst.Parameters, cst.Annotation)  # fmt: skip
_FIELDS: dict[type, tuple[str, ...]] = {}


def _outline(module: cst.Module) -> tuple[list[cst.CSTNode], list[cst.Name]]:
    """`_blocks(module)` and `_assigned_names(module)` in one walk over the statements only, in
    libcst's visiting order (a node met twice, as a duplicated statement is, is listed twice)."""
    blocks: list[cst.CSTNode] = [module]
    names: list[cst.Name] = []

    def walk(node: cst.CSTNode) -> None:
        fields = _FIELDS.get(type(node))
        if fields is None:
            fields = _FIELDS[type(node)] = tuple(f.name for f in dataclasses.fields(node))
        for name in fields:
            value = getattr(node, name)
            for child in value if isinstance(value, (tuple, list)) else (value,):
                if not isinstance(child, cst.CSTNode) or isinstance(child, _NO_STATEMENTS):
                    continue
                if isinstance(child, cst.AssignTarget):
                    if isinstance(child.target, cst.Name):
                        names.append(child.target)
                    continue
                if isinstance(child, cst.IndentedBlock):
                    blocks.append(child)
                walk(child)

    walk(module)
    return blocks, names[:40]


class _EditBlock(cst.CSTTransformer):
    def __init__(self, target: cst.CSTNode, edit: Callable[[list], list]) -> None:
        self.target, self.edit = target, edit

    def on_visit(self, node: cst.CSTNode) -> bool:
        # (what holds no statement holds no block: kept as it is, not rebuilt)
        return not isinstance(node, _NO_STATEMENTS)

    def _apply(self, original, updated):
        if original is not self.target:
            return updated
        body = self.edit(list(updated.body)) or [cst.SimpleStatementLine([cst.Pass()])]
        return updated.with_changes(body=body)

    def leave_IndentedBlock(self, original, updated):
        return self._apply(original, updated)

    def leave_Module(self, original, updated):
        return self._apply(original, updated)


def _statements(code: str) -> list[cst.BaseStatement]:
    return list(cst.parse_module(code + "\n").body)


@st.composite
def _names(draw, module: cst.Module, assigned: Optional[list[cst.Name]] = None) -> dict[str, str]:
    """Placeholder values: names the program already binds, or common ones."""
    assigned = _assigned_names(module) if assigned is None else assigned
    bound = sorted(
        {n.value for n in assigned} | set(NAMES)
    )  # fmt: skip
    pick = lambda: draw(st.sampled_from(bound))  # noqa: E731
    return {key: pick() for key in ("s", "t", "x", "y", "e", "k", "n")}


def _assigned_names(module: cst.Module) -> list[cst.Name]:
    names: list[cst.Name] = []

    class Collect(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if isinstance(node.target, cst.Name):
                names.append(node.target)

    module.visit(Collect())
    return names[:40]


@st.composite
def mutate(draw, source: str, max_mutations: int = 8) -> str:
    """`source` with GPU imports and random GPU statements, wrappers, deletions and
    duplications spliced in; always valid syntax (every step is a libcst tree edit)."""
    module = cst.parse_module(source)
    imports = draw(st.lists(st.sampled_from(IMPORTS), max_size=4, unique=True))
    if imports:
        module = module.with_changes(body=[*_statements("\n".join(imports)), *module.body])
    for _ in range(draw(st.integers(1, max_mutations))):  # unmutated fixtures: test_fixtures.py
        blocks, assigned = _outline(module)  # (as _blocks and _assigned_names find them)
        target = blocks[draw(st.integers(0, len(blocks) - 1))]
        size = len(target.body)
        names = draw(_names(module, assigned))
        kind = draw(st.sampled_from(("insert", "insert", "insert", "wrap", "delete", "duplicate")))
        if kind == "insert" or size == 0:
            code = draw(st.sampled_from(SNIPPETS)).format(**names)
            at = draw(st.integers(0, size))
            edit = lambda body, at=at, new=_statements(code): body[:at] + new + body[at:]  # noqa: E731
        elif kind == "wrap":
            start = draw(st.integers(0, size - 1))
            end = draw(st.integers(start + 1, min(size, start + 4)))
            template = draw(st.sampled_from(WRAPPERS))
            edit = functools.partial(_wrap, template=template, names=names, start=start, end=end)
        elif kind == "delete":
            at = draw(st.integers(0, size - 1))
            edit = lambda body, at=at: body[:at] + body[at + 1 :]  # noqa: E731
        else:
            at = draw(st.integers(0, size - 1))
            edit = lambda body, at=at: body[: at + 1] + body[at:]  # noqa: E731
        module = module.visit(_EditBlock(target, edit))
    return module.code


def _wrap(body: list, *, template: str, names: dict[str, str], start: int, end: int) -> list:
    """body[start:end] moved into the template's compound statement (as nodes: no text
    is re-indented, so odd whitespace and comments survive)."""
    wrapper = _statements(template.format(**names))
    inner = body[start:end]

    class Fill(cst.CSTTransformer):
        def leave_IndentedBlock(self, original, updated):
            if cst.Module(body=updated.body).code.strip() == BODY:
                return updated.with_changes(body=inner)
            return updated

    return body[:start] + [stmt.visit(Fill()) for stmt in wrapper] + body[end:]


# ---------------------------------------------------------------- the programs


def fixture_programs(max_mutations: int = 8) -> st.SearchStrategy[str]:
    """Fixture files with GPU code spliced in."""
    sources = [text for _, text in fixture_sources()]
    return st.sampled_from(sources).flatmap(lambda text: mutate(text, max_mutations))


def grammar_programs(max_mutations: int = 8) -> st.SearchStrategy[str]:
    """hypothesmith's programs from Python's grammar, GPU code spliced into those libcst
    parses (the others are linted as they are: they must get SL000, never a crash)."""
    import hypothesmith

    def splice(text: str) -> st.SearchStrategy[str]:
        try:
            cst.parse_module(text)
        except Exception:
            return st.just(text)
        return mutate(text, max_mutations)

    return hypothesmith.from_grammar().flatmap(splice)


GARBAGE = (b"\0", b"\r", b"\r\n", b"\t", b"\xef\xbb\xbf", b"\xff", b"\xc3", b"\xed\xa0\x80", b"(", b")",
           b"[", b"{", b"'''", b'"', b"\\", b"#", b"    ", b"\x0c", b"\xe2\x80\xa8", b":", b"lambda", b"\n",
           b"# noqa", b"# streamlint: ignore-file", b"async ", b"await ", b"*", b"@")  # fmt: skip


@st.composite
def byte_programs(draw, max_edits: int = 6) -> bytes:
    """A fixture's bytes with random bytes inserted, deleted or overwritten."""
    data = bytearray(draw(st.sampled_from([t for _, t in fixture_sources()])).encode("utf-8"))
    for _ in range(draw(st.integers(1, max_edits))):
        at = draw(st.integers(0, len(data)))
        chunk = draw(st.one_of(st.sampled_from(GARBAGE), st.binary(min_size=1, max_size=8)))
        kind = draw(st.sampled_from(("insert", "delete", "overwrite")))
        if kind == "insert":
            data[at:at] = chunk
        elif kind == "delete":
            del data[at : at + len(chunk)]
        else:
            data[at : at + len(chunk)] = chunk
    return bytes(data)


# ---------------------------------------------------------------- the properties


@dataclass
class Report:
    """What one program did. `problems` empty: every property held."""

    problems: list[str] = field(default_factory=list)
    # ok, parse-rejected (hypothesmith made text libcst cannot parse, and it got SL000),
    # or the first broken property: crash, timeout, unexpected-sl000, malformed,
    # nondeterministic, fix-reparse, fix-crlf
    kind: str = "ok"
    codes: tuple[str, ...] = ()
    fixed: bool = False  # a fix changed the text
    digest: str = ""  # the diagnostics, for comparing runs in other processes


def fuzz_settings(timeout: float = 20.0) -> Settings:
    return dataclasses.replace(Settings.default(), timeout=timeout)


def diagnostics_digest(diagnostics) -> str:
    return "\n".join(
        f"{d.row}:{d.column}-{d.end_row}:{d.end_column} {d.code} {d.noqa_row} {d.message}" for d in diagnostics
    )


def check_program(text: str, settings: Optional[Settings] = None, fixes: bool = True) -> Report:
    """Lint `text` and check: no exception and no internal error, SL000 only for text
    libcst rejects, every diagnostic well formed, the same output on a second run and
    with CRLF line endings; and (with `fixes`) that the text with every fix applied,
    unsafe ones included, still parses, and that CRLF line endings fix the same way."""
    settings = settings or fuzz_settings()
    report = Report()
    try:
        cst.parse_module(text)
        parses = True
    except Exception:  # libcst cannot parse every program hypothesmith makes
        parses = False
    lines = source_lines(text)
    try:
        first = lint_text(text, FILENAME, settings)
    except Exception as err:  # lint_text must report, never raise
        return _fail(report, "crash", f"lint_text raised {type(err).__name__}: {err}")
    report.codes = tuple(d.code for d in first)
    report.digest = diagnostics_digest(first)
    for d in first:
        if d.code == SOURCE_ERROR and d.message.startswith("internal error"):
            _fail(report, "crash", d.message)
        elif d.code == SOURCE_ERROR and "timed out" in d.message:
            _fail(report, "timeout", d.message)
        elif d.code == SOURCE_ERROR and parses:
            _fail(report, "unexpected-sl000", f"SL000 for a program libcst parses: {d.message}")
    if not parses:
        if not report.problems and report.codes != (SOURCE_ERROR,):
            _fail(report, "unexpected-sl000", f"libcst rejects the program but the result was {report.codes}")
        report.kind = report.kind if report.problems else "parse-rejected"
        return report
    for problem in _malformed(first, lines):
        _fail(report, "malformed", problem)
    if diagnostics_digest(lint_text(text, FILENAME, settings)) != report.digest:
        _fail(report, "nondeterministic", "a second run in the same process gave other diagnostics")
    if "\r" not in text:
        crlf = lint_text(text.replace("\n", "\r\n"), FILENAME, settings)
        if diagnostics_digest(crlf) != report.digest:
            _fail(report, "nondeterministic", "CRLF line endings gave other diagnostics")
    if fixes and any(d.fix is not None for d in first):
        _check_fix(report, text, settings)
    return report


def check_bytes(data: bytes, settings: Optional[Settings] = None) -> Report:
    """Lint raw bytes as a file's contents: no exception, no internal error or timeout,
    SL000 alone when there is one, the same output twice, and for text that decodes,
    every property of check_program (fixes aside)."""
    settings = settings or fuzz_settings()
    report = Report()
    try:
        first = lint_bytes(data, FILENAME, settings).diagnostics
        again = lint_bytes(data, FILENAME, settings).diagnostics
    except Exception as err:
        return _fail(report, "crash", f"lint_bytes raised {type(err).__name__}: {err}")
    report.codes = tuple(d.code for d in first)
    report.digest = diagnostics_digest(first)
    for d in first:
        if d.code == SOURCE_ERROR and d.message.startswith("internal error"):
            _fail(report, "crash", d.message)
        elif d.code == SOURCE_ERROR and "timed out" in d.message:
            _fail(report, "timeout", d.message)
    if SOURCE_ERROR in report.codes and len(first) != 1:
        _fail(report, "malformed", f"SL000 beside other diagnostics: {report.codes}")
    if any(d.row < 1 or d.column < 1 or d.end_row < d.row for d in first):
        _fail(report, "malformed", f"bad positions: {report.digest}")
    if diagnostics_digest(again) != report.digest:
        _fail(report, "nondeterministic", "a second run in the same process gave other diagnostics")
    text = decode(data, FILENAME)
    if not report.problems and isinstance(text, str) and report.codes:  # analysed, not prefiltered
        inner = check_program(text, settings, fixes=False)
        if inner.kind not in ("ok", "parse-rejected"):
            report.problems.extend(inner.problems)
            report.kind = inner.kind
    return report


def _check_fix(report: Report, text: str, settings: Settings) -> None:
    try:
        outcome = fix_source(text, FILENAME, settings, unsafe=True)
    except Exception as err:
        _fail(report, "crash", f"fix_source raised {type(err).__name__}: {err}")
        return
    if outcome.error is not None or outcome.source == text:
        return
    report.fixed = True
    try:
        cst.parse_module(outcome.source)
    except Exception as err:
        _fail(report, "fix-reparse", f"fixed source does not parse with libcst: {err}")
        return
    if _python_parses(text) and not _python_parses(outcome.source):
        _fail(report, "fix-reparse", "fixed source does not parse with ast (the original did)")
        return
    if "\r" not in text:
        crlf = fix_source(text.replace("\n", "\r\n"), FILENAME, settings, unsafe=True)
        if crlf.source != outcome.source.replace("\n", "\r\n"):
            _fail(report, "fix-crlf", "CRLF line endings fixed differently (or lost their CRLF)")


def _python_parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _malformed(diagnostics, lines: list[str]) -> list[str]:
    known = {rule.code for rule in registry.all_rules()} | {SOURCE_ERROR}
    out = []
    for d in diagnostics:
        # A finding is on a line of the file; SL000 may point just past its last line break.
        rows = len(lines) - (1 if lines[-1] == "" and d.code != SOURCE_ERROR else 0)
        where = f"{d.code} at {d.row}:{d.column}-{d.end_row}:{d.end_column}"
        if d.code not in known:
            out.append(f"unknown code {where}")
        if d.filename != FILENAME or not d.message:
            out.append(f"no filename or message: {where}")
        if not (1 <= d.row <= d.end_row <= rows and d.row <= d.noqa_row <= d.end_row):
            out.append(f"rows out of the file ({rows} rows): {where}, noqa row {d.noqa_row}")
        if d.column < 1 or d.end_column < 1 or (d.row == d.end_row and d.end_column < d.column):
            out.append(f"bad columns: {where}")
        elif d.code != SOURCE_ERROR and d.row <= rows:
            line = lines[d.row - 1]
            if d.column > len(line) + 1:
                out.append(f"column past the end of its line ({len(line)} chars): {where}")
    if diagnostics != sorted(diagnostics):
        out.append("diagnostics not sorted")
    return out


def _fail(report: Report, kind: str, problem: str) -> Report:
    if report.kind == "ok":
        report.kind = kind
    report.problems.append(problem)
    return report
