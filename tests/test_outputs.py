"""Output formats: text, JSON (ruff's fields), SARIF 2.1.0, GitHub annotations."""

from __future__ import annotations

import io
import json

import jsonschema
import pytest

from streamlint import rules as registry
from streamlint.diagnostics import Diagnostic
from streamlint.output import github, sarif, write

D1 = Diagnostic(
    "src/a.py", 3, 9, "SL501", "stream created in a loop", 3, 28, 3, "stream-created-in-hot-path"
)
D2 = Diagnostic("src/b.py", 1, 1, "SL000", "SyntaxError: bad, very: bad", 1, 1, 1, "")
D3 = Diagnostic("src/a.py", 9, 1, "SL102", "host array", 9, 22, 9, "implicit-kernel-transfer")
DIAGS = sorted([D1, D2, D3])


def render(fmt: str, diags=DIAGS, **options) -> str:
    out = io.StringIO()
    write(fmt, diags, out, **options)
    return out.getvalue()


# A hand-written subset of the SARIF 2.1.0 schema: the parts code-scanning tools need.
SARIF_SUBSET = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {"$ref": "#/definitions/run"}},
    },
    "definitions": {
        "message": {
            "type": "object",
            "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
            "properties": {"text": {"type": "string"}, "markdown": {"type": "string"}},
        },
        "multiformatMessageString": {
            "type": "object",
            "required": ["text"],
            "properties": {"text": {"type": "string"}, "markdown": {"type": "string"}},
        },
        "run": {
            "type": "object",
            "required": ["tool"],
            "properties": {
                "tool": {
                    "type": "object",
                    "required": ["driver"],
                    "properties": {"driver": {"$ref": "#/definitions/toolComponent"}},
                },
                "results": {"type": "array", "items": {"$ref": "#/definitions/result"}},
                "originalUriBaseIds": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"uri": {"type": "string", "format": "uri-reference"}},
                    },
                },
            },
        },
        "toolComponent": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "version": {"type": "string"},
                "semanticVersion": {"type": "string"},
                "informationUri": {"type": "string", "format": "uri"},
                "rules": {
                    "type": "array",
                    "uniqueItems": True,
                    "items": {"$ref": "#/definitions/reportingDescriptor"},
                },
            },
        },
        "reportingDescriptor": {
            "type": "object",
            "required": ["id"],
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "shortDescription": {"$ref": "#/definitions/multiformatMessageString"},
                "fullDescription": {"$ref": "#/definitions/multiformatMessageString"},
                "help": {"$ref": "#/definitions/multiformatMessageString"},
                "helpUri": {"type": "string", "format": "uri"},
                "defaultConfiguration": {
                    "type": "object",
                    "properties": {"level": {"enum": ["none", "note", "warning", "error"]}},
                },
            },
        },
        "result": {
            "type": "object",
            "required": ["message"],
            "properties": {
                "ruleId": {"type": "string"},
                "ruleIndex": {"type": "integer", "minimum": -1},
                "level": {"enum": ["none", "note", "warning", "error"]},
                "message": {"$ref": "#/definitions/message"},
                "locations": {"type": "array", "items": {"$ref": "#/definitions/location"}},
            },
        },
        "location": {
            "type": "object",
            "properties": {"physicalLocation": {"$ref": "#/definitions/physicalLocation"}},
        },
        "physicalLocation": {
            "type": "object",
            "anyOf": [{"required": ["address"]}, {"required": ["artifactLocation"]}],
            "properties": {
                "artifactLocation": {
                    "type": "object",
                    "properties": {
                        "uri": {"type": "string", "format": "uri-reference"},
                        "uriBaseId": {"type": "string"},
                    },
                },
                "region": {"$ref": "#/definitions/region"},
            },
        },
        "region": {
            "type": "object",
            "properties": {
                "startLine": {"type": "integer", "minimum": 1},
                "startColumn": {"type": "integer", "minimum": 1},
                "endLine": {"type": "integer", "minimum": 1},
                "endColumn": {"type": "integer", "minimum": 1},
            },
        },
    },
}


# ---- text ----


def test_text_lines_and_summary():
    assert render("text").splitlines() == [
        "src/a.py:3:9: SL501 stream created in a loop",
        "src/a.py:9:1: SL102 host array",
        "src/b.py:1:1: SL000 SyntaxError: bad, very: bad",
        "Found 3 errors.",
    ]
    assert render("text", [D1]).splitlines()[-1] == "Found 1 error."
    assert render("text", []) == "All checks passed!\n"
    assert render("text", [D1], quiet=True) == "src/a.py:3:9: SL501 stream created in a loop\n"


def test_text_show_source_underlines_the_range():
    lines = ["import torch", "for i in range(30):", "\ts = torch.cuda.Stream()"]
    diag = Diagnostic("a.py", 3, 6, "SL501", "m", 3, 25, 3, "n")
    text = render("text", [diag], show_source=True, source=lambda _name, _cell: lines)
    assert text.splitlines()[1:5] == [
        "  |",
        "3 | \ts = torch.cuda.Stream()",
        "  | \t    " + "^" * 19,
        "  |",
    ]
    # No source available: the finding alone.
    assert render("text", [diag], show_source=True, source=lambda _n, _c: None).count("\n") == 2


