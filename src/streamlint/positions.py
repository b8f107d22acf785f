"""Source positions of nodes, computed for the part of a file that holds them.

libcst computes positions by generating code, which for a whole large file costs several
times its parse. Findings are few, so a finding's position comes from generating only
the statement that holds it (a method of a top-level class with its class's header, or
a top-level statement) and placing that text in the source, where it must be unique.
Each function returns the positions it found, or None when it cannot place the text.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst
from libcst._position import CodePosition
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

Positions = dict[cst.CSTNode, CodeRange]


def of_member(module: cst.Module, source: str, cls: cst.ClassDef, member: cst.CSTNode) -> Optional[Positions]:
    """One method of a top-level class: the class generated with that method alone (a big
    class's code costs seconds), the method's lines found in the source."""
    if not source or not isinstance(cls.body, cst.IndentedBlock):
        return None
    alone = _alone(module, cls.with_changes(body=cls.body.with_changes(body=[member])))
    local = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
    first = local[member].start.line  # (1-based; the class header's lines come before)
    text = "".join(alone.code.splitlines(keepends=True)[first - 1:])
    start = source.find(text)
    if start < 0 or (start and source[start - 1] != "\n") or source.find(text, start + 1) >= 0:
        return None
    shift = source.count("\n", 0, start) - (first - 1)
    # (the header's nodes are left to their class's placement)
    return {n: _shifted(rng, shift) for n, rng in local.items() if rng.start.line >= first}


def of_statement(module: cst.Module, source: str, top: cst.CSTNode) -> Optional[Positions]:
    """A top-level statement, generated alone and found in the source."""
    if not source:
        return None
    text = module.code_for_node(top)
    start = source.find(text)
    if start < 0 or source.find(text, start + 1) >= 0:
        return None  # not found, or not unique: cannot place it
    shift = source.count("\n", 0, start)
    local = MetadataWrapper(_alone(module, top), unsafe_skip_copy=True).resolve(PositionProvider)
    return {n: _shifted(rng, shift) for n, rng in local.items()}


def of_module(module: cst.Module) -> Positions:
    """Every node of the module (slow, exact)."""
    return dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))


def _alone(module: cst.Module, statement: cst.CSTNode) -> cst.Module:
    return cst.Module(body=[statement], header=[], footer=[], default_indent=module.default_indent,
                      default_newline=module.default_newline)


def _shifted(rng: CodeRange, lines: int) -> CodeRange:
    return CodeRange(CodePosition(rng.start.line + lines, rng.start.column),
                     CodePosition(rng.end.line + lines, rng.end.column))
