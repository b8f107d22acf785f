"""SARIF 2.1.0 output for code-scanning tools (GitHub code scanning among them).

The rule table lists every rule, not only those found, with descriptions and help taken
from the rule's own docs: the text `streamlint rule CODE` prints.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Sequence, TextIO
from urllib.parse import quote

from streamlint import __version__
from streamlint import rules as registry
from streamlint.diagnostics import DOCS_URL, Diagnostic
from streamlint.output.options import Options
from streamlint.selection import SOURCE_ERROR, SOURCE_ERROR_NAME

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/streamlint/streamlint"
_SOURCE_ERROR_TEXT = (
    "The file could not be read, decoded or parsed, or the analysis failed on it. "
    "Nothing else is reported for such a file."
)


def rule_descriptors() -> list[dict[str, Any]]:
    out = [
        {
            "id": SOURCE_ERROR,
            "name": SOURCE_ERROR_NAME,
            "shortDescription": {"text": "File could not be read, decoded or parsed"},
            "fullDescription": {"text": _SOURCE_ERROR_TEXT},
            "help": {"text": _SOURCE_ERROR_TEXT, "markdown": _SOURCE_ERROR_TEXT},
            "defaultConfiguration": {"level": "error"},
        }
    ]
    for rule in registry.all_rules():
        docs = rule.docs()
        out.append(
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": section(docs, "What it does") or rule.summary},
                "help": {"text": docs or rule.summary, "markdown": docs or rule.summary},
                "helpUri": DOCS_URL.format(code=rule.code),
                "defaultConfiguration": {"level": "error"},
            }
        )
    return out


def section(markdown: str, title: str) -> str:
    """The body of one `## title` section of a rule's docs."""
    match = re.search(rf"^##\s*{re.escape(title)}\s*$(.*?)(?=^##\s|\Z)", markdown, re.M | re.S)
    return match.group(1).strip() if match else ""


def artifact_location(filename: str) -> dict[str, Any]:
    path = Path(filename)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    return {"uri": quote(path.as_posix()), "uriBaseId": "%SRCROOT%"}


def to_result(diag: Diagnostic, index: dict[str, int]) -> dict[str, Any]:
    text = diag.message
    properties: dict[str, Any] = {}
    if diag.cell is not None:
        # The region counts rows within the cell (as the text and JSON formats do),
        # not lines of the .ipynb file; the cell is named in the message, for viewers,
        # and in the properties, for tools.
        text += f" (cell {diag.cell})"
        properties["cell"] = diag.cell
    if diag.help:
        # SARIF results have no help of their own (rules do): viewers show the message,
        # so the advice goes there on a line of its own, and in the properties for tools.
        text += f"\nhelp: {diag.help}"
        properties["help"] = diag.help
    result: dict[str, Any] = {
        "ruleId": diag.code,
        "level": "error",
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": artifact_location(diag.filename),
                    "region": {
                        "startLine": diag.row,
                        "startColumn": diag.column,
                        "endLine": diag.end_row,
                        "endColumn": diag.end_column,
                    },
                }
            }
        ],
    }
    if properties:
        result["properties"] = properties
    if diag.code in index:
        result["ruleIndex"] = index[diag.code]
    return result


def build(diagnostics: Sequence[Diagnostic]) -> dict[str, Any]:
    rules = rule_descriptors()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    root = Path(os.getcwd()).as_uri().rstrip("/") + "/"
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "streamlint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root}},
                "results": [to_result(d, index) for d in diagnostics],
            }
        ],
    }


def write(diagnostics: Sequence[Diagnostic], out: TextIO) -> None:
    json.dump(build(diagnostics), out, indent=2, ensure_ascii=False)
    out.write("\n")


def render(diagnostics: Sequence[Diagnostic], out: TextIO, options: Options) -> None:
    write(diagnostics, out)
