"""`streamlint explain FILE::QUALNAME`: what a function does to streams, as the model wrote it
down (its summaries and the calling contexts they were solved under). `FILE` alone lists
every function of the file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from streamlint.commands.exit import EXIT_CLEAN, EXIT_ERROR, UsageError


def add_explain_parser(sub) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "explain", help="print what a function does to streams (its summary and contexts)",
        description="Print the stream model's summary of a function: the effects it has on streams, "
        "events and buffers, what it returns and leaves on self, under each calling context it was solved in.",
    )  # fmt: skip
    parser.add_argument("target", metavar="FILE[::QUALNAME]", help="a Python file, and a function in it (f, C.m)")
    return parser


def run_explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    path_text, _, qualname = args.target.partition("::")
    path = Path(path_text)
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read {path_text}: {getattr(error, 'strerror', None) or error}") from None
    import libcst as cst  # lazy: the other commands served from the cache never load libcst

    from streamlint.commands.explain_text import explain, explain_module
    from streamlint.config import ConfigError, load_settings
    from streamlint.model import declared
    from streamlint.model.file_model import analyze_file

    try:  # the project's declared models and per-thread switches, as `check` applies them
        settings = load_settings(path)
    except ConfigError as error:
        raise UsageError(str(error)) from None
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        err.write(f"{path_text}: cannot parse: {error.message}\n")
        return EXIT_ERROR
    with declared.using(settings.models, settings.per_thread_default_stream, settings.assume_device):
        model = analyze_file(module, str(path))
        text = explain(model, qualname) if qualname else explain_module(model)
    if not text:
        raise UsageError(f"no function {qualname!r} in {path_text} (give it as f or Class.method)")
    out.write(text)
    return EXIT_CLEAN
