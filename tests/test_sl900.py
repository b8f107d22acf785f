"""SL900 unused-suppression: what is reported, what is left alone, and its fix."""

from __future__ import annotations

import pytest
from conftest import FAKE_RULES, SL501_SNIPPET

from streamlint.config import Settings
from streamlint.engine.lint import lint_text
from streamlint.fixes.apply import apply_edits
from streamlint.fixes.model import Applicability, Edit
from streamlint.rules.sl900_unused_suppression import UnusedSuppression
from streamlint.selection import RuleSelection


@pytest.fixture
def engine_with_sl900(fake_engine, monkeypatch):
    """The fake rules (hit(SL101) markers) plus the real SL900."""
    import streamlint.rules

    rules = (*FAKE_RULES, UnusedSuppression)
    monkeypatch.setattr(streamlint.rules, "all_rules", lambda: rules)
    return rules


def lint(text: str, **settings):
    return lint_text(text, "t.py", Settings(**settings))


def found(text: str, **settings) -> list[tuple[int, str]]:
    return [(d.row, d.code) for d in lint(text, **settings)]


def fixed(text: str) -> str:
    diags = [d for d in lint(text) if d.code == "SL900"]
    assert diags, "expected an SL900 finding"
    return apply_edits(text, [e for d in diags for e in d.fix.edits])


@pytest.mark.usefixtures("engine_with_sl900")
class TestReported:
    def test_stale_code(self):
        assert found("import torch\nx = 1  # noqa: SL101\n") == [(2, "SL900")]

    def test_used_code_is_not_reported(self):
        assert found("import torch\nhit(SL101)  # noqa: SL101\n") == []

    def test_only_the_unused_code_of_a_list(self):
        diags = lint("import torch\nhit(SL101)  # noqa: SL101, SL202\n")
        assert [(d.row, d.column, d.end_column, d.code) for d in diags] == [(2, 13, 33, "SL900")]
        assert "SL202" in diags[0].message and "SL101" not in diags[0].message

    def test_stale_streamlint_ignore_and_bare_ignore(self):
        text = "import torch\nx = 1  # streamlint: ignore[SL5]\ny = 2  # streamlint: ignore\n"
        assert found(text) == [(2, "SL900"), (3, "SL900")]

    def test_stale_ignore_file(self):
        text = "# streamlint: ignore-file[SL3]\nimport torch\nhit(SL101)\n"
        assert found(text) == [(1, "SL900"), (3, "SL101")]

    def test_comment_on_last_line_of_a_statement_is_used(self):
        text = "import torch\nx = f(hit(SL101),\n      2)  # noqa: SL101\n"
        assert found(text) == []

    def test_a_finding_hidden_twice_uses_both_comments(self):
        text = "# streamlint: ignore-file[SL101]\nimport torch\nhit(SL101)  # noqa: SL101\n"
        assert found(text) == []

    def test_prefix_reported_only_when_all_its_rules_ran(self):
        text = "import torch\nx = 1  # noqa: SL1\n"
        assert found(text) == [(2, "SL900")]
        assert found(text, ignore=("SL102",)) == []  # SL102 might have needed it


@pytest.mark.usefixtures("engine_with_sl900")
class TestLeftAlone:
    @pytest.mark.parametrize(
        "comment",
        [
            "# noqa",  # silences other tools too
            "# noqa: E501, F401",  # other tools' codes
            "# noqa: SL777",  # no such streamlint rule
            "# noqa: SL202, SL900",  # kept on purpose
            "# streamlint: ignore[SL9]",
            "# streamlint: ignore[ALL]",
            "# type: ignore",
        ],
    )
    def test_not_reported(self, comment):
        assert found(f"import torch\nx = 1  {comment}\n") == []

    def test_disabled_rule_is_not_judged(self):
        text = "import torch\nx = 1  # noqa: SL202\n"
        assert found(text, ignore=("SL202",)) == []
        assert found(text, per_file_ignores=(("t.py", ("SL2",)),)) == []

    def test_sl900_itself_can_be_switched_off(self):
        text = "import torch\nx = 1  # noqa: SL202\n"
        assert found(text, ignore=("SL900",)) == []
        assert found(text, select=("SL1",)) == []
        assert found("# streamlint: ignore-file[SL900]\n" + text) == []

    def test_not_when_the_file_has_a_source_error(self):
        assert found("import torch\nsyntax_error!  # noqa: SL202\n") == [(2, "SL000")]

    def test_comment_lookalikes_in_strings(self):
        assert found('import torch\ns = "# noqa: SL202"\n') == []


