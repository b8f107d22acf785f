"""JUnit XML, as ruff writes it: one test suite per file, one failed test case per
finding, so CI systems that read test reports (Jenkins, GitLab, Azure) list findings.
A clean run is one passing case, so that the report is never empty."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from itertools import groupby
from typing import Sequence, TextIO

from streamlint.diagnostics import Diagnostic
from streamlint.output.advice import with_help
from streamlint.output.options import Options
from streamlint.output.paths import display_path

# Characters XML 1.0 cannot hold even escaped (control characters, lone surrogates);
# a message quoting hostile source text must still give a well-formed report.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def build(diagnostics: Sequence[Diagnostic]) -> ET.Element:
    count = str(len(diagnostics))
    root = ET.Element("testsuites", name="streamlint", tests=count, failures=count, errors="0")
    if not diagnostics:
        suite = ET.SubElement(root, "testsuite", name="streamlint", tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="No errors found")
        root.set("tests", "1")
        return root
    for filename, group in groupby(diagnostics, key=lambda d: display_path(d.filename)):
        found = list(group)
        suite = ET.SubElement(
            root, "testsuite", name=_clean(filename), tests=str(len(found)),
            disabled="0", errors="0", failures=str(len(found)), package="org.streamlint",
        )  # fmt: skip
        for diag in found:
            case = ET.SubElement(
                suite, "testcase", name=f"org.streamlint.{diag.code}",
                classname=_clean(_classname(filename)), line=str(diag.row), column=str(diag.column),
            )  # fmt: skip
            where = f"cell {diag.cell}, " if diag.cell is not None else ""
            # The help in both: some CI pages show the attribute, others the text.
            failure = ET.SubElement(case, "failure", message=_clean(with_help(diag.message, diag, "; ")))
            failure.text = _clean(with_help(f"{where}line {diag.row}, col {diag.column}, {diag.message}", diag))
    return root


def _classname(filename: str) -> str:
    """`pkg/mod.py` -> `pkg.mod`, as ruff names the class of a test case."""
    stem = filename[:-3] if filename.endswith(".py") else filename
    return stem.replace("\\", "/").replace("/", ".")


def render(diagnostics: Sequence[Diagnostic], out: TextIO, options: Options) -> None:
    tree = ET.ElementTree(build(diagnostics))
    ET.indent(tree)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    tree.write(out, encoding="unicode")
    out.write("\n")
