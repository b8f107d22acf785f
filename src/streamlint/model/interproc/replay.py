"""Walks of other modules' functions kept for the run and replayed (D-39).

A walk is a function of its function's text, its calling context and the answers its queries
of the program get (ProgramView: callee summaries, class states, class-hierarchy answers, what
holders' producers leave...): the transfer functions read nothing else of the solve. A walk of
a function of a module other than the checked one is kept for the run with the queries it asked,
in order, and their answers. A later solve that needs the same function in the same context asks
the same queries from the same place (its stack and its callers' flags set as for a walk) and,
when every answer is the same, takes the kept walk without interpreting the body. Asking does to
the solve what the walk would do (its callees are solved, its call sites noted as callers', in
the same order), so the result and the solve's state are a walk's; at the first different answer
the asking stops and the body is walked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from streamlint.model import declared, resolve

# Kept walks per run, past which no more are kept (each holds its summary and its queries).
MAX_KEPT = 50_000


@dataclass(frozen=True)
class Kept:
    walked: Any  # interpret.Walked
    asked: tuple  # (query, positional arguments, keyword arguments, answer), in the order asked
    node: Any  # the function's syntax node walked (a module read again, edited or not, is another text)


class Asking:
    """The program a kept walk is given: the solver's, each query and its answer noted in order."""

    def __init__(self, view) -> None:
        self._view = view
        self.asked: list = []

    def __getattr__(self, name: str):
        query = getattr(self._view, name)
        if not callable(query):
            return query

        def asked(*args, **kwargs):
            answer = query(*args, **kwargs)
            self.asked.append((name, args, tuple(kwargs.items()), answer))
            return answer

        setattr(self, name, asked)  # (found in the instance from now on)
        return asked


def kept_walks() -> dict:
    """The walks kept in this run, by (qualname, context), apart per assumed device (files of one run may differ)."""
    return resolve.per_run(("kept_walks", declared.assumed_device()), dict)


def keep(kept: dict, key, walked, asking: Asking, node) -> None:
    if len(kept) < MAX_KEPT:
        kept[key] = Kept(walked, tuple(asking.asked), node)


def replayed(kept: dict, key, view, node) -> Optional[Any]:
    """The kept walk of `key` when it walked this very `node` and `view` answers its queries as they
    were answered; None otherwise."""
    entry = kept.get(key)
    if entry is None or entry.node is not node:
        return None
    for name, args, kwargs, answer in entry.asked:
        now = getattr(view, name)(*args, **dict(kwargs))
        if now is not answer and now != answer:
            return None
    return entry.walked
