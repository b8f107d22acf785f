"""Names of the `record_function` ranges the runtime module opens.

- `SL301:17`: the statement on line 17 that rule SL301 flagged;
- `SL401:48:ref:47`: a statement the finding's message refers to (its producer, the
  copy it races, the allocation it outlives);
- `streamlint::rep::<k>`: one call of a fixture's `run()` (script mode: the whole run);
- `streamlint::stream::<label>::<handle>`: a stream marker (streams.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REP_PREFIX = "streamlint::rep::"
_LABEL = re.compile(r"^(SL\d{3}):(\d+)(?::ref:(\d+))?$")


@dataclass(frozen=True)
class Label:
    code: str
    row: int
    ref: int | None = None

    def __str__(self) -> str:
        if self.ref is None:
            return f"{self.code}:{self.row}"
        return f"{self.code}:{self.row}:ref:{self.ref}"

    @property
    def finding(self) -> "Label":
        return Label(self.code, self.row)


def parse_label(name: str) -> Label | None:
    m = _LABEL.match(name)
    if not m:
        return None
    return Label(m.group(1), int(m.group(2)), int(m.group(3)) if m.group(3) else None)


def rep_name(k: int) -> str:
    return f"{REP_PREFIX}{k}"
