"""What a checked file's result owes another module of its project: the summaries of the
functions it used there, as a digest (the result cache's early cutoff, mypy's interface hash).

A use is named `v3:<name in its module>` ("v3:C.m") in the reads notes (streamlint/reads.py). Its
digest (solver.digest_of_use) is the function's summary under no assumption about its callers
(the root context), solved in a program of its own module: what any importer can get from it.
A change that keeps that summary (a comment, a reformatting, a body edit with the same effects)
keeps the importers' results; any other change makes them again.
"""

from __future__ import annotations

from streamlint import reads

USE_PREFIX = "v3:"


def note_use(path: str, local: str) -> None:
    """The analysis used `local` ("f", "C.m") of the module at `path` (its digest is made by the
    run that finds the module changed: streamlint/reads.py)."""
    if path:
        reads.use(path, USE_PREFIX + local)


def local_name(use: str) -> str | None:
    """The name a v3 use note stands for, None for another note's name."""
    return use[len(USE_PREFIX):] if use.startswith(USE_PREFIX) else None
