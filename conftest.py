"""Root conftest: with a marker expression that deselects `slow` (the inner loop,
`python -m pytest -m "not slow"`), modules marked slow as a whole are not even
imported, so that the loop does not pay for their imports (hypothesis, pygls, ...)."""

from __future__ import annotations

from pathlib import Path

MODULE_MARK = "pytestmark = pytest.mark.slow"


def _deselects_slow(markexpr: str) -> bool:
    """Whether `markexpr` deselects a test whose only marker is `slow`."""
    try:
        from _pytest.mark.expression import Expression  # lazy: pytest's own parser, only when -m is given
    except ImportError:  # pragma: no cover - another pytest: collect everything
        return False
    try:
        matches = Expression.compile(markexpr).evaluate(lambda name, **_: name == "slow")
    except Exception:  # an expression this version cannot read: collect everything
        return False
    return not matches


def pytest_ignore_collect(collection_path: Path, config) -> bool | None:
    markexpr = config.getoption("markexpr", "")
    if not markexpr or collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    if not _deselects_slow(markexpr):
        return None
    try:
        text = collection_path.read_text(encoding="utf-8")
    except OSError:
        return None
    return True if f"\n{MODULE_MARK}" in text else None


def pytest_configure(config) -> None:
    """The inner loop spreads its tests with xdist's `load` scheduling: its many short tests run
    in 25 s that way against 32 s with `worksteal` (measured on 2 idle cores), while the full
    suite, whose slow tests vary in length, is faster with `worksteal` (the default in
    pyproject.toml). A `--dist` given on the command line is kept."""
    explicit = any(str(a).startswith("--dist") for a in config.invocation_params.args)
    markexpr = config.getoption("markexpr", "")
    if not explicit and markexpr and _deselects_slow(markexpr) and getattr(config.option, "dist", None) == "worksteal":
        config.option.dist = "load"
