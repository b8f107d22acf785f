"""Jupyter notebooks: checked cell by cell (`lint.lint_notebook`), fixed in place
(`fix.fix_notebook`). Checking needs only the standard library; fixing needs
nbformat (the `notebooks` extra)."""
