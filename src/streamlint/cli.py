"""The `streamlint` command: parse the arguments, hand them to their command's module
(`commands/`), and turn errors into exit codes, following ruff's conventions.

    streamlint [check] [PATH ...]     bare paths mean `check`; `-` reads stdin
    streamlint rule CODE|NAME|--all   a rule's documentation, or the list of rules
    streamlint clean                  remove the result cache
    streamlint server                 the language server, over stdio (`lsp` extra)
    streamlint verify                 measure findings on a GPU (`runtime` extra)
    streamlint version                show the version

Exit codes: 0 no findings, 1 findings (SL000 included), 2 usage, configuration or
internal error.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
import traceback
from pathlib import Path
from typing import Sequence

from streamlint import __version__, output
from streamlint.baseline import BaselineError
from streamlint.commands import check, clean, explain, rule, server, verify, version
from streamlint.commands.exit import EXIT_CLEAN, EXIT_ERROR, UsageError
from streamlint.commands.options import NOQA_REASON, add_fixable_options, split_noqa_reason
from streamlint.config import ConfigError

SUBCOMMANDS = ("check", "rule", "verify", "server", "clean", "version", "explain")
_TOP_LEVEL = ("-h", "--help", "-V", "--version")
# A first argument like this that names no file is a mistyped command, not a path.
_WORD = re.compile(r"[a-z][a-z-]*")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The parser, and each command's own (whose usage a bad option there prints)."""
    parser = argparse.ArgumentParser(
        prog="streamlint",
        description="Find CUDA stream misuse in CuPy, Numba-CUDA, PyTorch and cuda-python code.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"streamlint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands = {"check": _check_parser(sub)}

    rule_parser = sub.add_parser("rule", help="show a rule's documentation")
    which = rule_parser.add_mutually_exclusive_group(required=True)
    which.add_argument("code", nargs="?", metavar="RULE", help="rule code or name, e.g. SL101")
    which.add_argument("--all", action="store_true", help="list every rule")
    rule_parser.add_argument("--format", "--output-format", dest="format", default="text",
                             choices=("text", "json"))
    commands["rule"] = rule_parser

    clean_parser = sub.add_parser("clean", help="remove the result cache")
    clean_parser.add_argument("--cache-dir", type=Path, metavar="PATH",
                              help="the cache to remove (default: the configured one)")
    clean_parser.add_argument("--config", type=Path, metavar="PATH",
                              help="the TOML file whose cache-dir to use")
    commands["clean"] = clean_parser

    commands["version"] = version.add_version_parser(sub)

    commands["verify"] = verify.add_verify_parser(sub)
    commands["explain"] = explain.add_explain_parser(sub)
    commands["server"] = sub.add_parser(
        "server", help="run the language server over stdio (needs the `lsp` extra)",
        description="A Language Server (LSP) over stdin/stdout, for editors: diagnostics "
        "as you type, fixes as quick fixes. Install with: pip install 'streamlint[lsp]'",
    )  # fmt: skip
    return parser, commands


def _check_parser(sub) -> argparse.ArgumentParser:
    check_parser = sub.add_parser("check", help="check files and directories (the default)")
    add = check_parser.add_argument
    add("paths", nargs="*", metavar="PATH", help="files or directories; - for stdin")
    rules = check_parser.add_argument_group("rule selection")
    rules.add_argument("--select", action="append", metavar="CODES",
                       help="rules to enable: codes, prefixes (SL1) or ALL, comma-separated")
    rules.add_argument("--ignore", action="append", metavar="CODES", help="rules to disable")
    rules.add_argument("--extend-select", action="append", metavar="CODES",
                       help="rules to enable on top of the selection")
    rules.add_argument("--per-file-ignores", action="append", metavar="PATTERN:CODES",
                       help="rules to disable in files matching PATTERN (replaces the config's)")
    rules.add_argument("--extend-per-file-ignores", action="append", metavar="PATTERN:CODES",
                       help="like --per-file-ignores, on top of the config's")
    rules.add_argument("--ignore-noqa", action="store_true",
                       help="honour no suppression comment (# noqa, # streamlint: ignore[-file])")
    files = check_parser.add_argument_group("files and configuration")
    files.add_argument("--exclude", action="append", metavar="PATTERNS",
                       help="files and directories to leave out (replaces the config's exclude)")
    files.add_argument("--extend-exclude", action="append", metavar="PATTERNS",
                       help="more files and directories to leave out")
    files.add_argument("--force-exclude", action="store_true",
                       help="apply exclusions to paths named on the command line too")
    files.add_argument("--config", action="append", metavar="PATH|KEY=VALUE",
                       help="a TOML file to use instead of discovering one, or a `key = value` "
                            "that overrides the config (repeatable)")
    files.add_argument("--isolated", action="store_true", help="ignore every config file")
    files.add_argument("--stdin-filename", metavar="PATH",
                       help="name to use for stdin (for config and messages)")
    files.add_argument("--show-files", action="store_true", help="list the files a check would cover")
    files.add_argument("--show-settings", action="store_true",
                       help="show the settings the first file gets, as TOML, then exit")
    files.add_argument("--show-unknowns", "--explain-silence", dest="show_unknowns", action="store_true",
                       help="list, per function with GPU work, what the model could not see where it mattered "
                            "(a tensor's device, a copy's host memory, a stream, an opaque call), instead of "
                            "checking (text, or --format json)")
    report = check_parser.add_argument_group("output")
    report.add_argument("--format", "--output-format", dest="format", default=None,
                        type=output.canonical, choices=output.FORMATS,
                        help="output format (default: the config's output-format, else full, which shows the source, "
                             "help and fix of each finding; concise: one line each)")
    report.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the output: auto (on a terminal, unless NO_COLOR; FORCE_COLOR forces it), "
                             "always or never")
    report.add_argument("-o", "--output-file", type=Path, metavar="PATH",
                        help="write the report to this file instead of stdout")
    report.add_argument("--statistics", action="store_true", help="show counts per rule")
    report.add_argument("--show-source", action="store_true",
                        help="show the source line under each finding (text format)")
    report.add_argument("--show-fixes", action="store_true", default=None,
                        help="list the fixes applied (with --fix) or available")
    report.add_argument("--no-show-fixes", dest="show_fixes", action="store_false", help=argparse.SUPPRESS)
    report.add_argument("-q", "--quiet", action="store_true",
                        help="print findings only, no summary, warnings or progress")
    report.add_argument("-v", "--verbose", action="store_true",
                        help="name each file on stderr as its check ends")
    report.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    report.add_argument("--exit-non-zero-on-fix", action="store_true",
                        help="exit 1 when fixes were applied, even if nothing remains")
    fixing = check_parser.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", default=None,
                        help="apply safe fixes (checked: a fix that does not remove its finding is not written)")
    fixing.add_argument("--no-fix", dest="fix", action="store_false",
                        help="do not apply fixes, whatever the config's `fix` says")
    fixing.add_argument("--fix-only", action="store_true",
                        help="apply fixes and report nothing that remains (implies --fix)")
    fixing.add_argument("--unsafe-fixes", action="store_true", default=None,
                        help="also offer and apply unsafe fixes (they may change timing, memory or results)")
    fixing.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false",
                        help="do not apply unsafe fixes, whatever the config's `unsafe-fixes` says")
    add_fixable_options(fixing)
    fixing.add_argument("--diff", action="store_true",
                        help="print the fixes as a unified diff instead of writing them (exit 1 if any)")
    run = check_parser.add_argument_group("running")
    run.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    run.add_argument("--cache-dir", type=Path, metavar="PATH",
                     help="where the result cache lives (default: .streamlint_cache in the project root)")
    run.add_argument("--timeout", metavar="SECONDS",
                     help="give up on a file after this long with SL000 (default: 30)")
    run.add_argument("-w", "--watch", action="store_true",
                     help="check again whenever a checked file or a config changes (Ctrl-C ends)")
    adopt = check_parser.add_argument_group("adoption on an existing code base")
    adopt.add_argument("--add-noqa", action="store_true",
                       help="add `# noqa: CODE` comments for every current finding (edits files); "
                            "--add-noqa=REASON writes REASON after the codes")
    adopt.add_argument(NOQA_REASON, dest="add_noqa_reason", default="", help=argparse.SUPPRESS)
    adopt.add_argument("--baseline", type=Path, metavar="FILE",
                       help="report only findings not recorded in FILE; records FILE if missing")
    adopt.add_argument("--update-baseline", action="store_true",
                       help="with --baseline: record the current findings in FILE")
    add("-V", "--version", action="version", version=f"streamlint {__version__}")
    return check_parser


