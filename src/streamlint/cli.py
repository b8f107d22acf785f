"""The `streamlint` command, following ruff's conventions.

    streamlint [check] [PATH ...]     bare paths mean `check`; `-` reads stdin
    streamlint rule CODE | --all      a rule's documentation, or the list of rules
    streamlint clean                  remove the result cache
    streamlint server                 the language server, over stdio (`lsp` extra)

Exit codes: 0 no findings, 1 findings (SL000 included), 2 usage, configuration or
internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from functools import lru_cache
from pathlib import Path
from typing import Sequence, TextIO

from streamlint.runtime.verify import add_verify_parser, run_verify
from streamlint import __version__, adoption, engine, output
from streamlint import cache as result_cache
from streamlint import rules as registry
from streamlint.config import ConfigError, Settings, SettingsResolver, parse_selectors, parse_timeout
from streamlint.diagnostics import sort_key
from streamlint.discovery import discover
from streamlint.selection import RuleSelection
from streamlint.adoption import AdoptionError
from streamlint.baseline import BaselineError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_SUBCOMMANDS = ("check", "rule", "verify", "server", "clean")
_TOP_LEVEL = ("-h", "--help", "-V", "--version")


class UsageError(Exception):
    """A bad argument value found after parsing (exit 2)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamlint",
        description="Find CUDA stream misuse in CuPy, Numba-CUDA, PyTorch and cuda-python code.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"streamlint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="check files and directories (the default)")
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or directories; - for stdin")
    check.add_argument("--select", action="append", metavar="CODES",
                       help="rules to enable: codes, prefixes (SL1) or ALL, comma-separated")
    check.add_argument("--ignore", action="append", metavar="CODES", help="rules to disable")
    check.add_argument("--extend-select", action="append", metavar="CODES",
                       help="rules to enable on top of the selection")
    check.add_argument("--format", "--output-format", dest="format", default="text",
                       choices=output.FORMATS, help="output format (default: text)")
    check.add_argument("--statistics", action="store_true", help="show counts per rule")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    check.add_argument("--fix", action="store_true",
                       help="apply safe fixes (checked: a fix that does not remove its finding is not written)")
    check.add_argument("--unsafe-fixes", action="store_true",
                       help="also offer and apply unsafe fixes (they may change timing, memory or results)")
    check.add_argument("--diff", action="store_true",
                       help="print the fixes as a unified diff instead of writing them (exit 1 if any)")
    check.add_argument("--show-fixes", action="store_true",
                       help="list the fixes applied (with --fix) or available")
    check.add_argument("--no-cache", action="store_true",
                       help="neither read nor write the result cache")
    check.add_argument("--cache-dir", type=Path, metavar="PATH",
                       help="where the result cache lives (default: .streamlint_cache "
                            "in the project root)")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply exclusions to paths named on the command line too")
    check.add_argument("--config", type=Path, metavar="PATH",
                       help="use this TOML file instead of discovering pyproject.toml")
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="name to use for stdin (for config and messages)")
    check.add_argument("--show-source", action="store_true",
                       help="show the source line under each finding (text format)")
    check.add_argument("--timeout", metavar="SECONDS",
                       help="give up on a file after this long with SL000 (default: 30)")
    check.add_argument("-q", "--quiet", action="store_true",
                       help="print findings only, no summary or warnings")
    adopt = check.add_argument_group("adoption on an existing code base")
    adopt.add_argument("--add-noqa", action="store_true",
                       help="add `# noqa: CODE` comments for every current finding (edits files)")
    adopt.add_argument("--baseline", type=Path, metavar="FILE",
                       help="report only findings not recorded in FILE; records FILE if missing")
    adopt.add_argument("--update-baseline", action="store_true",
                       help="with --baseline: record the current findings in FILE")
    check.add_argument("-V", "--version", action="version", version=f"streamlint {__version__}")

    rule = sub.add_parser("rule", help="show a rule's documentation")
    which = rule.add_mutually_exclusive_group(required=True)
    which.add_argument("code", nargs="?", metavar="CODE", help="rule code, e.g. SL101")
    which.add_argument("--all", action="store_true", help="list every rule")
    rule.add_argument("--format", "--output-format", dest="format", default="text",
                      choices=("text", "json"))

    clean = sub.add_parser("clean", help="remove the result cache")
    clean.add_argument("--cache-dir", type=Path, metavar="PATH",
                       help="the cache to remove (default: the configured one)")
    clean.add_argument("--config", type=Path, metavar="PATH",
                       help="the TOML file whose cache-dir to use")

    add_verify_parser(sub)  # the GPU runtime checks (torch needed only when it runs)
    sub.add_parser(
        "server", help="run the language server over stdio (needs the `lsp` extra)",
        description="A Language Server (LSP) over stdin/stdout, for editors: diagnostics "
        "as you type, fixes as quick fixes. Install with: pip install 'streamlint[lsp]'",
    )  # fmt: skip
    return parser  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code instead of exiting."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or (args_list[0] not in _SUBCOMMANDS and args_list[0] not in _TOP_LEVEL):
        args_list.insert(0, "check")
    try:
        args = build_parser().parse_args(args_list)
    except SystemExit as exit_:  # argparse exits 2 on bad usage, 0 for --help
        return exit_.code if isinstance(exit_.code, int) else EXIT_ERROR
    try:
        if args.command == "rule":
            return run_rule(args, sys.stdout)
        if args.command == "verify":
            return run_verify(args)
        if args.command == "clean":
            return run_clean(args, sys.stdout)
        if args.command == "server":
            return run_server()
        return run_check(args, sys.stdout, sys.stderr)
    except (ConfigError, UsageError, AdoptionError, BaselineError) as err:
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


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    paths = list(args.paths) or (["-"] if args.stdin_filename else ["."])
    adoption.check_arguments(args, reads_stdin="-" in paths)
    layer = RuleSelection(
        select=_selectors(args.select, "--select"),
        extend_select=_selectors(args.extend_select, "--extend-select") or (),
        ignore=_selectors(args.ignore, "--ignore") or (),
    )
    timeout = None if args.timeout is None else parse_timeout(_number(args.timeout), "invalid value for --timeout")
    resolver = SettingsResolver(explicit_config=args.config, overrides=layer, timeout=timeout)

    results: list[engine.FileResult] = []
    stdin_text: str | None = None
    file_paths = [p for p in paths if p != "-"]
    if len(file_paths) != len(paths):
        stdin_result, stdin_text = _lint_stdin(args, resolver)
        if stdin_result is not None:
            results.append(stdin_result)

    found = discover(file_paths, resolver, force_exclude=args.force_exclude) if file_paths else None
    if found is not None:
        if not args.quiet:
            for warning in found.warnings:
                err.write(f"streamlint: warning: {warning}\n")
            if not found.files and not results:
                err.write("streamlint: warning: no Python files found under the given paths\n")
        cache = None if args.no_cache else _open_cache(args.cache_dir, resolver)
        results.extend(engine.lint_files(found.files, cache=cache))
        if cache is not None and not args.quiet:
            for warning in cache.warnings:
                err.write(f"streamlint: warning: {warning}\n")

    results.sort(key=lambda r: r.path)
    stdin_name = args.stdin_filename or "-"
    if args.fix or args.diff:
        return _run_fix(args, results, resolver, stdin_name, stdin_text, out, err)
    diagnostics = sorted((d for r in results for d in r.diagnostics), key=sort_key)
    source = _source_loader(stdin_name, stdin_text)
    status = EXIT_CLEAN
    if args.add_noqa:
        diagnostics, status = adoption.add_noqa(results, err, quiet=args.quiet)
    elif args.baseline is not None:
        diagnostics = adoption.apply_baseline(args, results, diagnostics, source, err)
    output.write(
        args.format,
        diagnostics,
        out,
        show_source=args.show_source,
        statistics=args.statistics,
        quiet=args.quiet,
        source=source,
        unsafe_fixes=args.unsafe_fixes,
    )
    if args.show_fixes:
        from streamlint.fixes.runner import describe

        available = [d for d in diagnostics if d.fix is not None and d.fix.applies(args.unsafe_fixes)]
        describe(available, out, verb="Can fix")
    out.flush()
    if status != EXIT_CLEAN:
        return status
    return EXIT_FINDINGS if diagnostics and not args.exit_zero else EXIT_CLEAN


