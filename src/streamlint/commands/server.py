"""`streamlint server`: the language server over stdio (the `lsp` extra)."""

from __future__ import annotations

from typing import TextIO

from streamlint.commands.exit import EXIT_CLEAN, EXIT_ERROR


def run_server(err: TextIO) -> int:
    try:
        # lazy: pygls is an optional extra, needed only by this command.
        from streamlint.lsp.server import serve
    except ImportError as error:
        if (error.name or "").split(".")[0] not in ("pygls", "lsprotocol"):
            raise
        missing = error.name.split(".")[0]
        err.write(f"streamlint: the language server needs pygls (missing: {missing}): pip install 'streamlint[lsp]'\n")
        return EXIT_ERROR
    serve()
    return EXIT_CLEAN
