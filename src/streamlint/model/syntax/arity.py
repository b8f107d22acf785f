"""Whether a def can take a call's arguments (the caller search narrows by it)."""

from __future__ import annotations

import libcst as cst


def _kinds(params: cst.Parameters) -> list[tuple[str, cst.Param]]:
    """The parameters in order, with their kinds: "/" positional only, "" either, "*", "**", "kw" keyword only."""
    star = [("*", params.star_arg)] if isinstance(params.star_arg, cst.Param) else []
    starstar = [("**", params.star_kwarg)] if params.star_kwarg is not None else []
    return [*(("/", p) for p in params.posonly_params), *(("", p) for p in params.params), *star,
            *(("kw", p) for p in params.kwonly_params), *starstar]


def accepts(params: cst.Parameters, call: cst.Call, bound: bool) -> bool:
    """Can a def with these parameters take the call's arguments (one unpacking may take any)? `bound`: a method."""
    if any(arg.star for arg in call.args):
        return True
    kinds = _kinds(params)[1 if bound else 0:]
    given = sum(1 for arg in call.args if arg.keyword is None)
    named = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    positional = [p for kind, p in kinds if kind in ("/", "")]
    by_name = {p.name.value for kind, p in kinds if kind in ("", "kw")}
    starred = {kind for kind, _ in kinds} & {"*", "**"}
    if given > len(positional) and "*" not in starred:
        return False
    if "**" not in starred and not named <= by_name - {p.name.value for p in positional[:given]}:
        return False
    unfilled = [p for kind, p in kinds if kind not in ("*", "**") and p.default is None and p.name.value not in named]
    return all(p in positional[:given] for p in unfilled)
