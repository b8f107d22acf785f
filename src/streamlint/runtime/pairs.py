"""Which runtime fixture pairs a `verify` run covers, and which paths are user scripts.

A pair is a directory `<anything>/<CODE>/runtime/` holding `bad.py` and `good.py`; the
rule code is the name of the directory above `runtime/`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

CODE = re.compile(r"^SL\d{3}$")


@dataclass(frozen=True)
class Pair:
    code: str
    directory: Path

    @property
    def bad(self) -> Path:
        return self.directory / "bad.py"

    @property
    def good(self) -> Path:
        return self.directory / "good.py"


def pair_at(directory: Path) -> Pair | None:
    if directory.name != "runtime" or not CODE.match(directory.parent.name):
        return None
    if (directory / "bad.py").is_file() and (directory / "good.py").is_file():
        return Pair(directory.parent.name, directory)
    return None


def is_variant(path: Path) -> bool:
    return path.name in ("bad.py", "good.py") and pair_at(path.parent) is not None


def find_pairs(paths: Iterable[Path]) -> list[Pair]:
    found: dict[Path, Pair] = {}
    for path in paths:
        path = Path(path)
        candidates: list[Path] = []
        if path.is_file() and is_variant(path):
            candidates.append(path.parent)
        elif path.is_dir():
            candidates.extend(p.parent for p in sorted(path.rglob("runtime/bad.py")))
        for directory in candidates:
            pair = pair_at(directory)
            if pair is not None:
                found[directory.resolve()] = pair
    return sorted(found.values(), key=lambda p: (p.code, str(p.directory)))


def select(pairs: Sequence[Pair], selectors: Sequence[str] | None) -> list[Pair]:
    """Keep the pairs whose code starts with one of the selectors (codes or prefixes)."""
    if not selectors:
        return list(pairs)
    wanted = [s.strip().upper() for s in selectors if s.strip()]
    if "ALL" in wanted:
        return list(pairs)
    return [p for p in pairs if any(p.code.startswith(w) for w in wanted)]


def matches(code: str, selectors: Sequence[str]) -> bool:
    """Whether a rule code is selected (codes or prefixes; "ALL" selects every rule)."""
    wanted = [s.strip().upper() for s in selectors if s.strip()]
    return not wanted or "ALL" in wanted or any(code.startswith(w) for w in wanted)