def _run_fix(args, results, resolver, stdin_name, stdin_text, out: TextIO, err: TextIO) -> int:
    """--fix / --diff: fix files (stdin: print the fixed text), then report what remains."""
    from streamlint.fixes import runner
    from streamlint.fixes.apply import fix_source

    unsafe = args.unsafe_fixes
    if stdin_text is not None:
        stdin_result = next(r for r in results if r.path == stdin_name)
        results = [r for r in results if r is not stdin_result]
        fixer, show_diff = fix_source, runner.unified_diff
        if stdin_name.endswith(engine.NOTEBOOK_SUFFIX):
            from streamlint.notebooks.fix import cell_diff, fix_notebook_text

            fixer, show_diff = fix_notebook_text, cell_diff
        outcome = fixer(stdin_text, stdin_name, resolver.for_path(args.stdin_filename or os.getcwd()),
                        unsafe=unsafe)
        if outcome.error:
            err.write(f"streamlint: error: {stdin_name}: {outcome.error}; the text was left unchanged\n")
        out.write(show_diff(stdin_text, outcome.source, stdin_name) if args.diff else outcome.source)
        out.flush()
        remaining = outcome.remaining if not args.diff else outcome.applied
        return EXIT_FINDINGS if remaining and not args.exit_zero else EXIT_CLEAN
    report = runner.fix_files(results, resolver.for_path, unsafe=unsafe, diff=args.diff, out=out, err=err)
    if args.diff:
        out.flush()
        if not args.quiet:
            n = len(report.applied)
            err.write(f"Would fix {n} finding{'s' if n != 1 else ''} in {len(report.changed_files)} file(s).\n")
        out.flush()
        return EXIT_FINDINGS if report.applied and not args.exit_zero else EXIT_CLEAN
    remaining = report.diagnostics
    if args.baseline is not None:  # the files are fixed: their lines are read anew
        remaining = adoption.apply_baseline(args, results, remaining, _source_loader(stdin_name, None), err)
    output.write(args.format, remaining, out, show_source=args.show_source,
                 statistics=args.statistics, quiet=args.quiet, source=_source_loader(stdin_name, None))
    if not args.quiet and args.format == "text":
        n = len(report.applied)
        out.write(f"Fixed {n} finding{'s' if n != 1 else ''} in {len(report.changed_files)} file(s).\n")
    if args.show_fixes:
        runner.describe(report.applied, out)
    out.flush()
    failed = bool(report.failed_files)
    return EXIT_FINDINGS if (remaining or failed) and not args.exit_zero else EXIT_CLEAN