@pytest.mark.usefixtures("engine_with_sl900")
class TestFix:
    @pytest.mark.parametrize(
        "before, after",
        [
            ("hit(SL101)  # noqa: SL101, SL202\n", "hit(SL101)  # noqa: SL101\n"),
            ("hit(SL101)  # noqa: SL202,SL101\n", "hit(SL101)  # noqa: SL101\n"),
            ("x = 1  # noqa: E501, SL202\n", "x = 1  # noqa: E501\n"),
            ("x = 1  # noqa: SL202\n", "x = 1\n"),
            ("x = 1  # noqa: SL202, SL5\n", "x = 1\n"),
            ("x = 1  # type: ignore  # noqa: SL202\n", "x = 1  # type: ignore\n"),
            ("x = 1  # noqa: SL202  # keep this\n", "x = 1  # keep this\n"),
            ("x = 1  # noqa: SL202 (old workaround)\n", "x = 1  # (old workaround)\n"),
            ("hit(SL101)  # streamlint: ignore[SL101, SL5]\n",
             "hit(SL101)  # streamlint: ignore[SL101]\n"),
            ("x = 1  # streamlint: ignore\n", "x = 1\n"),
            ("x = 1\n# streamlint: ignore[SL202]\ny = 2\n", "x = 1\ny = 2\n"),
            ("x = 1\r\ny = 2  # noqa: SL202\r\nz = 3\r\n", "x = 1\r\ny = 2\r\nz = 3\r\n"),
            ("x = 1\n# noqa: SL202", "x = 1\n"),
            ("x = 'é'  # noqa: SL202\n", "x = 'é'\n"),
        ],
    )  # fmt: skip
    def test_edits(self, before, after):
        text = "import torch\n" + before
        assert fixed(text) == "import torch\n" + after

    def test_file_directive_line_is_removed(self):
        text = "# streamlint: ignore-file[SL3]\nimport torch\nhit(SL101)\n"
        assert fixed(text) == "import torch\nhit(SL101)\n"

    def test_fix_is_safe_and_removes_the_finding(self):
        text = "import torch\nhit(SL101)  # noqa: SL101, SL202\ny = 2  # noqa: SL5\n"
        diags = [d for d in lint(text) if d.code == "SL900"]
        assert {d.fix.applicability for d in diags} == {Applicability.SAFE}
        assert all(isinstance(e, Edit) for d in diags for e in d.fix.edits)
        assert lint(fixed(text)) == []


def test_real_rules_stale_and_used_noqa():
    # With the real rules and stream model: SL501 fires on row 3 of the snippet.
    stream = "s = torch.cuda.Stream()"
    used = SL501_SNIPPET.replace(stream, stream + "  # noqa: SL501")
    assert lint_text(used, "t.py", Settings.default()) == []
    stale = used.replace("for i in range(30):\n", "")  # no loop: no SL501
    stale = stale.replace("\n    ", "\n")
    diags = lint_text(stale, "t.py", Settings.default())
    assert [(d.row, d.code) for d in diags] == [(2, "SL900")]
    assert apply_edits(stale, diags[0].fix.edits) == stale.replace("  # noqa: SL501", "")


def test_sl900_runs_only_when_selected():
    text = "import torch\nx = 1  # noqa: SL501\n"
    layer = RuleSelection(select=("SL5",))
    assert lint_text(text, "t.py", Settings(overrides=(layer,))) == []
    assert [d.code for d in lint_text(text, "t.py", Settings.default())] == ["SL900"]


def test_cli_fix_removes_stale_suppressions(tmp_path, capsys):
    from conftest import PINNED_SNIPPET, run_cli

    stale = PINNED_SNIPPET.replace("import torch\n", "import torch  # noqa: F401, SL103\n")
    path = tmp_path / "copies.py"
    path.write_text(stale)
    code, out, _ = run_cli(capsys, "--fix", str(path))
    assert code == 1 and "SL201" in out and "SL900" not in out  # SL201's fix is unsafe
    assert path.read_text() == PINNED_SNIPPET.replace("import torch\n", "import torch  # noqa: F401\n")


@pytest.mark.usefixtures("engine_with_sl900")
class TestWrittenWrong:
    """As ruff warns about them: a lower-case noqa code, a file's directive after code."""

    def test_lower_case_noqa_code_suppresses_nothing_and_is_reported(self):
        diags = lint("import torch\nhit(SL101)  # noqa: sl101\n")
        assert [(d.row, d.code) for d in diags] == [(2, "SL101"), (2, "SL900")]
        assert diags[1].message == "`# noqa: sl101` suppresses nothing: codes are upper case; write `# noqa: SL101`"
        assert diags[1].fix.applicability is Applicability.UNSAFE  # it starts suppressing

    def test_another_tools_lower_case_code_is_not_ours_to_report(self):
        assert found("import torch\nhit(SL101)  # noqa: e501\n") == [(2, "SL101")]

    def test_lower_case_fix_writes_upper_case(self):
        text = "import torch\nhit(SL101)  # noqa: sl101\n"
        assert fixed(text) == "import torch\nhit(SL101)  # noqa: SL101\n"

    def test_ignore_file_after_code_is_reported(self):
        diags = lint("import torch  # streamlint: ignore-file[SL1]\nhit(SL101)\n")
        assert [(d.row, d.code) for d in diags] == [(1, "SL900"), (2, "SL101")]
        assert "after code suppresses nothing: put it on a line of its own" in diags[0].message

    def test_ignore_file_after_a_docstring_is_used(self):
        assert found('"""Doc."""\n# streamlint: ignore-file[SL101]\nimport torch\nhit(SL101)\n') == []
