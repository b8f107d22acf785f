"""What `check --show-unknowns` prints: each unknown the model met (readings/untold.py) in words, at its place, as
text grouped by function or as JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TextIO

import libcst as cst

from streamlint.checked_file import CheckedFile
from streamlint.model.domain.paths import Path, RootKind
from streamlint.model.readings.untold import FunctionUnseen, Unseen

_WHAT = {
    "device": "the host reads {value}, whose device the code never shows",
    "memory": "a copy between host and device whose host memory (pinned or pageable) the code never shows",
    "stream": "work on a stream the code does not identify",
    "opaque": "{callee} is given GPU data or a stream, and nothing streamlint knows says what it does (no project "
              "function, fact table row or declared model)",
}
_HINTS = {
    "device": "tensors whose device the code never shows: in a GPU-only project, set `assume-device = \"cuda\"` "
              "in [tool.streamlint] (README, Configuration)",
    "memory": "host memory not shown: pass a buffer made with `pin_memory=True` (or a declared model's "
              "`returns = \"pinned\"`) where it is made",
    "stream": "a stream not identified: one made by a wrapper can be declared with `returns = \"stream\"`",
    "opaque": "an opaque call: declare what it does with [[tool.streamlint.model]] (README, Modelling your own "
              "wrappers)",
}


@dataclass(frozen=True)
class Entry:
    filename: str
    function: str
    row: int
    column: int
    aspect: str
    code: str
    message: str


def entries(checked: CheckedFile, functions: list[FunctionUnseen], filename: str) -> list[Entry]:
    """Each unknown placed and worded (positions and spellings from the checked file)."""
    found = []
    for function in functions:
        for unseen in function.unseen:
            node = checked.v3.node_of(unseen.site)
            rng = checked.position(node) if node is not None else None
            code = checked.code(node) if node is not None else ""
            message = _WHAT[unseen.aspect].format(value=_value(checked, unseen, node), callee=_callee(unseen, code))
            found.append(Entry(filename, function.qualname, rng.start.line if rng else 0,
                               rng.start.column + 1 if rng else 0, unseen.aspect, code, message))
    return sorted(found, key=lambda e: (e.row, e.column, e.aspect))


def _callee(unseen: Unseen, code: str) -> str:
    if unseen.callee.startswith("."):
        return f"the method `{unseen.callee[1:]}` of an object the model does not know"
    if unseen.callee.endswith("()"):  # (an instance of a project class called: no `__call__` the model follows)
        return f"an instance of `{unseen.callee[:-2]}`, called,"
    return f"`{unseen.callee}`" if unseen.callee else "a value the model does not know, called,"


def _value(checked: CheckedFile, unseen: Unseen, node) -> str:
    path = unseen.path
    if path is None:  # (a value the walk cannot name: its spelling, the receiver of `x.item()`)
        receiver = node.func.value if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) else None
        return f"`{checked.code(receiver)}`" if receiver is not None else "a value"
    if path.root.kind is RootKind.FRESH:
        return _made(checked, path)
    if path.root.kind is RootKind.PARAM and not path.steps:
        return f"parameter `{path.root.name}`"
    return f"`{path.spell()}`"


def _made(checked: CheckedFile, path: Path) -> str:
    """Memory allocated at a site: where, in this file (a view of it when the path steps into it)."""
    site = path.root.site.split(">", 1)[0]  # (made in a callee: the call that brought it)
    node = checked.v3.node_of(site)
    rng = checked.position(node) if node is not None else None
    view = "a view of " if path.steps else ""
    if rng is None:
        return f"{view}a tensor made in `{site.partition('#')[0].rsplit('.', 1)[-1]}`"
    return f"{view}the tensor made at {rng.start.line}:{rng.start.column + 1} (`{checked.code(node)}`)"


def write_text(files: list[tuple[str, list[Entry], str]], gpu_functions: int, out: TextIO) -> None:
    """`files`: (filename, its entries, an error or ""), in order."""
    aspects: dict[str, int] = {}
    functions = set()
    for filename, found, error in files:
        if error:
            out.write(f"{filename}: not analysed: {error}\n")
        last = None
        for entry in found:
            if (filename, entry.function) != last:
                last = (filename, entry.function)
                functions.add(last)
                out.write(f"{filename}: in `{entry.function}`\n")
            out.write(f"  {filename}:{entry.row}:{entry.column}: {entry.aspect}: `{entry.code}`: {entry.message}\n")
            aspects[entry.aspect] = aspects.get(entry.aspect, 0) + 1
    counted = ", ".join(f"{aspects[a]} {a}" for a in _HINTS if a in aspects)
    out.write(f"\n{gpu_functions} function(s) with GPU work (or an unknown); {len(functions)} met something the "
              f"model could not see{': ' + counted if counted else ''}.\n")
    for aspect in _HINTS:
        if aspect in aspects:
            out.write(f"- {_HINTS[aspect]}\n")


def write_json(files: list[tuple[str, list[Entry], str]], gpu_functions: int, out: TextIO) -> None:
    data = {
        "functions_with_gpu_work": gpu_functions,
        "not_analysed": [{"filename": f, "error": error} for f, _, error in files if error],
        "unknowns": [asdict(e) for _, found, _ in files for e in found],
    }
    json.dump(data, out, indent=2)
    out.write("\n")
