"""Declared API models: what a wrapper the analysis cannot see does, said in TOML (the format is
the README's "Modelling your own wrappers"; streamlint's own models are api/models/*.toml). Data and parsing
only, checked when loaded (a ModelError names the model and the key); the transfer functions ask
`active()` for facts."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

if TYPE_CHECKING:
    from streamlint.model.api.facts import Arg, Fact, Stream

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

# What an effect model's call does.
KINDS: dict[str, Optional[str]] = {  # the OpKind each kind is (by name)
    "h2d": "COPY_H2D",
    "d2h": "COPY_D2H",
    "d2d": "COPY_D2D",
    "copy": "COPY",
    "kernel": "KERNEL",
    "memset": "MEMSET",
    "device-sync": "DEVICE_SYNC",
    "stream-sync": "STREAM_SYNC",
    "event-sync": "EVENT_SYNC",
    "wait-event": "STREAM_WAIT_EVENT",
    "wait-stream": "WAIT_STREAM",
    "record-event": "EVENT_RECORD",
    "stream": "STREAM_CREATE",
    "event": "EVENT_CREATE",
    "pinned-alloc": "PINNED_ALLOC",
    "alloc": "ALLOC",
    "pin": "PIN",
    "value": None,  # no device work: only what it returns
}
_SYNC_KINDS = frozenset({"device-sync", "stream-sync", "event-sync"})
_COPY_KINDS = frozenset({"h2d", "d2h", "d2d", "copy"})
# What a call returns (fact result spellings, flow.RESULTS).
RETURNS = {
    "none": "unknown",
    "device": "device:{fw}",
    "pinned": "pinned:{fw}",
    "pageable": "pageable:numpy",
    "stream": "stream",
    "event": "event",
    "self": "self",
    "current-stream": "current_stream",
    "cuda-device": "cuda_device",
}
FRAMEWORKS = ("torch", "cupy", "numba", "cuda-python")
# Namespaces a namespace model may stand for.
NAMESPACES = ("torch.cuda", "cupy.cuda", "numba.cuda", "torch", "cupy", "cuda.core")
NAMESPACE_KEYS = ("target", "namespace", "doc")
EFFECT_KEYS = ("target", "kind", "framework", "stream", "reads", "writes", "blocking", "returns", "host",
               "target-arg", "doc")


def _name(spelled: str) -> bool:
    """An ASCII Python name (the models' targets and argument names)."""
    return spelled.isascii() and spelled.isidentifier()


def _is_target(target: str) -> bool:
    """A dotted name of two parts or more; a part between may be an instance, `Class()`."""
    parts = target.split(".")
    middle = [p.removesuffix("()") for p in parts[1:-1]]
    return len(parts) > 1 and _name(parts[0]) and _name(parts[-1]) and all(map(_name, middle))


def _parse_ref(ref: str) -> Optional[tuple[Optional[int], Optional[str]]]:
    """An argument reference: `argN` (position), `argN:name` (position or keyword), `name`
    (keyword): (position, keyword), or None when it is none of these."""
    head, colon, keyword = ref.partition(":")
    digits = head[3:]
    if head.startswith("arg") and digits.isascii() and digits.isdigit() and (not colon or _name(keyword)):
        return int(digits), keyword or None
    return (None, ref) if not colon and _name(ref) else None


class ModelError(Exception):
    """An invalid declared model; the CLI prints it as a config error (exit 2)."""


@dataclass(frozen=True)
class Model:
    """One checked model (hashable: it is part of Settings and of the cache key)."""

    target: str
    namespace: Optional[str] = None
    kind: Optional[str] = None
    framework: str = "torch"
    stream: str = "none"
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    blocking: Optional[bool] = None
    returns: str = "none"
    host: Optional[str] = None
    target_arg: Optional[str] = None
    source: str = ""  # where it was declared (for messages); not part of its meaning

    def fact(self) -> "Fact":
        """The model as an API fact."""
        # lazy: the config loads models without the stream model (and libcst) that a
        # run served from the cache never needs; facts are made when a file is analysed.
        from streamlint.model.api.facts import Block, Fact
        from streamlint.model.api.op_kinds import OpKind

        fw = self.framework
        kind_name = KINDS[self.kind or "value"]
        kind = OpKind[kind_name] if kind_name else None
        stream_mode, stream_arg = _stream(self.stream)
        blocking = self.blocking if self.blocking is not None else self.kind in _SYNC_KINDS
        reads = tuple(_arg(r) for r in self.reads if r != "self")
        writes = tuple(_arg(w) for w in self.writes if w != "self")
        result = RETURNS[self.returns].format(fw="numpy" if self.returns == "pinned" and fw == "cupy" else fw)
        return Fact(
            kind, fw, stream=stream_mode, stream_arg=stream_arg,
            blocking=Block.ALWAYS if blocking else Block.NEVER, result=result,
            host=_arg(self.host) if self.host else None,
            target=_arg(self.target_arg) if self.target_arg else None,
            reads=reads, writes=writes, self_reads="self" in self.reads, self_writes="self" in self.writes,
            async_api=self.kind in _COPY_KINDS and not blocking and stream_arg is not None,
        )


def _arg(ref: str) -> "Arg":
    from streamlint.model.api.facts import Arg  # lazy: as in Model.fact

    parsed = _parse_ref(ref)
    assert parsed is not None  # checked when loaded
    return Arg(*parsed)


def _stream(spec: str) -> tuple["Stream", Optional["Arg"]]:
    from streamlint.model.api import facts  # lazy: as in Model.fact

    fixed = {"none": facts.Stream.NONE, "current": facts.Stream.CURRENT, "legacy": facts.Stream.LEGACY,
             "self": facts.Stream.SELF}
    if spec in fixed:
        return fixed[spec], None
    if spec.endswith("|current"):
        return facts.Stream.ARG_OR_CURRENT, _arg(spec[: -len("|current")])
    return facts.Stream.ARG, _arg(spec)


# ------------------------------------------------------------------ checking
def parse_models(entries: Any, where: str) -> tuple[Model, ...]:
    """Checked models from a TOML array of tables; `where` names it in messages."""
    if not isinstance(entries, list):
        raise ModelError(f"{where}: expected an array of tables ([[...model]]), got {type(entries).__name__}")
    return tuple(parse_model(entry, f"{where}[{i}]") for i, entry in enumerate(entries))


def parse_model(entry: Any, where: str) -> Model:
    if not isinstance(entry, Mapping):
        raise ModelError(f"{where}: expected a table, got {entry!r}")
    target = entry.get("target")
    if not isinstance(target, str) or not _is_target(target):
        raise ModelError(f"{where}: key 'target': expected a dotted name such as 'mylib.copy_async' "
                         f"(or 'mylib.Buffer().copy' for a method), got {target!r}")
    where = f"{where} (target {target!r})"
    if "namespace" in entry and "kind" in entry:
        raise ModelError(f"{where}: a model has either 'namespace' or 'kind', not both")
    _check_keys(entry, NAMESPACE_KEYS if "namespace" in entry else EFFECT_KEYS, where)
    if "namespace" in entry:
        ns = entry["namespace"]
        if ns not in NAMESPACES:
            raise ModelError(f"{where}: key 'namespace': expected one of {', '.join(NAMESPACES)}, got {ns!r}")
        return Model(target=target, namespace=ns, source=where)
    return _effect_model(entry, target, where)


def _check_keys(entry: Mapping, allowed: tuple[str, ...], where: str) -> None:
    for key in entry:
        if key not in allowed:
            hint = difflib.get_close_matches(key, allowed, n=1)
            extra = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise ModelError(f"{where}: unknown key {key!r}{extra}; valid keys: {', '.join(allowed)}")


def _one_of(entry: Mapping, key: str, allowed: Sequence[str], default: Any, where: str) -> Any:
    value = entry.get(key, default)
    if value not in allowed:
        raise ModelError(f"{where}: key {key!r}: expected one of {', '.join(allowed)}, got {value!r}")
    return value


def _one_ref(entry: Mapping, key: str, where: str) -> Optional[str]:
    value = entry.get(key)
    return None if value is None else _refs([value], f"{where}: key {key!r}")[0]


def _default_stream(kind: str) -> str:
    """Work queues on the current stream unless the kind does no queued work of its own."""
    queued = KINDS[kind] is not None and kind not in _SYNC_KINDS
    return "current" if queued and kind not in ("stream", "event", "alloc", "pinned-alloc", "pin") else "none"


def _effect_model(entry: Mapping, target: str, where: str) -> Model:
    if "kind" not in entry:
        raise ModelError(f"{where}: missing key 'kind' (or 'namespace'); kinds: {', '.join(KINDS)}")
    kind = _one_of(entry, "kind", tuple(KINDS), None, where)
    framework = _one_of(entry, "framework", FRAMEWORKS, "torch", where)
    stream = entry.get("stream", _default_stream(kind))
    _check_stream(stream, where)
    reads = _refs(entry.get("reads", []), f"{where}: key 'reads'", self_ok=True)
    writes = _refs(entry.get("writes", []), f"{where}: key 'writes'", self_ok=True)
    blocking = entry.get("blocking")
    if blocking is not None and not isinstance(blocking, bool):
        raise ModelError(f"{where}: key 'blocking': expected true or false, got {blocking!r}")
    returns = _one_of(entry, "returns", tuple(RETURNS), "none", where)
    if ("reads" in entry or "writes" in entry) and KINDS[kind] is None:
        raise ModelError(f"{where}: kind 'value' does no device work: it has no 'reads' or 'writes'")
    if "self" in reads + writes and "()." not in target:
        raise ModelError(f"{where}: 'self' names the receiver of a method: write the target as 'pkg.Class().method'")
    return Model(target=target, kind=kind, framework=framework, stream=stream, reads=reads, writes=writes,
                 blocking=blocking, returns=returns, host=_one_ref(entry, "host", where),
                 target_arg=_one_ref(entry, "target-arg", where), source=where)


def _check_stream(spec: Any, where: str) -> None:
    ok = isinstance(spec, str) and (
        spec in ("none", "current", "legacy", "self")
        or _parse_ref(spec.removesuffix("|current")) is not None
    )
    if not ok:
        raise ModelError(f"{where}: key 'stream': expected 'current', 'legacy', 'none', 'self', an argument "
                         f"('arg2', 'arg2:stream', 'stream') or '<argument>|current', got {spec!r}")


def _refs(value: Any, what: str, self_ok: bool = False) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list):
        raise ModelError(f"{what}: expected a list of argument references ('arg0', 'arg1:src', 'dst'), got {value!r}")
    for ref in value:
        if not isinstance(ref, str) or not (_parse_ref(ref) is not None or (self_ok and ref == "self")):
            raise ModelError(f"{what}: {ref!r} is not an argument reference ('arg0', 'arg1:src', a keyword name"
                             + (", or 'self')" if self_ok else ")"))
    return tuple(value)


