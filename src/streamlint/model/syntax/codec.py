"""The index as compact JSON bytes, and back: each record a list of its fields in order.

`loads(dumps(index)) == index` exactly (tested on every fixture). A format change bumps
`FORMAT`; bytes of another format are refused (`ValueError`), so a cache treats them as a miss.
"""

from __future__ import annotations

import json
from typing import Any

from streamlint.model.syntax.types import (
    CallSite,
    ClassIndex,
    FunctionIndex,
    ImportIndex,
    ModuleIndex,
    Nesting,
    Param,
    ParamKind,
    Site,
)

FORMAT = 1


def dumps(index: ModuleIndex) -> bytes:
    record = [
        FORMAT,
        index.digest,
        [_function(f) for f in index.functions],
        [_class(c) for c in index.classes],
        [[i.module, i.name, i.alias, i.level, _site(i.site)] for i in index.imports],
        sorted(index.frameworks),
    ]
    return json.dumps(record, separators=(",", ":")).encode("ascii")  # non-ASCII as \u escapes: exact


def loads(data: bytes) -> ModuleIndex:
    try:
        record = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"syntax index: not an index ({error})") from error
    if not isinstance(record, list) or not record or record[0] != FORMAT:
        raise ValueError("syntax index: another format")
    try:
        return _load_module(record)
    except (TypeError, ValueError, KeyError, IndexError) as error:  # damaged: a cache miss, not a crash
        raise ValueError(f"syntax index: damaged ({error})") from error


def _load_module(record: list[Any]) -> ModuleIndex:
    _, digest, functions, classes, imports, frameworks = record
    return ModuleIndex(
        digest=digest,
        functions=tuple(_load_function(f) for f in functions),
        classes=tuple(_load_class(c) for c in classes),
        imports=tuple(ImportIndex(m, n, a, lv, _load_site(s)) for m, n, a, lv, s in imports),
        frameworks=frozenset(frameworks),
    )


def _site(site: Site) -> list[Any]:
    return [site.function, site.ordinal, site.line, site.column]


def _load_site(record: list[Any]) -> Site:
    return Site(*record)


def _nesting(n: Nesting) -> list[Any]:
    return [list(n.loops), list(n.tests), n.in_try, n.in_except, n.in_lambda]


def _load_nesting(record: list[Any]) -> Nesting:
    loops, tests, in_try, in_except, in_lambda = record
    return Nesting(tuple(loops), tuple(tests), in_try, in_except, in_lambda)


def _call(c: CallSite) -> list[Any]:
    return [_site(c.site), c.callee, c.receiver_root, c.positional, list(c.keywords), _nesting(c.nesting)]


def _load_call(record: list[Any]) -> CallSite:
    site, callee, root, positional, keywords, nesting = record
    return CallSite(_load_site(site), callee, root, positional, tuple(keywords), _load_nesting(nesting))


def _function(f: FunctionIndex) -> list[Any]:
    return [
        f.qualname, f.name, _site(f.site), [[p.name, p.kind.value, p.annotation, p.default] for p in f.params],
        list(f.decorators), f.class_qualname, f.is_async, f.is_generator, [_call(c) for c in f.calls],
        list(f.self_reads), list(f.self_stores), f.returns, list(f.nested),
    ]


def _load_function(record: list[Any]) -> FunctionIndex:
    qualname, name, site, params, decorators, klass, is_async, is_generator, calls, reads, stores, returns, nested = (
        record
    )
    return FunctionIndex(
        qualname=qualname, name=name, site=_load_site(site),
        params=tuple(Param(n, ParamKind(k), a, d) for n, k, a, d in params),
        decorators=tuple(decorators), class_qualname=klass, is_async=is_async, is_generator=is_generator,
        calls=tuple(_load_call(c) for c in calls), self_reads=tuple(reads), self_stores=tuple(stores),
        returns=returns, nested=tuple(nested),
    )


def _class(c: ClassIndex) -> list[Any]:
    stores = [[method, list(attrs)] for method, attrs in c.self_stores]
    return [c.qualname, c.name, _site(c.site), list(c.bases), list(c.decorators), list(c.methods), stores]


def _load_class(record: list[Any]) -> ClassIndex:
    qualname, name, site, bases, decorators, methods, stores = record
    return ClassIndex(
        qualname, name, _load_site(site), tuple(bases), tuple(decorators), tuple(methods),
        tuple((method, tuple(attrs)) for method, attrs in stores),
    )
