"""Fixes: text edits a rule attaches to a finding, with an applicability.

Rules build a fix by transforming libcst nodes (`with_changes`, parsed snippets) and
rendering the new nodes over the old ones' spans (see `streamlint.fixes.edits`); the
result is a plain list of text edits, so the command line, the language server and
notebooks all apply the same thing.
"""

from streamlint.fixes.model import Applicability, Edit, Fix

__all__ = ["Applicability", "Edit", "Fix"]
