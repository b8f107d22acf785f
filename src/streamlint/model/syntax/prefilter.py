"""A module that does not spell a name cannot call it by that name: a substring test, never parsed (tested);
for many names over one module, the same test over the words it spells, each once; and a module none of whose
spellings of a function's name is followed by a call's parenthesis does not call it by name."""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(rb"[A-Za-z0-9_]+")


def may_call(data: bytes, names: frozenset[str]) -> bool:
    """False only when none of `names` is spelled anywhere in the module's bytes."""
    return any(name.encode() in data for name in names)


def may_set_default_device(data: bytes) -> bool:
    """False only when the bytes never spell PyTorch's default-device setters (before `default_device.sets_cuda_default`)."""
    return b"set_default_tensor_type" in data or b"set_default_device" in data


def may_add_import_roots(data: bytes) -> bool:
    """False only when the bytes never spell `sys.path` (the test before `import_roots.added_import_roots`)."""
    return b"sys.path" in data


def may_rebind_globals(data: bytes) -> bool:
    """False only when the bytes spell no `global` keyword (the test before `names.rebound_globals` reads a module)."""
    return b"global" in data


def may_install(data: bytes, names: frozenset[str]) -> bool:
    """False only when the bytes hold no assignment to an attribute of one of `names` (`X.forward = f`)."""
    return any(re.search(rb"\.%s\s*=[^=]" % name.encode(), data) for name in names)


def may_register(data: bytes, registrations: frozenset[str], installed: frozenset[str] = frozenset()) -> bool:
    """False only when the bytes spell none of `registrations` and assign no attribute of `installed` (the tests
    before `syntax/hooks.registered_hooks` reads a module)."""
    return may_call(data, registrations) or may_install(data, installed)


def spelled_words(data: bytes) -> bytes:
    """The module's distinct runs of ASCII name characters, apart: an ASCII name is in the bytes
    exactly when it is in these (it lies within one run), and these are a fraction of the text."""
    return b"\x00".join(set(_WORD.findall(data)))


def may_call_by_name(data: bytes, called: frozenset[str], named: frozenset[str] = frozenset(), words: bytes = b"") -> bool:
    """False only when the bytes spell none of `named` and hold no call by one of `called` (`f(...)`, `x.f(...)`:
    the name, then only blanks, line continuations or comments before the parenthesis; `def f(` is no call).
    `words`: the bytes' `spelled_words`, when made (a faster test of which names are spelled at all)."""
    spelled = words or data
    if may_call(spelled if all(n.isascii() for n in named) else data, named):
        return True
    for name in called:
        if not name.isascii():
            if name.encode() in data:
                return True
        elif name.encode() in spelled and _calls(data, name):
            return True
    return False


def _calls(data: bytes, name: str) -> bool:
    for match in _call_of(name).finditer(data):
        at = match.start()
        before = data[at - 1:at]
        if not (before.isalnum() or before == b"_") and data[max(at - 4, 0):at] != b"def ":
            return True  # (not the end of a longer name, nor a definition)
    return False


@lru_cache(maxsize=4096)
def _call_of(name: str) -> re.Pattern:
    # (each step is one blank, one backslash or one whole comment: no text is matched two ways, so a
    # name followed by a long comment and no parenthesis fails in linear time)
    return re.compile(re.escape(name.encode()) + rb"(?:[ \t\f\v\r\n]|\\|#[^\n]*\n)*\(")


def may_import(data: bytes, dotted: str) -> bool:
    """False only when no line of the bytes starts an import of `dotted` or of a module in it (`from a.b.c import x`,
    `import a.b`); `syntax/names.imports_module` confirms on the parse."""
    return re.search(rb"(?m)^[ \t]*(?:from|import)[ \t]+%s(?:[. \t]|$)" % re.escape(dotted.encode()), data) is not None


# `from a.b import c` / `from . import c, d` / `import a.b, e`: the modules an import statement names.
_IMPORTS = re.compile(rb"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]*(?:\(([^)]*)\)|((?:[\w, \t*]|\\\r?\n)+))"
                      rb"|import[ \t]+((?:[\w., \t]|\\\r?\n)+))", re.M)


def imported_modules(data: bytes) -> frozenset[tuple[int, str]]:
    """The modules a file's import statements may name, as (dots, dotted name) read from the text: `from .model import
    load` gives (1, "model") and (1, "model.load"); `from . import a` (1, "a"); `import pkg.model as m` (0,
    "pkg.model"). What the engine's prefilter asks of a file without CUDA words (discovery resolves them to files)."""
    found: set[tuple[int, str]] = set()
    for dots, source, bracketed, names, plain in _IMPORTS.findall(data):
        level, base, names = len(dots), source.decode(), bracketed or names
        if plain:
            found.update((0, m.split()[0].decode()) for m in plain.replace(b"\\", b" ").split(b",") if m.strip())
            continue
        if base:
            found.add((level, base))
        for name in re.split(rb"[\s,()\\]+", re.sub(rb"#[^\n]*", b"", names)):
            if name and name not in (b"as", b"*"):
                found.add((level, f"{base}.{name.decode()}" if base else name.decode()))
    return frozenset(found)
