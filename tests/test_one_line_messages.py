"""A message and its help are one line each, whatever code they quote: code written over lines is joined."""

from streamlint.diagnostics import Diagnostic, one_line


def test_code_written_over_lines_is_joined():
    assert one_line("`(\n    a - b[c]\n).cpu` copies") == "`(a - b[c]).cpu` copies"
    assert one_line("`f(\n    x,\n    y\n)` here") == "`f(x, y)` here"
    assert one_line("no breaks (kept as is )") == "no breaks (kept as is )"


def test_a_diagnostic_is_made_one_line():
    diagnostic = Diagnostic("a.py", 1, 1, "SL502", "`(\n  x\n).item` waits", 1, 2, 1, help="use `g(\n  y)`")
    assert diagnostic.message == "`(x).item` waits" and diagnostic.help == "use `g(y)`"
