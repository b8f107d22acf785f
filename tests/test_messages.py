"""How messages name things: each side of SL101's barrier once, placeholders as prose
(never as code), a result handed to the callers read at the callers' lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from streamlint.config import Settings
from streamlint.engine.lint import lint_text
from streamlint.rules import all_rules
from streamlint.rules._shared import OPERATION_WORDS, api_named, named, sync_idiom, wait_idiom
from streamlint.rules.sl101_default_stream_barrier import _both_ways

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def ops(*labels: str) -> list[str]:
    """The streams as the rule lists them: each once, as code, in order."""
    return list(dict.fromkeys(f"`{label}`" for label in labels))


def lint(relative: str):
    path = FIXTURES / relative
    return lint_text(path.read_text(encoding="utf-8"), str(path), Settings.default(), rules=all_rules())


# ---- SL101: which streams wait for the operation, and which it waits for ----


def test_each_side_is_said_once_and_clearly():
    assert _both_ways(ops("s_in"), ops("s_left", "s_right", "s_left"), "launch") == (
        "`s_left` and `s_right` wait for this launch; it waits for `s_in`"
    )
    assert _both_ways(ops("s_in", "s_in"), ops("s_in", "s_out"), "kernel") == (
        "`s_in` and `s_out` wait for this kernel; it waits for `s_in`"
    )
    assert _both_ways(ops("s1", "s2"), ops("s2", "s1"), "kernel") == (
        "`s1` and `s2` wait for this kernel, and it waits for both"
    )
    assert _both_ways(ops("s0"), ops("s0", "s0"), "memset") == "it and `s0` wait for each other"
    assert _both_ways(ops("a", "b", "c"), ops("c", "b", "a"), "kernel").endswith("it waits for all of them")


def test_sl101_message_on_a_fixture():
    [first, *_] = [d for d in lint("SL101/positive_cupy.py") if d.row == 48]
    assert first.message.endswith(
        "between work on blocking streams: `s_left` and `s_right` wait for this kernel, and it waits for both"
    )


# ---- placeholders are prose ----


def test_placeholders_are_words_and_names_are_code():
    assert named("the returned value") == "the returned value"
    assert named("self.buf") == "`self.buf`"
    assert api_named("arithmetic") == "this arithmetic"
    assert api_named("a comparison") == "this comparison"
    assert api_named("cp.asarray") == "`cp.asarray`"
    assert sync_idiom("the current stream") == "synchronize the current stream"
    assert sync_idiom("s") == "`s.synchronize()`"
    assert not wait_idiom("the current stream", "s", "unknown-framework").startswith("`")


def test_the_operation_words_cover_the_models_labels():
    # A label the model adds for an operation without a call must be said in words.
    import libcst as cst

    from streamlint.model.transfer.torch_calls import _operation_api

    labels = {_operation_api(cst.parse_expression(text), "torch") for text in ("a * 2", "-a", "a < b")}
    assert labels <= OPERATION_WORDS
    assert "in-place arithmetic" in OPERATION_WORDS  # (transfer/statements.py, `a += b`)


_FINDING_OR_HELP = re.compile(r"^(\S+:\d+:\d+: SL\d{3} .*|\s+= help: .*)$", re.M)
_SAME_TWICE = re.compile(r"(`[^`]+`) and \1")
_WORDS_AS_CODE = re.compile(r"`(the [^`]*|" + "|".join(map(re.escape, sorted(OPERATION_WORDS))) + r")`")


def test_no_snapshot_renders_a_placeholder_as_code_or_names_a_stream_twice_in_a_row():
    bad = []
    for snapshot in sorted(FIXTURES.rglob("*.expected")):
        for line in _FINDING_OR_HELP.findall(snapshot.read_text(encoding="utf-8")):
            if _WORDS_AS_CODE.search(line) or _SAME_TWICE.search(line):
                bad.append(f"{snapshot.relative_to(ROOT)}: {line.strip()}")
    assert not bad, "\n".join(bad)


# ---- a result handed to the callers ----


def test_a_result_handed_out_is_read_at_the_callers_lines():
    # No caller reads `pf.next()`'s result (lines 16 and 19 only bind it) and the loop's sync completes
    # each copy: no SL401 (docs/v3-expected-corrections.md, below its table; docs/v3-switch-diff.md row 8)
    fixture = FIXTURES / "SL103/positive_helper_call_sites_regression.py"
    assert not [d for d in lint("SL103/positive_helper_call_sites_regression.py") if d.code == "SL401"]
    # Both callers read it at once, before any wait: one finding at the return, naming their lines
    reading = fixture.read_text(encoding="utf-8").replace("x = pf.next()", "x = pf.next() * 2")
    found = lint_text(reading, "call_sites.py", Settings.default(), rules=all_rules())
    [sl401] = [d for d in found if d.code == "SL401"]
    assert sl401.row == 11 and sl401.message == (
        "the returned value is written on `self.stream` at line 11 and handed to the callers of `next()`, "
        "which read it on their current stream (lines 16 and 19) with no wait in between"
    )
    assert " here" not in sl401.message
    assert sl401.help.endswith("in the callers, before they use the result")
    # One caller waits for the copy stream first: each unwaited read stays its caller's
    waited = reading.replace("    x = pf.next() * 2\n    for", "    x = pf.next()\n    torch.cuda.current_stream().wait_stream(pf.stream)\n    x = x * 2\n    for")
    assert waited != reading
    found = lint_text(waited, "call_sites.py", Settings.default(), rules=all_rules())
    assert [d.row for d in found if d.code == "SL401"] == [21]
    [prefetch] = [d for d in lint("SL401/positive_prefetcher_no_wait.py") if d.code == "SL401"][:1]
    assert "which read it on their current stream (lines 34 and 40)" in prefetch.message


LOADER = '''\
import torch


class Loader:
    def __init__(self, batches):
        self.batches, self.stream = iter(batches), torch.cuda.Stream()

    def fetch(self):
        with torch.cuda.stream(self.stream):
            return next(self.batches).cuda(non_blocking=True)


def train(batches, other):
    loader = Loader(batches)
    x = loader.fetch()
    y = other.fetch()
    return x + y
'''


def test_the_callers_are_calls_on_instances_of_the_class_only():
    # `other.fetch()` (line 16) calls some other object's fetch: not a caller of Loader.fetch.
    found = lint_text(LOADER, "loader.py", Settings.default(), rules=all_rules())
    [handed] = [d for d in found if d.code == "SL401" and d.row == 10]
    assert handed.message.endswith(
        "handed to the callers of `fetch()`, which read it on their current stream (line 15) with no wait in between"
    )


def test_a_property_is_read_not_called_and_sl404_names_no_line_here():
    # (`flat_grads.norm(p=2)` on line 14 is no read of the property `norm`)
    [sl404] = [d for d in lint("SL404/positive_side_stream_never_waits_before_allocation.py") if d.code == "SL404"]
    assert "handed to the readers of the property `norm`, which use it on their current stream" in sl404.message
    assert " here" not in sl404.message and "line 14)" in sl404.message and "(line 14," not in sl404.message


BLOCKING_IN_A_NEW_STREAM = '''\
import cupy


def warm_up(a):
    with cupy.cuda.Stream(non_blocking=True):
        cupy.asnumpy(cupy.sqrt(a))
    return cupy.sqrt(a) + 1
'''


def test_sl202_names_streams_without_a_name_in_words():
    # a stream bound to no name and the legacy default stream are placeholders: prose, never code
    [sl202] = [d for d in lint_text(BLOCKING_IN_A_NEW_STREAM, "warm.py", Settings.default(), rules=all_rules())
               if d.code == "SL202"]
    assert "until a stream made here has drained" in sl202.message
    assert "on the default stream cannot overlap it" in sl202.message and "`" not in sl202.message.split(" blocks ")[1]
