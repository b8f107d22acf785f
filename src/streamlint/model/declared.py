"""Declared API models: what a wrapper the analysis cannot see does, said in TOML (the README's format; the user's
tables are checked by the config layer, declared_toml.py)."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Sequence

if TYPE_CHECKING:
    from streamlint.model.api.facts import Arg, Fact

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
_NAMED_STREAMS = ("none", "current", "legacy", "self")  # (the Stream kinds a model names as they are spelled)
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


def _name(spelled: str) -> bool:
    """An ASCII Python name (the models' targets and argument names)."""
    return spelled.isascii() and spelled.isidentifier()


def parse_ref(ref: str) -> Optional[tuple[Optional[int], Optional[str]]]:
    """`argN`, `argN:name` or `name` as (position, keyword); None when it is none of these."""
    head, colon, keyword = ref.partition(":")
    digits = head[3:]
    if head.startswith("arg") and digits.isascii() and digits.isdigit() and (not colon or _name(keyword)):
        return int(digits), keyword or None
    return (None, ref) if not colon and _name(ref) else None


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
        from streamlint.model.api.facts import Block, Fact, Stream
        from streamlint.model.api.op_kinds import OpKind

        fw = self.framework
        kind_name = KINDS[self.kind or "value"]
        kind = OpKind[kind_name] if kind_name else None
        stream_mode, stream_arg = Stream(self.stream) if self.stream in _NAMED_STREAMS else None, None
        if stream_mode is None:  # an argument's stream, or `<arg>|current`: that argument's, else the current one
            stream_mode = Stream.ARG_OR_CURRENT if self.stream.endswith("|current") else Stream.ARG
            stream_arg = _arg(self.stream.removesuffix("|current"))
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

    parsed = parse_ref(ref)
    assert parsed is not None  # checked when loaded
    return Arg(*parsed)


def default_stream(kind: str) -> str:
    """Work queues on the current stream unless the kind does no queued work of its own."""
    queued = KINDS[kind] is not None and kind not in _SYNC_KINDS
    return "current" if queued and kind not in ("stream", "event", "alloc", "pinned-alloc", "pin") else "none"


def from_table(entry: Mapping[str, Any], where: str) -> Model:
    """A model from its TOML table (one the config layer checked, or one of streamlint's own)."""
    fields = {key.replace("-", "_"): value for key, value in entry.items() if key != "doc"}
    if "kind" in fields:
        fields.setdefault("stream", default_stream(fields["kind"]))
    return Model(**{**fields, "reads": tuple(fields.get("reads", ())), "writes": tuple(fields.get("writes", ()))},
                 source=where)


# ------------------------------------------------------------------ the registry
_BUILTIN_DIR = Path(__file__).resolve().parent / "api" / "models"


@lru_cache(maxsize=1)
def builtin_models() -> tuple[Model, ...]:
    """streamlint's own models (tests/test_declared_models.py checks them as the config layer does)."""
    out: list[Model] = []
    for path in sorted(_BUILTIN_DIR.glob("*.toml")):
        with open(path, "rb") as fh:
            entries = tomllib.load(fh)["model"]
        out.extend(from_table(e, f"streamlint's models/{path.name}: model[{i}] (target {e['target']!r})")
                   for i, e in enumerate(entries))
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
_assumed_device = ""
# Frameworks a project can declare switched to the per-thread default stream.
PER_THREAD_FRAMEWORKS = ("cupy", "numba", "cuda-python")
# Devices a project can declare for the tensors whose device its code never shows (`assume-device`).
ASSUMABLE_DEVICES = ("cuda",)


def use(models: Sequence[Model], per_thread: Sequence[str] = (), assume_device: Optional[str] = None) -> None:
    """A project's models (beside the built-in ones), per-thread frameworks and assumed device made active, per file."""
    global _project, _per_thread, _assumed_device
    _project = tuple(models)
    _per_thread = frozenset(per_thread)
    _assumed_device = assume_device or ""


@contextmanager
def using(models: Sequence[Model], per_thread: Sequence[str] = (), assume_device: Optional[str] = None) -> Iterator[None]:
    """`use` for one file's analysis, then what was active before: a project's settings never outlive its files (a
    later analysis in the same process, of another project, sees its own)."""
    before = (_project, _per_thread, _assumed_device)
    use(models, per_thread, assume_device)
    try:
        yield
    finally:
        use(before[0], tuple(before[1]), before[2])


def per_thread_configured() -> frozenset:
    return _per_thread


def assumed_device() -> str:
    """The device of a tensor whose device the code never shows, as the project declares it ("": not told)."""
    return _assumed_device


def active() -> Registry:
    return _registry(_project)
