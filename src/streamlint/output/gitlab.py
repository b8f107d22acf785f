"""GitLab code quality report (a JSON list of issues), as ruff writes it.

GitLab shows these in merge requests when a job uploads the file as
`artifacts: reports: codequality`. Paths are made relative to `CI_PROJECT_DIR` when
that is set (GitLab matches them against the repository), else to the current
directory. The fingerprint identifies an issue across pipelines: it hashes the path,
code, message and the issue's rank among identical ones, not the line, so that moving
code does not make an old finding look new.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from typing import Any, Sequence, TextIO

from streamlint.diagnostics import Diagnostic
from streamlint.output.advice import with_help
from streamlint.output.options import Options


def relative_path(filename: str, root: str | None = None) -> str:
    root = root or os.environ.get("CI_PROJECT_DIR") or os.getcwd()
    if not os.path.isabs(filename):
        return filename.replace(os.sep, "/")
    try:
        rel = os.path.relpath(filename, root)
    except ValueError:  # another drive on Windows
        return filename
    return filename if rel.startswith("..") else rel.replace(os.sep, "/")


def issues(diagnostics: Sequence[Diagnostic]) -> list[dict[str, Any]]:
    seen: Counter[tuple[str, str, str]] = Counter()
    out = []
    for diag in diagnostics:
        path = relative_path(diag.filename)
        identity = (path, diag.code, diag.message)
        rank = seen[identity]
        seen[identity] += 1
        where = f" (cell {diag.cell})" if diag.cell is not None else ""
        out.append(
            {
                "check_name": diag.code,
                # (the help in the description, which GitLab shows; not in the fingerprint)
                "description": with_help(f"{diag.code}: {diag.message}{where}", diag, "; "),
                "severity": "major",
                "fingerprint": fingerprint(*identity, rank),
                "location": {
                    "path": path,
                    "positions": {
                        "begin": {"line": diag.row, "column": diag.column},
                        "end": {"line": diag.end_row, "column": diag.end_column},
                    },
                },
            }
        )
    return out


def fingerprint(path: str, code: str, message: str, rank: int) -> str:
    data = "\0".join((path, code, message, str(rank))).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:32]


def render(diagnostics: Sequence[Diagnostic], out: TextIO, options: Options) -> None:
    json.dump(issues(diagnostics), out, indent=2, ensure_ascii=False)
    out.write("\n")
