"""Suppression comments: noqa, streamlint: ignore[...], streamlint: ignore-file[...]."""

from __future__ import annotations

import pytest
from conftest import SL501_SNIPPET

from streamlint.config import Settings
from streamlint.engine.lint import lint_text
from streamlint.suppression import comments as suppression


def codes(text: str) -> list[tuple[int, str]]:
    return [(d.row, d.code) for d in lint_text(text, "t.py", Settings.default())]


@pytest.mark.usefixtures("fake_engine")
class TestLineSuppression:
    def test_unsuppressed_baseline(self):
        assert codes("import torch.cuda\nhit(SL101)\n") == [(2, "SL101")]

    @pytest.mark.parametrize(
        "comment",
        [
            "# noqa: SL101",
            "# noqa:SL101",
            "# NOQA: SL101",
            "# noqa: SL202, SL101",
            "# noqa: SL202 SL101",
            "# noqa",
            "# streamlint: ignore[SL101]",
            "# streamlint: ignore[SL502,SL101]",
            "# streamlint: ignore[SL1]",
            "# streamlint: ignore",
            "# type: ignore  # noqa: SL101",
        ],
    )
    def test_suppressed(self, comment):
        assert codes(f"import torch.cuda\nhit(SL101)  {comment}\n") == []

    @pytest.mark.parametrize(
        "comment",
        [
            "# noqa: SL202",
            "# noqa: E501",
            "# noqa: sl101",  # as in ruff: not a list of codes (SL900 says so)
            "# noqa: SL202, sl101",
            "# streamlint: ignore[SL5]",
            "# streamlint: ignore[SL102]",
            "# a comment that mentions noqa-like words",
        ],
    )
    def test_not_suppressed(self, comment):
        assert codes(f"import torch.cuda\nhit(SL101)  {comment}\n") == [(2, "SL101")]

    def test_only_the_named_code_is_suppressed(self):
        text = "import torch.cuda\nhit(SL101) hit(SL502)  # noqa: SL502\n"
        assert codes(text) == [(2, "SL101")]

    def test_comment_on_another_line_does_not_count(self):
        text = "import torch\n# noqa: SL101\nhit(SL101)\n"
        assert codes(text) == [(3, "SL101")]

    def test_comment_lookalike_in_string_does_not_count(self):
        text = 'import torch\nhit(SL101); s = "# noqa: SL101"\n'
        assert codes(text) == [(2, "SL101")]
        text = "import torch.cuda\nhit(SL101); s = '# streamlint: ignore[SL101]'\n"
        assert codes(text) == [(2, "SL101")]

    def test_comment_on_last_line_of_multiline_statement(self):
        # The finding starts on row 2 and its statement ends on row 4.
        text = "import torch\nx = f(hit(SL101),\n      1,\n      2)  # noqa: SL101\ny = 1\n"
        assert codes(text) == []
        # ...but not on the line after the statement.
        text = "import torch\nx = f(hit(SL101),\n      2)\ny = 1  # noqa: SL101\n"
        assert codes(text) == [(2, "SL101")]

    def test_comment_at_end_of_multiline_finding(self):
        text = "import torch\nx = (hit(SL101+1)\n     )  # streamlint: ignore[SL101]\n"
        assert codes(text) == []


@pytest.mark.usefixtures("fake_engine")
class TestFileSuppression:
    def test_ignore_file_prefix(self):
        text = "# streamlint: ignore-file[SL1]\nimport torch\nhit(SL101)\nhit(SL102)\nhit(SL501)\n"
        assert codes(text) == [(5, "SL501")]

    def test_ignore_file_all(self):
        text = "#!/usr/bin/env python\n# streamlint: ignore-file\nimport torch\nhit(SL101)\n"
        assert codes(text) == []

    def test_ignore_file_several(self):
        text = (
            "# streamlint: ignore-file[SL101, SL5]\n"
            "import torch\nhit(SL101)\nhit(SL501)\nhit(SL202)\n"
        )
        assert codes(text) == [(5, "SL202")]

    def test_ignore_file_works_anywhere_on_a_line_of_its_own(self):
        # ruff's rule for `# ruff: noqa`: after the docstring, the imports, even the code.
        text = "import torch\n# streamlint: ignore-file[SL1]\nhit(SL101)\n"
        assert codes(text) == []
        text = '"""A module."""\n# streamlint: ignore-file[SL101]\nimport torch\nhit(SL101)\n'
        assert codes(text) == []
        assert codes("import torch\nhit(SL101)\n    # streamlint: ignore-file\n") == []

    def test_ignore_file_after_code_on_its_line_suppresses_nothing(self):
        text = "import torch  # streamlint: ignore-file[SL1]\nhit(SL101)\n"
        assert codes(text) == [(2, "SL101")]

    def test_ignore_file_after_blank_lines_and_comments(self):
        text = "# header\n\n# streamlint: ignore-file[SL101]\n\nimport torch\nhit(SL101)\n"
        assert codes(text) == []

    def test_source_errors_are_never_suppressed(self):
        text = "# streamlint: ignore-file\nimport torch\nsyntax_error!  # noqa\n"
        assert codes(text) == [(3, "SL000")]


def test_parse_without_markers_is_empty():
    found = suppression.parse("x = 1\n")
    assert found.lines == {} and found.file == frozenset()


def test_parse_survives_tokenize_errors():
    # An unterminated bracket makes tokenize fail at the end; earlier comments still count.
    found = suppression.parse("x = 1  # noqa: SL101\ny = (\n")
    assert found.lines == {1: frozenset({"SL101"})}


def test_parse_records_codes_and_file_scope():
    found = suppression.parse(
        "# streamlint: ignore-file[SL4]\nx = 1  # noqa: SL101,SL202\ny = 2  # noqa\n"
    )
    assert found.file == frozenset({"SL4"})
    assert found.lines == {2: frozenset({"SL101", "SL202"}), 3: None}


def test_real_rule_noqa():
    # End to end with the real SL501 (needs the stream model).
    stream = "s = torch.cuda.Stream()"
    flagged = SL501_SNIPPET.replace(stream, stream + "  # noqa: SL501")
    assert [d.code for d in lint_text(SL501_SNIPPET, "t.py", Settings.default())] == ["SL501"]
    assert lint_text(flagged, "t.py", Settings.default()) == []
