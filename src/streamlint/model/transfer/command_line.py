"""Command-line parsers (`argparse`): the namespace a parser returns holds each option's default at the attribute
the option names, so `args.device` after `add_argument("--device", default="cuda")` is the CUDA device."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst

from streamlint.model.api import python_std
from streamlint.model.api.facts import Arg
from streamlint.model.domain.paths import Path, Root
from streamlint.model.domain.state import State
from streamlint.model.domain.values import FALSE, TRUE, UNKNOWN, AbsValue, ValueKind
from streamlint.model.transfer.arguments import Arguments
from streamlint.model.transfer.frame import Frame

PARSER = "argparse.ArgumentParser()"  # the target of a parser object
PARSED = "(parsed options)"  # the target of the namespace its `parse_args()` returns: the run's settings
OPTIONS = "<options>"  # the parser's attribute that keeps the options added so far (a container: keys, positions)
# The defaults a namespace carries: devices (where the program's tensors go), as the evidence that matters here
KEPT_KINDS = frozenset({ValueKind.DEVICE})


def made(arguments: Arguments, frame: Frame) -> AbsValue:
    return AbsValue(ValueKind.OBJECT, identity=Path(Root.fresh(frame.site(arguments.node))), target=PARSER)


def method(name: str, parser: AbsValue, arguments: Arguments, state: State) -> Optional[tuple[AbsValue, State]]:
    """`add_argument` keeps the option's default; a group adds to its parser; `parse_args` hands the namespace, which
    carries the defaults as its fields (`keys`, `positions`: they go where the namespace goes, into callees too)."""
    if parser.identity is None:
        return None
    kept = parser.identity.attr(OPTIONS)
    options = state.stored(kept) or AbsValue(ValueKind.CONTAINER)
    if name in python_std.OPTION_GROUPS:
        return parser, state
    if name in python_std.OPTION_PARSES:
        namespace = AbsValue(ValueKind.OBJECT, identity=parser.identity, positions=options.positions,
                             keys=options.keys, target=PARSED)
        rest = AbsValue(ValueKind.CONTAINER, element=AbsValue(ValueKind.HOST_NUMBER))
        return (AbsValue(ValueKind.CONTAINER, positions=(namespace, rest)) if python_std.OPTION_PARSES[name]
                else namespace), state
    if name not in python_std.OPTION_ADDERS:
        return UNKNOWN, state
    dest, default = _destination(arguments), _default(arguments)
    if not dest or default is None or default.kind not in KEPT_KINDS or dest in options.keys:
        return UNKNOWN, state
    added = AbsValue(ValueKind.CONTAINER, positions=options.positions + (default,), keys=options.keys + (dest,))
    return UNKNOWN, state.store(kept, added)


def field_of(obj: AbsValue, attr: str) -> Optional[AbsValue]:
    """A field an object's value carries (a parsed namespace's option default)."""
    if obj.kind is ValueKind.OBJECT and attr in obj.keys and len(obj.keys) == len(obj.positions):
        return obj.positions[obj.keys.index(attr)]
    return None


def with_field(obj: AbsValue, attr: str, value: AbsValue) -> AbsValue:
    """The object after `obj.attr = value`: the field it carries replaced, or dropped when not a kind it keeps."""
    if obj.kind is not ValueKind.OBJECT or attr not in obj.keys or len(obj.keys) != len(obj.positions):
        return obj
    fields = [(k, value if k == attr else v) for k, v in zip(obj.keys, obj.positions)
              if k != attr or value.kind in KEPT_KINDS]
    return replace(obj, keys=tuple(k for k, _ in fields), positions=tuple(v for _, v in fields))


def _destination(arguments: Arguments) -> str:
    """`dest=`, else the first long option (`--local-rank` -> `local_rank`), else the first name given."""
    told = arguments.string_literal(Arg(kw="dest"))
    if told:
        return told
    names = [e.evaluated_value for e, in ((x,) for _, x in arguments.positional)
             if isinstance(e, cst.SimpleString) and isinstance(e.evaluated_value, str)]
    long = next((n for n in names if n.startswith("--")), None)
    name = long or (names[0] if names else "")
    return name.lstrip("-").replace("-", "_") if name and (long or not name.startswith("-")) else ""


def _default(arguments: Arguments) -> Optional[AbsValue]:
    given = arguments.value(Arg(kw="default"))
    if given is not None:
        return given
    action = arguments.string_literal(Arg(kw="action"))
    if action in python_std.FLAG_ACTIONS:
        return TRUE if python_std.FLAG_ACTIONS[action] else FALSE
    return None
