"""Generators that hand their items over while a stream they chose is current, read off the summaries: the consumer
resumes with that stream current (the `with` around the `yield` is still entered), so its work on each item runs
there."""

from __future__ import annotations

from dataclasses import dataclass

from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.file_model import FileModel

# Streams a generator chose for its own work (a stream the caller handed in as the current one is no choice of its).
_CHOSEN = (StreamRefKind.CREATED, StreamRefKind.PATH)


@dataclass(frozen=True)
class YieldingOn:
    function: str  # its function's qualified name in the file ("f", "C.m")
    stream: StreamRef  # the stream current at its yields


def yielding_on_chosen_streams(model: FileModel) -> list[YieldingOn]:
    """The file's generators (not context managers, whose `yield` runs the `with` body on purpose) whose every
    reported walk yields with a stream it made or holds current (`FunctionSummary.enters`)."""
    program = model.solver.program
    prefix = model.module + "."
    found: dict[str, StreamRef] = {}
    never: set[str] = set()
    for (qualname, _), walked in model.solved.reported():
        if not qualname.startswith(prefix) or qualname in never:
            continue
        chosen = next((stream for _, stream in walked.summary.enters if stream.kind in _CHOSEN), None)
        function = program.function(qualname)
        if chosen is None or function is None or program.is_context_manager(function):
            never.add(qualname)
            found.pop(qualname, None)
            continue
        found.setdefault(qualname, chosen)
    return [YieldingOn(qualname[len(prefix):], stream) for qualname, stream in found.items()]
