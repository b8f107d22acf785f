"""A cached hash for the domain's frozen records: paths, roots and stream references are
hashed again and again (set membership in the clocks, dict keys in the state), and the hash
dataclasses generate rebuilds a tuple of every field, enums included, on each call."""

from __future__ import annotations

from dataclasses import fields


def cached_hash(cls: type) -> type:
    """The same value as the dataclass's own `__hash__`, computed once per instance. Not
    pickled: another process may hash strings differently."""
    names = tuple(f.name for f in fields(cls) if f.compare and (f.hash is None or f.hash))

    def __hash__(self) -> int:
        try:
            return self.__dict__["_hash"]
        except KeyError:
            value = hash(tuple(getattr(self, name) for name in names))
            self.__dict__["_hash"] = value
            return value

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_hash", None)
        return state

    cls.__hash__ = __hash__  # type: ignore[method-assign]
    cls.__getstate__ = __getstate__  # type: ignore[attr-defined]
    return cls
