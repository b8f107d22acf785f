"""Fixes are verified against every rule, whatever the selection: a fix that would add
a finding of any rule is refused and named, and the file's other fixes are applied."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from conftest import run_cli as run
from conftest import write

from streamlint.checker import analyze
from streamlint.diagnostics import Diagnostic
from streamlint.engine.lint import lint_fix
from streamlint.fixes import Applicability, Edit, Fix
from streamlint.fixes.rounds import FixRounds
from streamlint.fixes.verify import Linted, new_findings, normalised
from streamlint.rules import sl201_missing_non_blocking as sl201
from streamlint.rules._shared import may_be_none_in
from streamlint.settings import Settings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LOADER = textwrap.dedent("""\
    import torch
    from torch.utils.data import DataLoader


    def train(model, dataset):
        loader = DataLoader(dataset, batch_size=256, pin_memory=True)
        for images, labels in loader:
            images = images.to("cuda")
            labels = labels.cuda()
            loss = model(images, labels)
            loss.backward()
    """)


@pytest.fixture
def labels_fix_syncs(monkeypatch):
    """SL201's fix for `labels.cuda()` also inserts a device-wide synchronization in the
    loop: a fix that makes the code worse (SL103), whatever rules are selected."""
    original = sl201._fix

    def worse(builder, node):
        fix = original(builder, node)
        if fix is None or "labels" not in builder.code(node):
            return fix
        extra = builder.insert_before(builder.statement_of(node), ["torch.cuda.synchronize()"])
        return Fix(fix.message, fix.applicability, tuple(sorted((*fix.edits, extra))))

    monkeypatch.setattr(sl201, "_fix", worse)


def test_a_fix_adding_a_finding_of_an_unselected_rule_is_refused_and_the_others_kept(labels_fix_syncs):
    settings = Settings(select=("SL201",))
    outcome = lint_fix(LOADER, "train.py", settings, unsafe=True)
    assert [(d.code, d.row) for d in outcome.applied] == [("SL201", 8)]
    assert 'images.to("cuda", non_blocking=True)' in outcome.source
    assert "synchronize" not in outcome.source and "labels.cuda()" in outcome.source
    [why] = outcome.refused
    assert why.startswith("the fix for SL201 at 9:18 (Pass `non_blocking=True`) would add SL103 at ")
    assert [(d.code, d.row) for d in outcome.remaining] == [("SL201", 9)]  # only the selected rule's


def test_cli_names_the_refused_fix_and_exits_1(labels_fix_syncs, tmp_path, capsys):
    target = write(tmp_path / "train.py", LOADER)
    code, out, err = run(capsys, "check", "--no-cache", "--fix", "--unsafe-fixes", "--select", "SL201", str(target))
    assert code == 1
    assert "All checks passed" not in out
    assert f"{target}: the fix for SL201 at 9:18 (Pass `non_blocking=True`) would add SL103" in err
    assert "that fix was not applied" in err
    assert "non_blocking=True" in target.read_text() and "synchronize" not in target.read_text()


def test_fix_only_exits_1_when_a_fix_is_refused(labels_fix_syncs, tmp_path, capsys):
    target = write(tmp_path / "train.py", LOADER)
    code, _, err = run(capsys, "check", "--no-cache", "--fix-only", "--unsafe-fixes", str(target))
    assert code == 1 and "would add SL103" in err
    code, _, _ = run(capsys, "check", "--no-cache", "--fix-only", "--unsafe-fixes", str(target))
    assert code == 1  # still refused: the finding stays, and so does the warning


def test_diff_exits_1_when_a_fix_is_refused_even_if_nothing_else_changes(labels_fix_syncs, tmp_path, capsys):
    text = LOADER.replace('images.to("cuda")', 'images.to("cuda", non_blocking=True)')
    target = write(tmp_path / "train.py", text)
    code, out, err = run(capsys, "check", "--no-cache", "--diff", "--unsafe-fixes", str(target))
    assert code == 1 and out == ""
    assert "would add SL103" in err
    assert target.read_text() == text


# -- rounds, on a fake checker: "a" is a finding fixed into "b"; two "b" lines in a
# row are a new finding of another rule --------------------------------------------


def _fake_lint(text: str) -> Linted:
    found = []
    lines = text.splitlines()
    for row, line in enumerate(lines, start=1):
        if line == "a":
            fix = Fix("a to b", Applicability.SAFE, (Edit(row, 1, row, 2, "b"),))
            found.append(Diagnostic("f.py", row, 1, "SL101", "an a", row, 2, row, fix=fix))
        if line == "b" and row > 1 and lines[row - 2] == "b":
            found.append(Diagnostic("f.py", row, 1, "SL102", "two b in a row", row, 2, row))
    return Linted(found, found)


def test_fixes_right_alone_but_wrong_together_are_taken_in_order():
    text = "a\na\nc\na\n"
    outcome = FixRounds(_fake_lint, unsafe=False).run(text, _fake_lint(text))
    assert outcome.source == "b\na\nc\nb\n"
    assert [d.row for d in outcome.applied] == [1, 4]
    [why] = outcome.refused
    assert why.startswith("the fix for SL101 at 2:1 (a to b) is right alone but not with the others")


def test_findings_are_matched_by_moved_position_or_by_message_without_line_numbers():
    def diag(row, message, code="SL401"):
        return Diagnostic("f.py", row, 5, code, message, row, 9, row)

    old, new = "x\ny\n", "w\nx\ny\n"
    edits = [Edit(1, 1, 1, 1, "w\n")]
    before = [diag(2, "written at line 1 and read here")]
    moved = [diag(3, "written at line 2 and read here")]
    assert new_findings(old, new, before, [], edits, moved) == []  # the same finding, moved
    elsewhere = [diag(1, "written at line 2 and read here")]
    assert new_findings(old, new, before, [], edits, elsewhere) == []  # placed elsewhere, same message
    other = [diag(3, "written at line 2 and read here", code="SL402")]
    assert new_findings(old, new, before, [], edits, other) == other
    assert normalised("lines 16 and 19, at 3:4") == "lines #, at #"


# -- SL201 offers `non_blocking=True` only where it is right by construction ---------


def _sl201_fixes(source: str) -> dict[int, bool]:
    outcome = lint_fix(textwrap.dedent(source), "t.py", Settings(select=("SL201",)), unsafe=False)
    return {d.row: d.fix is not None for d in outcome.remaining if d.code == "SL201"}


def test_sl201_no_fix_for_a_pinned_source_the_host_refills_on_the_next_call():
    assert _sl201_fixes("""\
        import torch


        class Uploader:
            def __init__(self, n):
                self.gpu = torch.empty(n, device="cuda")
                self.host = torch.empty(n, pin_memory=True)

            def push(self, values):
                self.host.copy_(values)
                self.gpu.copy_(self.host)
                return self.gpu


        def once(n):
            staging = torch.empty(n, pin_memory=True)
            staging.zero_()
            out = torch.empty(n, device="cuda")
            out.copy_(staging)
            return out
        """) == {11: False, 19: True}


def test_sl201_no_fix_for_a_local_pinned_source_refilled_in_its_loop():
    assert _sl201_fixes("""\
        import torch


        def upload_all(chunks, n):
            staging = torch.empty(n, pin_memory=True)
            outs = []
            for chunk in chunks:
                staging.copy_(chunk)
                outs.append(staging.to("cuda"))
            return outs
        """) == {9: False}


def test_sl201_no_fix_on_a_side_stream_nothing_orders_or_from_pageable_memory():
    assert _sl201_fixes("""\
        import torch


        def prefetch(n):
            host_batch = torch.empty(n, pin_memory=True)
            copy_stream = torch.cuda.Stream()
            with torch.cuda.stream(copy_stream):
                next_batch = host_batch.to("cuda")
            return next_batch, copy_stream


        def prefetch_and_wait(n):
            host_batch = torch.empty(n, pin_memory=True)
            copy_stream = torch.cuda.Stream()
            with torch.cuda.stream(copy_stream):
                next_batch = host_batch.to("cuda")
            torch.cuda.current_stream().wait_stream(copy_stream)
            next_batch.record_stream(torch.cuda.current_stream())
            return next_batch


        def pageable(n):
            side = torch.cuda.Stream()
            with torch.cuda.stream(side):
                noise = torch.randn(n).cuda()
            torch.cuda.current_stream().wait_stream(side)
            noise.record_stream(torch.cuda.current_stream())
            return noise
        """) == {8: False, 16: True, 25: False}


# -- SL404 guards a value that may be None -------------------------------------------


def test_sl404_fix_guards_a_value_that_getattr_may_make_none():
    path = FIXTURES / "SL404" / "positive_holder_peer_not_recorded.py"
    outcome = lint_fix(path.read_text(), str(path), Settings(select=("SL404",)), unsafe=True)
    assert outcome.refused == []
    assert ("        if shared_output is not None:\n"
            "            shared_output.record_stream(torch.cuda.current_stream())\n"
            "        output = layer.postprocess(output, shared_output)") in outcome.source
    # `getattr` without a default raises rather than giving None: no guard.
    assert "        logits.record_stream(torch.cuda.current_stream())\n        loss = " in outcome.source


def test_may_be_none_reads_parameters_and_bindings():
    source = textwrap.dedent("""\
        import torch


        def f(a, b=None, c=0, *, d=None):
            e = cache.get("e")
            g = torch.ones(1) if a else None
            h = getattr(a, "h")
            i = next(iter(a), None)
            a.j = None
            return a, b, c, d, e, g, h, i
        """)
    analysis = analyze(source, "t.py")
    function = next(n for n in analysis.module.body if isinstance(n, cst.FunctionDef) and n.name.value == "f")
    maybe = {name for name in "abcdeghi" if may_be_none_in(analysis, function, name)}
    assert maybe == {"b", "d", "e", "g", "i"}
    assert may_be_none_in(analysis, function, "a.j") and not may_be_none_in(analysis, function, "a.k")


def test_a_fix_refused_in_a_later_round_is_named_where_it_is_in_the_file_as_read():
    # Round 1 fixes "a" on line 1 into "z\nc" (a line more); that reveals an "a" on line 3 of
    # the file as read, whose fix (to "b" after a "b") makes two "b" lines in a row.
    def lint(text: str) -> Linted:
        found = []
        lines = text.splitlines()
        for row, line in enumerate(lines, start=1):
            if line == "a" and row == 1:
                fix = Fix("split", Applicability.SAFE, (Edit(1, 1, 1, 2, "z\nc"),))
                found.append(Diagnostic("f.py", 1, 1, "SL101", "first", 1, 2, 1, fix=fix))
            if line == "a" and row > 1:  # fixable once the first line is fixed
                fix = Fix("a to b", Applicability.SAFE, (Edit(row, 1, row, 2, "b"),)) if lines[0] == "z" else None
                found.append(Diagnostic("f.py", row, 1, "SL101", "an a", row, 2, row, fix=fix))
            if line == "b" and row > 1 and lines[row - 2] == "b":
                found.append(Diagnostic("f.py", row, 1, "SL102", "two b in a row", row, 2, row))
        return Linted(found, found)

    text = "a\nb\na\n"
    outcome = FixRounds(lint, unsafe=False).run(text, lint(text))
    assert outcome.source == "z\nc\nb\na\n"
    [why] = outcome.refused
    assert why.startswith("the fix for SL101 at 3:1 (a to b) would add SL102 at 3:1 ")


def test_one_wrong_fix_costs_one_lint_per_fix_and_one_for_the_rest():
    def lint(text: str) -> Linted:
        calls.append(text)
        found = []
        for row, line in enumerate(text.splitlines(), start=1):
            if line in ("a", "x"):  # "x" is fixed into "bad", a finding of another rule
                fix = Fix("fix", Applicability.SAFE, (Edit(row, 1, row, 2, "b" if line == "a" else "bad"),))
                found.append(Diagnostic("f.py", row, 1, "SL101", "an a", row, 2, row, fix=fix))
            if line == "bad":
                found.append(Diagnostic("f.py", row, 1, "SL102", "bad", row, 4, row))
        return Linted(found, found)

    calls: list[str] = []
    text = "a\nc\na\nc\na\nx\n"
    outcome = FixRounds(lint, unsafe=False).run(text, lint(text))
    assert outcome.source == "b\nc\nb\nc\nb\nx\n" and len(outcome.refused) == 1
    # the text as read, all four fixes, each alone, the three right ones together
    assert len(calls) == 1 + 1 + 4 + 1