def run_server() -> int:
    try:
        from streamlint.lsp.server import serve
    except ImportError as err:
        if (err.name or "").split(".")[0] not in ("pygls", "lsprotocol"):
            raise
        _error(f"the language server needs pygls (missing: {err.name.split('.')[0]}): pip install 'streamlint[lsp]'")
        return EXIT_ERROR
    serve()
    return EXIT_CLEAN


def run_rule(args: argparse.Namespace, out: TextIO) -> int:
    if args.all:
        rules = registry.all_rules()
        if args.format == "json":
            data = [{"code": r.code, "name": r.name, "summary": r.summary} for r in rules]
            out.write(json.dumps(data, indent=2) + "\n")
        else:
            width = max((len(r.name) for r in rules), default=0)
            for r in rules:
                out.write(f"{r.code}  {r.name:<{width}}  {r.summary}\n")
        return EXIT_CLEAN
    rule = registry.rule_by_code(args.code)
    if rule is None:
        known = ", ".join(r.code for r in registry.all_rules()) or "none"
        raise UsageError(f"unknown rule code {args.code!r} (known: {known})")
    if args.format == "json":
        data = {"code": rule.code, "name": rule.name, "summary": rule.summary, "docs": rule.docs()}
        out.write(json.dumps(data, indent=2) + "\n")
    else:
        out.write(f"# {rule.name} ({rule.code})\n\n{rule.summary}\n\n{rule.docs()}\n")
    return EXIT_CLEAN


def run_clean(args: argparse.Namespace, out: TextIO) -> int:
    resolver = SettingsResolver(explicit_config=args.config)
    _, message = result_cache.clean(_cache_dir(args.cache_dir, resolver))
    out.write(message + "\n")
    return EXIT_CLEAN


def _open_cache(option: Path | None, resolver: SettingsResolver) -> result_cache.ResultCache | None:
    if result_cache.disabled_by_env():
        return None
    return result_cache.ResultCache(_cache_dir(option, resolver))


def _cache_dir(option: Path | None, resolver: SettingsResolver) -> Path:
    # One cache per run: the one of the configuration that applies to the working
    # directory (like ruff's project root), whatever paths are checked.
    settings: Settings = resolver.for_path(os.getcwd())
    return result_cache.cache_dir(option, settings.cache_dir, settings.root)


def _lint_stdin(
    args: argparse.Namespace, resolver: SettingsResolver
) -> tuple[engine.FileResult | None, str | None]:
    engine.load_checker()  # a broken install is an internal error, not an SL000
    name = args.stdin_filename or "-"
    anchor = name if args.stdin_filename else os.getcwd()
    settings = resolver.for_path(anchor)
    if args.force_exclude and args.stdin_filename:
        probe = discover([name], resolver, force_exclude=True)
        if not probe.files:
            return None, None  # excluded by name, as ruff does with --force-exclude
    stream = sys.stdin
    data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode("utf-8")
    result = engine.lint_bytes(data, name, settings)
    text = engine.decode(data, name)
    return result, text if isinstance(text, str) else None


def _selectors(values: list[str] | None, flag: str) -> tuple[str, ...] | None:
    if values is None:
        return None
    items = [item for value in values for item in value.split(",") if item.strip()]
    return parse_selectors(items, f"invalid value for {flag}")


def _number(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text  # parse_timeout names the bad value


def _source_loader(stdin_name: str, stdin_text: str | None):
    @lru_cache(maxsize=64)
    def load(filename: str, cell: int | None = None) -> list[str] | None:
        if stdin_text is not None and filename == stdin_name:
            text: str | object = stdin_text
        else:
            try:
                text = engine.decode(Path(filename).read_bytes(), filename)
            except OSError:
                return None
        if not isinstance(text, str):
            return None
        if cell is not None:  # a notebook's finding: the lines of its cell
            from streamlint.notebooks.cells import cell_lines

            return cell_lines(text, cell)
        # Python's line breaks only, as the rows are counted (splitlines would also
        # split on form feeds and other characters Python does not end a line with).
        return engine.source_lines(text)

    return load


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