def test_statistics_text_and_json():
    table = render("text", DIAGS + [D1], statistics=True).splitlines()
    assert table == [
        "2\tSL501\tstream-created-in-hot-path",
        "1\tSL000\tsource-error",
        "1\tSL102\timplicit-kernel-transfer",
        "Found 4 errors.",
    ]
    data = json.loads(render("json", DIAGS + [D1], statistics=True))
    assert data[0] == {"code": "SL501", "name": "stream-created-in-hot-path", "count": 2,
                       "fixable": False, "fixable_count": 0}


# ---- JSON ----


def test_json_has_exactly_ruffs_fields_and_help():
    data = json.loads(render("json"))
    assert isinstance(data, list) and len(data) == 3
    first = data[0]
    assert set(first) == {
        "cell", "code", "message", "filename", "location", "end_location", "fix", "url", "noqa_row",
        "help",
    }  # fmt: skip
    assert first == {
        "cell": None,
        "code": "SL501",
        "message": "stream created in a loop",
        "help": None,
        "filename": "src/a.py",
        "location": {"row": 3, "column": 9},
        "end_location": {"row": 3, "column": 28},
        "fix": None,
        "url": D1.url,
        "noqa_row": 3,
    }
    assert first["url"].endswith("SL501.md")
    assert data[2]["code"] == "SL000" and data[2]["url"] is None
    assert json.loads(render("json", [])) == []


# ---- SARIF ----


def test_sarif_validates_and_has_required_structure():
    doc = json.loads(render("sarif"))
    jsonschema.validate(doc, SARIF_SUBSET, format_checker=jsonschema.FormatChecker())
    assert doc["version"] == "2.1.0" and doc["$schema"].startswith("https://")
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["name"] == "streamlint" and driver["version"] and driver["informationUri"]
    results = doc["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["SL501", "SL102", "SL000"]
    first = results[0]
    assert first["level"] == "error" and first["message"]["text"] == "stream created in a loop"
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "src/a.py"
    assert loc["region"] == {"startLine": 3, "startColumn": 9, "endLine": 3, "endColumn": 28}
    ids = [rule["id"] for rule in driver["rules"]]
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    assert ids[0] == "SL000"


def test_sarif_lists_every_rule_with_its_docs():
    driver = sarif.build([])["runs"][0]["tool"]["driver"]
    by_id = {rule["id"]: rule for rule in driver["rules"]}
    real = registry.all_rules()
    assert len(real) >= 10
    assert set(by_id) == {"SL000"} | {r.code for r in real}
    for rule in real:
        entry = by_id[rule.code]
        assert entry["name"] == rule.name
        assert entry["shortDescription"]["text"] == rule.summary
        assert entry["fullDescription"]["text"].strip()
        assert entry["fullDescription"]["text"] in rule.docs()
        assert entry["help"]["text"] == rule.docs() and entry["help"]["markdown"] == rule.docs()
        assert "## Why is this bad?" in entry["help"]["markdown"]


def test_sarif_absolute_and_odd_paths(tmp_path):
    diag = Diagnostic(str(tmp_path / "a b.py"), 1, 1, "SL101", "m", 1, 2, 1, "n")
    loc = sarif.build([diag])["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].startswith("file:///")
    assert loc["artifactLocation"]["uri"].endswith("a%20b.py")
    rel = Diagnostic("dir/a b.py", 1, 1, "SL101", "m", 1, 2, 1, "n")
    loc = sarif.build([rel])["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "dir/a%20b.py", "uriBaseId": "%SRCROOT%"}


def test_sarif_section_extraction():
    docs = "## What it does\nFinds X.\n\nMore.\n\n## Why is this bad?\nBecause."
    assert sarif.section(docs, "What it does") == "Finds X.\n\nMore."
    assert sarif.section(docs, "Why is this bad?") == "Because."
    assert sarif.section(docs, "Example") == ""


# ---- GitHub ----


def test_github_annotation_line():
    assert render("github", [D1]) == (
        "::error title=streamlint (SL501),file=src/a.py,line=3,col=9,endLine=3,endColumn=28"
        "::SL501 stream created in a loop\n"
    )


@pytest.mark.parametrize(
    "raw, data, prop",
    [
        ("100%", "100%25", "100%25"),
        ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
        ("a,b:c", "a,b:c", "a%2Cb%3Ac"),
    ],
)
def test_github_escaping(raw, data, prop):
    assert github.escape_data(raw) == data
    assert github.escape_property(raw) == prop


def test_github_escapes_file_and_message():
    # (a diagnostic's message is one line: code quoted over lines is joined; the escape still covers raw text)
    diag = Diagnostic("dir,x/a:b%.py", 2, 3, "SL000", "line1\nline2 50%", 2, 3, 2, "")
    line = github.format_line(diag)
    assert "file=dir%2Cx/a%3Ab%25.py," in line
    assert line.endswith("::SL000 line1 line2 50%25")
    assert "\n" not in line
    assert github.escape_data("a\r\nb 5%") == "a%0D%0Ab 5%25"


def test_unknown_format_is_rejected():
    with pytest.raises(ValueError):
        render("xml")
