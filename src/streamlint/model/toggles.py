"""Double buffers: a list of device buffers kept on `self`, indexed by an index kept on
`self` that the class flips between two values (`self.index = 1 - self.index`).

`self.buffers[self.index]` names one element: the one the index points at now. Its
accesses are keyed by the list and a region relative to the index's current value,
`[self.index]` (this element) or `[self.index^1]` (the other one); flipping the index
swaps the two in the ordering state, so a reduction queued on a side stream before the
flip reads "the other element" after it, and the refill that follows writes "this one".
Carried into the method's next call (classes.py), the reduction meets the refill only
after the index flips back, as in the code. Any other assignment to the index (a reset
to a constant, an increment) leaves the relation unknown: the accesses keyed by it are
forgotten (unknown stays silent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from streamlint.model.values import Buffer, Mem, Seq

if TYPE_CHECKING:
    from streamlint.model.hazards import HB

_OTHER = "^1"


def self_attribute(expr: cst.BaseExpression) -> Optional[str]:
    """`self.x` as its text, else None."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return f"self.{expr.attr.value}"
    return None


def element_site(holder: str) -> int:
    """The site the elements of `self.<holder>` share (the same in every method of the class)."""
    return hash(("self-elements", holder))


def region(index: str, other: bool = False) -> str:
    return f"[{index}{_OTHER if other else ''}]"


def element(seq: Seq, holder: str, index: str) -> Optional[Buffer]:
    """`self.buffers[self.index]` on a list of device buffers: one element of it, keyed by
    the list and the element the index points at now. None when the list holds anything
    else (or nothing we know)."""
    items = seq.items if seq.items else (seq.element,)
    if not items or not all(isinstance(i, Buffer) and i.mem is Mem.DEVICE and not i.param for i in items):
        return None
    first = items[0]
    assert isinstance(first, Buffer)
    if any(i.framework != first.framework for i in items):  # type: ignore[union-attr]
        return None
    return Buffer(first.framework, Mem.DEVICE, site=element_site(holder), region=region(index),
                  label=f"{holder}[{index}]")


def flips(target: cst.BaseExpression, value: cst.BaseExpression) -> Optional[bool]:
    """For `self.i = <value>`: True when the value flips `self.i` between two values
    (`1 - self.i`, `(self.i + 1) % 2`, `self.i ^ 1`, `not self.i`), False for any other
    value (the relation to the old index is lost), None when `target` is no `self.` attribute."""
    name = self_attribute(target)
    if name is None:
        return None
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not):
        return self_attribute(value.expression) == name
    if isinstance(value, cst.BinaryOperation):
        left, right, op = value.left, value.right, value.operator
        if isinstance(op, cst.Subtract) and _int(left) == 1:
            return self_attribute(right) == name
        if isinstance(op, cst.BitXor) and (_int(right) == 1 or _int(left) == 1):
            return name in (self_attribute(left), self_attribute(right))
        if isinstance(op, cst.Modulo) and _int(right) == 2 and isinstance(left, cst.BinaryOperation) \
                and isinstance(left.operator, cst.Add):
            inner = (left.left, left.right)
            return any(self_attribute(e) == name for e in inner) and any(_int(e) == 1 for e in inner)
    return False


def _int(expr: cst.BaseExpression) -> Optional[int]:
    if isinstance(expr, cst.Integer):
        try:
            return int(expr.value, 0)
        except ValueError:
            return None
    return None


def rekey(hb: "HB", index: str, flipped: bool) -> None:
    """After `index` is assigned: swap the accesses keyed by its element and the other one
    (a flip), or forget them (any other value)."""
    this, other = region(index), region(index, other=True)
    for table in (hb.writes, hb.reads):
        for base, parts in list(table.items()):
            if this not in parts and other not in parts:
                continue
            new = {r: evs for r, evs in parts.items() if r not in (this, other)}
            if flipped:
                if this in parts:
                    new[other] = parts[this]
                if other in parts:
                    new[this] = parts[other]
            table[base] = new