def load_file(path: Path, where: Optional[str] = None) -> tuple[Model, ...]:
    """Models from a models file (`[[model]]` tables at its top level)."""
    where = where or str(path)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as err:
        raise ModelError(f"{where}: cannot read models file: {err.strerror or err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ModelError(f"{where}: invalid TOML: {err}") from None
    extra = [k for k in data if k != "model"]
    if extra:
        raise ModelError(f"{where}: unknown top-level key {extra[0]!r}; a models file holds [[model]] tables")
    return parse_models(data.get("model", []), f"{where}: model")


# ------------------------------------------------------------------ the registry
_BUILTIN_DIR = Path(__file__).resolve().parent / "api" / "models"


@lru_cache(maxsize=1)
def builtin_models() -> tuple[Model, ...]:
    out: list[Model] = []
    for path in sorted(_BUILTIN_DIR.glob("*.toml")):
        out.extend(load_file(path, f"streamlint's models/{path.name}"))
    return tuple(out)


class Registry:
    """Declared models by target: namespaces, facts, and classes with modelled methods."""

    def __init__(self, models: Sequence[Model]) -> None:
        self.namespaces: dict[str, str] = {}
        self.facts: dict[str, "Fact"] = {}
        self.classes: set[str] = set()
        for model in models:
            if model.namespace is not None:
                self.namespaces[model.target] = model.namespace
            else:
                self.facts[model.target] = model.fact()
            if "()." in model.target:
                self.classes.add(model.target.rsplit("().", 1)[0])
        self.roots = frozenset(t.split(".", 1)[0] for t in (*self.namespaces, *self.facts))


@lru_cache(maxsize=16)
def _registry(project: tuple[Model, ...]) -> Registry:
    return Registry(builtin_models() + project)


_project: tuple[Model, ...] = ()
_per_thread: frozenset = frozenset()
# Frameworks a project can declare switched to the per-thread default stream.
PER_THREAD_FRAMEWORKS = ("cupy", "numba", "cuda-python")


def use(models: Sequence[Model], per_thread: Sequence[str] = ()) -> None:
    """Make a project's models the active ones (the engine calls this per file, from its
    settings; the built-in models are always active), with the frameworks its config
    says run with per-thread default streams (`per-thread-default-stream`)."""
    global _project, _per_thread
    _project = tuple(models)
    _per_thread = frozenset(per_thread)


def per_thread_configured() -> frozenset:
    return _per_thread


def active() -> Registry:
    return _registry(_project)
