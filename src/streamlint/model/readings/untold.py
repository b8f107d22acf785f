"""What the walks of a module's functions could not see where it would have mattered: tensors of a device not told
that the host reads, copies whose host memory is not told, work on a stream not identified, and calls nothing
resolves that are given GPU data or a stream (the notes a walk keeps, `Walked.untold`). It decides no finding: it
tells a user whose code passes silently why, and where a declared model or a setting would help."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from streamlint.model.domain.order import HOST
from streamlint.model.domain.paths import Path
from streamlint.model.file_model import FileModel
from streamlint.model.summary.effects import EffectKind

ASPECTS = ("device", "memory", "stream", "opaque")


@dataclass(frozen=True)
class Unseen:
    site: str  # the call or statement where it mattered
    aspect: str  # one of ASPECTS
    path: Optional[Path] = None  # the value, for a device not told
    callee: str = ""  # an opaque call's callee, as resolved ("" when the call names a value)


@dataclass(frozen=True)
class FunctionUnseen:
    qualname: str  # as written in the file ("f", "C.m"; "<module>" for the top level)
    unseen: tuple[Unseen, ...]


def unseen_in(model: FileModel) -> tuple[list[FunctionUnseen], int]:
    """Per function of the module that does GPU work or meets an unknown: what stayed unknown under every calling
    context it was walked in (what one caller's context tells is seen); and how many functions do GPU work."""
    prefix = model.module + "."
    notes: dict[str, set] = {}
    gpu: set[str] = set()
    for (qualname, _), walked in model.solved.reported():
        if not qualname.startswith(prefix):
            continue
        if any(e.kind is not EffectKind.ACCESS or e.stream != HOST for e in walked.effects):
            gpu.add(qualname)
        here = set(walked.untold)
        notes[qualname] = here if qualname not in notes else notes[qualname] & here
    found = [FunctionUnseen(qualname[len(prefix):], tuple(Unseen(*note) for note in _in_order(left)))
             for qualname, left in sorted(notes.items()) if left]
    return found, len(gpu | {prefix + f.qualname for f in found})


def _in_order(notes: set) -> list:
    """By the site's place in its function (its ordinal), then by aspect."""
    def key(note):
        ordinal = note[0].rpartition("#")[2]
        return (int(ordinal) if ordinal.lstrip("-").isdigit() else 0, ASPECTS.index(note[1]), repr(note[2:]))
    return sorted(notes, key=key)