def parse(argv: list[str]) -> argparse.Namespace:
    """The parsed arguments; argparse's SystemExit (2, or 0 for --help) on bad usage."""
    parser, commands = build_parser()
    first = argv[0] if argv else None
    if first is None or (first not in SUBCOMMANDS and first not in _TOP_LEVEL):
        if first is not None and _WORD.fullmatch(first) and not os.path.exists(first):
            hint = difflib.get_close_matches(first, SUBCOMMANDS, n=1)
            extra = f" (did you mean '{hint[0]}'?)" if hint else ""
            parser.error(f"unrecognized command '{first}'{extra}; commands: {', '.join(SUBCOMMANDS)}")
        argv = ["check", *argv]
    argv = [part for arg in argv for part in split_noqa_reason(arg)]
    args, extra = parser.parse_known_args(argv)
    if extra:  # the command's own usage, not the top level's
        commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code instead of exiting."""
    try:
        args = parse(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exit_:  # argparse exits 2 on bad usage, 0 for --help
        return exit_.code if isinstance(exit_.code, int) else EXIT_ERROR
    try:
        return dispatch(args)
    except (ConfigError, UsageError, BaselineError) as err:
        _error(f"error: {err}")
        return EXIT_ERROR
    except BrokenPipeError:
        _quiet_broken_pipe()
        return EXIT_CLEAN
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_ERROR
    except Exception as err:  # a bug in streamlint: say so clearly, never a bare traceback
        where = traceback.extract_tb(err.__traceback__)[-1]
        _error(
            f"internal error: {type(err).__name__}: {err} "
            f"(at {os.path.basename(where.filename)}:{where.lineno}); please report it"
        )
        if os.environ.get("STREAMLINT_TRACEBACK"):
            traceback.print_exc()
        return EXIT_ERROR


def dispatch(args: argparse.Namespace) -> int:
    if args.command == "rule":
        return rule.run_rule(args, sys.stdout)
    if args.command == "verify":
        return verify.run_verify(args)
    if args.command == "clean":
        return clean.run_clean(args, sys.stdout)
    if args.command == "explain":
        return explain.run_explain(args, sys.stdout, sys.stderr)
    if args.command == "server":
        return server.run_server(sys.stderr)
    if args.command == "version":
        return version.run_version(args, sys.stdout)
    if args.output_file is None:
        return check.run_check(args, sys.stdout, sys.stderr)
    try:
        out = open(args.output_file, "w", encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot write {args.output_file}: {err.strerror or err}") from None
    with out:
        return check.run_check(args, out, sys.stderr)


def _error(message: str) -> None:
    sys.stderr.write(f"streamlint: {message}\n")


def _quiet_broken_pipe() -> None:
    # The reader went away (e.g. `| head`); point stdout at devnull so the interpreter's
    # final flush does not raise again.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
