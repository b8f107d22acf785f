"""Whether a def can take a call's arguments: its parameters, by kind, against the call's
positional count and keyword names (a syntax query; the caller search narrows by it)."""

from __future__ import annotations

from enum import Enum
from typing import Iterator

import libcst as cst


class ParamKind(Enum):
    POSITIONAL_ONLY = "positional_only"
    POSITIONAL = "positional"  # positional or keyword
    VAR_POSITIONAL = "var_positional"  # *args
    KEYWORD_ONLY = "keyword_only"
    VAR_KEYWORD = "var_keyword"  # **kwargs


def param_nodes(params: cst.Parameters) -> Iterator[tuple[ParamKind, cst.Param]]:
    """The parameters in source order, with their kinds."""
    for param in params.posonly_params:
        yield ParamKind.POSITIONAL_ONLY, param
    for param in params.params:
        yield ParamKind.POSITIONAL, param
    if isinstance(params.star_arg, cst.Param):
        yield ParamKind.VAR_POSITIONAL, params.star_arg
    for param in params.kwonly_params:
        yield ParamKind.KEYWORD_ONLY, param
    if params.star_kwarg is not None:
        yield ParamKind.VAR_KEYWORD, params.star_kwarg


def accepts(params: cst.Parameters, call: cst.Call, bound: bool) -> bool:
    """Whether a def with these parameters can take the call's arguments (its arity: the count of
    positional arguments, the keyword names, the parameters without defaults); a call that
    unpacks `*xs` or `**kw` may take any. `bound`: the def's first parameter is the receiver."""
    if any(arg.star for arg in call.args):
        return True
    kinds = list(param_nodes(params))[1 if bound else 0:]
    given = sum(1 for arg in call.args if arg.keyword is None)
    named = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    positional = [p for kind, p in kinds if kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL)]
    by_name = {p.name.value for kind, p in kinds if kind in (ParamKind.POSITIONAL, ParamKind.KEYWORD_ONLY)}
    starred = {kind for kind, _ in kinds} & {ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD}
    if given > len(positional) and ParamKind.VAR_POSITIONAL not in starred:
        return False
    if ParamKind.VAR_KEYWORD not in starred and not named <= by_name - {p.name.value for p in positional[:given]}:
        return False
    unfilled = [p for kind, p in kinds if kind is not ParamKind.VAR_POSITIONAL and kind is not ParamKind.VAR_KEYWORD
                and p.default is None and p.name.value not in named]
    return all(p in positional[:given] for p in unfilled)
