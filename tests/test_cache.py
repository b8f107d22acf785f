"""The result cache: hits, every kind of invalidation, damaged and foreign shards,
atomic writes, `streamlint clean`, the flags, and that it never changes a result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import streamlint
from conftest import fake_check, needs_fork, write
from streamlint.engine import lint as engine_lint
from streamlint.engine import run as engine_run
from streamlint.cache import ResultCache, keys
from streamlint.cache.store import CACHEDIR_TAG, GITIGNORE
from streamlint.cli import main
from streamlint.config import Settings, SettingsResolver
from streamlint.discovery import discover
from streamlint.model import resolve
from streamlint.model.interproc import modules as project_modules
from streamlint.selection import RuleSelection

REPO = Path(__file__).resolve().parent.parent
FAKE = "import torch.cuda\nhit(SL101)\nhit(SL502)\n"


def _forget_modules() -> None:
    """The model's per-process memory of the project's modules (parsed trees, resolutions)."""
    project_modules.forget()
    resolve.forget()


@pytest.fixture
def counted(fake_engine, monkeypatch):
    """The fake checker, counting the files it checks (serial runs only)."""
    seen: list[str] = []

    def check(source, filename, rules):
        seen.append(os.path.basename(filename))
        return fake_check(source, filename, rules)

    from conftest import FakeSourceError

    monkeypatch.setattr(engine_lint, "load_checker", lambda: (check, FakeSourceError))
    return seen


def lint(root: Path, cache_dir: Path, jobs: int = 1, resolver=None, use_cache: bool = True):
    found = discover([root], resolver or SettingsResolver())
    cache = ResultCache(cache_dir) if use_cache else None
    results = engine_run.lint_files(found.files, jobs=jobs, cache=cache)
    return results, cache


def rows(results) -> list[tuple[str, int, int, str, str]]:
    return [(os.path.basename(d.filename), d.row, d.column, d.code, d.message)
            for r in results for d in r.diagnostics]  # fmt: skip


def shard_files(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("results-*/*.json"))


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "proj"
    write(root / "a.py", FAKE)
    write(root / "b.py", "import torch.cuda\nx = 1\n")
    write(root / "plain.py", "x = 1\n")  # no GPU word: prefiltered, cached all the same
    write(root / "sub" / "c.py", "import torch.cuda\nhit(SL301)\n")
    return root


# ---- hits and misses ----


def test_second_run_is_served_from_the_cache(tree, tmp_path, counted):
    first, cache = lint(tree, tmp_path / "c")
    assert (cache.hits, cache.misses) == (0, 4)
    assert sorted(counted) == ["a.py", "b.py", "c.py"]  # plain.py never reaches the checker
    counted.clear()
    second, cache = lint(tree, tmp_path / "c")
    assert (cache.hits, cache.misses) == (4, 0)
    assert counted == []
    assert rows(second) == rows(first) == [
        ("a.py", 2, 1, "SL101", "fake SL101"),
        ("a.py", 3, 1, "SL502", "fake SL502"),
        ("c.py", 2, 1, "SL301", "fake SL301"),
    ]
    assert [(r.path, r.analysed, r.lines) for r in second] == [
        (r.path, r.analysed, r.lines) for r in first
    ]


def test_the_shown_filename_comes_from_this_run(tree, tmp_path, counted, monkeypatch):
    lint(tree, tmp_path / "c")
    monkeypatch.chdir(tree)
    found = discover(["sub"], SettingsResolver())
    cache = ResultCache(tmp_path / "c")
    results = engine_run.lint_files(found.files, jobs=1, cache=cache)
    assert cache.hits == 1
    assert [d.filename for d in results[0].diagnostics] == [os.path.join("sub", "c.py")]


def test_cache_directory_is_tagged_and_ignored_by_git(tree, tmp_path, counted):
    lint(tree, tmp_path / "c")
    assert (tmp_path / "c" / "CACHEDIR.TAG").read_text() == CACHEDIR_TAG
    assert (tmp_path / "c" / ".gitignore").read_text() == GITIGNORE
    assert len(shard_files(tmp_path / "c")) == 2  # one per directory: proj/ and proj/sub/


# ---- invalidation ----


def test_content_change_invalidates_only_that_file(tree, tmp_path, counted):
    lint(tree, tmp_path / "c")
    counted.clear()
    (tree / "a.py").write_text("import torch.cuda\nhit(SL102)\n")
    results, cache = lint(tree, tmp_path / "c")
    assert counted == ["a.py"] and (cache.hits, cache.misses) == (3, 1)
    assert ("a.py", 2, 1, "SL102", "fake SL102") in rows(results)


def test_same_content_new_mtime_is_still_a_hit(tree, tmp_path, counted):
    lint(tree, tmp_path / "c")
    os.utime(tree / "a.py", (1, 1))
    _, cache = lint(tree, tmp_path / "c")
    assert cache.misses == 0


def test_configuration_change_invalidates(tree, tmp_path, counted):
    lint(tree, tmp_path / "c")
    narrowed = SettingsResolver(overrides=RuleSelection(select=("SL1",)))
    results, cache = lint(tree, tmp_path / "c", resolver=narrowed)
    assert (cache.hits, cache.misses) == (0, 4)
    assert [r[3] for r in rows(results)] == ["SL101"]
    # Back to the first configuration: those entries were replaced, so a miss again.
    _, cache = lint(tree, tmp_path / "c")
    assert cache.misses == 4


def test_per_file_ignores_change_invalidates(tree, tmp_path, counted):
    write(tree / "pyproject.toml", "[tool.streamlint]\n")
    lint(tree, tmp_path / "c")
    write(tree / "pyproject.toml", '[tool.streamlint.per-file-ignores]\n"a.py" = ["SL101"]\n')
    results, cache = lint(tree, tmp_path / "c")
    assert cache.misses == 4  # a new setting: every entry of the config is re-checked
    assert ("a.py", 2, 1, "SL101", "fake SL101") not in rows(results)


def test_discovery_only_settings_keep_entries(tree, tmp_path, counted):
    lint(tree, tmp_path / "c")
    write(tree / "pyproject.toml", '[tool.streamlint]\nextend-exclude = ["nothing"]\n')
    _, cache = lint(tree, tmp_path / "c")
    assert cache.misses == 0


def test_version_change_invalidates(tree, tmp_path, counted, monkeypatch):
    lint(tree, tmp_path / "c")
    monkeypatch.setattr(streamlint, "__version__", "99.0")
    keys.tool_fingerprint.cache_clear()
    keys._settings_part.cache_clear()
    try:
        _, cache = lint(tree, tmp_path / "c")
    finally:
        monkeypatch.undo()
        keys.tool_fingerprint.cache_clear()
        keys._settings_part.cache_clear()
    assert cache.hits == 0 and cache.misses == 4


def test_fingerprint_follows_the_package_sources(tmp_path, monkeypatch):
    before = keys.tool_fingerprint()
    stats = keys._source_stats(os.path.dirname(streamlint.__file__))
    assert any(line.startswith("engine/lint.py:") for line in stats)
    monkeypatch.setattr(keys, "_source_stats", lambda root, top_only=False: ["changed"])
    keys.tool_fingerprint.cache_clear()
    try:
        assert keys.tool_fingerprint() != before
    finally:
        monkeypatch.undo()
        keys.tool_fingerprint.cache_clear()


# ---- dependencies on other modules of the project (real model) ----

HELPERS = (
    "import torch\n\ndef make_host(n):\n    return torch.zeros(n{pin})\n"
)
MAIN = (
    "import torch\nfrom .helpers import make_host\n\n"
    "def up(n, steps):\n    for _ in range(steps):\n        yield make_host(n).to('cuda', non_blocking=True)\n"
)


@pytest.fixture
def package(tmp_path):
    _forget_modules()
    pkg = tmp_path / "pkg"
    write(pkg / "__init__.py", "")
    write(pkg / "helpers.py", HELPERS.format(pin=""))
    write(pkg / "main.py", MAIN)
    write(pkg / "other.py", "import torch\nx = torch.zeros(3, device='cuda')\n")
    yield pkg
    _forget_modules()


def test_helper_change_invalidates_its_importer(package, tmp_path):
    first, _ = lint(package, tmp_path / "c")
    assert [(r[0], r[3]) for r in rows(first)] == [("main.py", "SL301")]
    # The helper now returns pinned memory: main.py's finding must go, although
    # main.py itself did not change.
    write(package / "helpers.py", HELPERS.format(pin=", pin_memory=True"))
    os.utime(package / "helpers.py", (2_000_000_000, 2_000_000_000))
    second, cache = lint(package, tmp_path / "c")
    assert rows(second) == []
    assert cache.misses == 2 and cache.hits == 2  # helpers.py and main.py; __init__, other


def test_entry_records_what_the_analysis_read(package, tmp_path):
    lint(package, tmp_path / "c")
    shard = shard_files(tmp_path / "c")[0]
    entries = json.loads(shard.read_bytes().partition(b"\n")[2])
    deps = entries["main.py"]["deps"]
    helpers = str((package / "helpers.py").resolve())
    content, digest, names = deps[helpers].split("/")
    # the helper's syntax note (its content hash, the hash of its tokens but comments and blank
    # lines: streamlint/reads.py), the summary digest deferred to the run that finds the helper changed
    assert content.startswith("syn:") and len(content[4:].split(":")[0]) == 32 and digest == "~"
    assert names == "v3:make_host"  # the names main.py used there (v3 use notes, interproc/digests.py)
    # the text of every module noted with a part deferred to the run that finds it changed (a
    # digest, a syntax hash: "~") is kept by its content hash (cache/texts.py), and no other
    deferred = {note.split("/")[0][4:].split(":")[0] for entry in entries.values() for note in entry["deps"].values()
                if note and ("/~/" in note or note.split("/")[0].endswith(":~"))}
    assert helpers in entries["main.py"]["deps"] and content[4:].split(":")[0] in deferred
    assert {k.name for k in (tmp_path / "c").glob("texts-*/*.z")} == {d + ".z" for d in deferred}
    # other.py uses nothing of another module: no summary note (and defines no name a caller can
    # call: it reads no module for callers)
    assert not any(isinstance(note, str) and "/" in note for note in entries["other.py"]["deps"].values())
    # main.py read the package's other modules for callers of `up`: by their syntax notes
    assert deps[str((package / "other.py").resolve())].startswith("syn:")


def test_a_comment_in_a_module_read_for_callers_keeps_the_results(package, tmp_path, monkeypatch):
    """Every file of a package reads its package's modules (the callers search): a comment or a
    blank line added to one keeps every other file's result, whose analysis read the same tokens."""
    first, _ = lint(package, tmp_path / "c")
    write(package / "other.py", "# a comment\n\nimport torch\nx = torch.zeros(3, device='cuda')  # why\n\n")
    checked: list[str] = []
    real = engine_run.check_path
    monkeypatch.setattr(engine_run, "check_path", lambda path, *a, **k: checked.append(os.path.basename(str(path)))
                        or real(path, *a, **k))
    second, _ = lint(package, tmp_path / "c")
    assert checked == ["other.py"] and rows(second) == rows(first)
    write(package / "other.py", "import torch\nx = torch.zeros(4, device='cuda')\n")  # a token changed
    checked.clear()
    lint(package, tmp_path / "c")
    assert "other.py" in checked and len(checked) > 1


def test_a_recheck_takes_the_syntax_notes_of_unchanged_modules_from_the_cache(package, tmp_path, monkeypatch):
    """A fresh process re-checking one edited file reads its package's modules again; their
    syntax notes are already in the cache's entries (by content), so none is tokenized again."""
    from streamlint import syntax_notes

    lint(package, tmp_path / "c")
    monkeypatch.setattr(syntax_notes, "_syntax", {})  # (what a new process knows)
    tokenized: list[bytes] = []
    real = syntax_notes.tokenize.tokenize

    def spy(readline):
        data = b"".join(iter(readline, b""))
        tokenized.append(data)
        return real(iter(data.splitlines(keepends=True)).__next__)

    monkeypatch.setattr(syntax_notes.tokenize, "tokenize", spy)
    write(package / "other.py", "import torch\nx = torch.zeros(4, device='cuda')\n")
    _forget_modules()
    _, cache = lint(package, tmp_path / "c")
    assert cache.misses >= 1
    unchanged = {(package / name).read_bytes() for name in ("helpers.py", "main.py")}
    assert tokenized and not unchanged & set(tokenized), tokenized


# Edits of the helper that keep what make_host gives its importers.
SAME_SUMMARY = [
    pytest.param(lambda text: "# a comment\n\n" + text + "\n# trailing\n", id="comments"),
    pytest.param(lambda text: text.replace("def make_host(n):\n", 'def make_host(n):\n    """Docs."""\n    # why\n'),
                 id="docstring"),
    pytest.param(lambda text: text + "\n\ndef unrelated(x):\n    return x + 1\n", id="unrelated-function"),
    pytest.param(lambda text: text.replace("return torch.zeros(n)", "size = n\n    return torch.zeros(size)"), id="body"),
]


@pytest.mark.parametrize("edit", SAME_SUMMARY)
def test_helper_edit_that_keeps_its_summary_keeps_importers_cached(package, tmp_path, edit, monkeypatch):
    first, _ = lint(package, tmp_path / "c")
    write(package / "helpers.py", edit(HELPERS.format(pin="")))
    checked: list[str] = []
    real = engine_run.check_path

    def spy(path, *args, **kwargs):
        checked.append(os.path.basename(str(path)))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(engine_run, "check_path", spy)
    second, cache = lint(package, tmp_path / "c")
    assert checked == ["helpers.py"]  # main.py, its importer, is served from the cache
    assert rows(second) == rows(first) and [r[3] for r in rows(first)] == ["SL301"]
    assert (cache.hits, cache.misses) == (3, 1)
    # The entry now names the helper's new content: the next run takes it at once.
    checked.clear()
    third, cache = lint(package, tmp_path / "c")
    assert checked == [] and cache.hits == 4 and rows(third) == rows(first)


def test_helper_edit_that_changes_its_stream_work_rechecks_importers(package, tmp_path):
    lint(package, tmp_path / "c")
    # The same pageable result, but the helper now synchronizes the device: a different
    # summary, so main.py is analysed again.
    write(package / "helpers.py", HELPERS.format(pin="").replace(
        "    return", "    torch.cuda.synchronize()\n    return"))
    _, cache = lint(package, tmp_path / "c")
    assert (cache.hits, cache.misses) == (2, 2)


def test_same_summary_results_match_an_uncached_run(package, tmp_path):
    lint(package, tmp_path / "c")
    write(package / "helpers.py", "# moved down\n\n\n" + HELPERS.format(pin=""))
    warm, _ = lint(package, tmp_path / "c")
    _forget_modules()
    uncached, _ = lint(package, tmp_path / "c2", use_cache=False)
    assert rows(warm) == rows(uncached)


def test_changed_files_are_checked_in_the_pool_while_the_summaries_are_compared(package, tmp_path):
    # helpers.py (same summary) and tool-scripts/tool.py changed: both are checked in the pool while
    # this process settles main.py, whose entry holds if make_host's summary is the same.
    # (tool-scripts/ is no part of the package, not even a namespace portion: its name is no module
    # name. A module of the package, read for main.py's callers, would make main.py's entry a plain
    # miss when it changes.)
    write(package / "tool-scripts" / "tool.py", "import torch\nx = torch.zeros(3, device='cuda')\n")
    lint(package, tmp_path / "c", jobs=2)
    write(package / "helpers.py", "# edited\n" + HELPERS.format(pin=""))
    write(package / "tool-scripts" / "tool.py", "import torch\nx = torch.zeros(4, device='cuda')\n")
    warm, cache = lint(package, tmp_path / "c", jobs=2)
    assert (cache.hits, cache.misses) == (3, 2)  # __init__, main.py, other.py; helpers.py and tool.py
    _forget_modules()
    uncached, _ = lint(package, tmp_path / "c2", jobs=1, use_cache=False)
    assert rows(warm) == rows(uncached) and [r[3] for r in rows(warm)] == ["SL301"]


def test_result_that_names_a_line_of_the_helper_keeps_the_content_key(tmp_path):
    import shutil

    _forget_modules()
    pkg = tmp_path / "pipeline_pkg"
    shutil.copytree(REPO / "fixtures" / "crossmodule" / "pipeline_pkg", pkg,
                    ignore=shutil.ignore_patterns("*.expected"))
    staging = str((pkg / "staging.py").resolve())
    first, _ = lint(pkg, tmp_path / "c")
    named = [r[4] for r in rows(first) if r[0] == "train.py" and "line 11 of staging.py" in r[4]]
    assert named  # SL401 points into prefetch() in staging.py (named relative to train.py)
    entries = {}
    for shard in shard_files(tmp_path / "c"):
        entries.update(json.loads(shard.read_bytes().partition(b"\n")[2]))
    assert "/" not in entries["train.py"]["deps"][staging]  # content-keyed, not summary-keyed
    write(pkg / "staging.py", "# shifted\n" + (pkg / "staging.py").read_text())
    second, cache = lint(pkg, tmp_path / "c")
    assert cache.misses == 2  # staging.py and train.py
    assert [r[4] for r in rows(second) if r[0] == "train.py" and "of staging.py" in r[4]] == [
        named[0].replace("line 11 of", "line 12 of")
    ]
    _forget_modules()


def test_new_module_that_an_import_now_finds_invalidates(tmp_path):
    _forget_modules()
    root = tmp_path / "scripts"
    main = (
        "import torch\nfrom util import make_host\n\n"
        "def up(n, steps):\n    for _ in range(steps):\n        yield make_host(n).to('cuda', non_blocking=True)\n"
    )
    write(root / "main.py", main)
    first, _ = lint(root, tmp_path / "c")
    assert rows(first) == []  # util is unknown: silent
    write(root / "util.py", HELPERS.format(pin=""))
    second, cache = lint(root, tmp_path / "c")
    assert [(r[0], r[3]) for r in rows(second)] == [("main.py", "SL301")]
    assert cache.hits == 0
    _forget_modules()


SLICER = (
    "import torch\n\n\ndef on_gpu(data):\n    return {k: v.cuda() for k, v in data.items()}\n\n\n"
    "def slice_rows(batch, rank):\n    for key, val in batch.items():\n"
    "        index = torch.tensor([rank, rank + 1], device=val.device)\n"
    "        batch[key] = val.index_select(0, index)\n    return batch\n"
)
CALLER = (
    "import torch\nfrom slicing import slice_rows\n\n\ndef step(data, rank):\n"
    "    batch = {{k: v{move} for k, v in data.items()}}\n    return slice_rows(batch, rank)\n"
)


def test_caller_in_another_module_decides_and_its_edit_invalidates(tmp_path):
    # slicing.py says nothing of where `batch` lives; its only caller, in another
    # module, passes CUDA tensors: the loop uploads one index per key. When the caller
    # changes to host tensors, slicing.py (unchanged) must be checked again.
    _forget_modules()
    root = tmp_path / "proj"
    write(root / "setup.cfg", "[metadata]\nname = proj\n")
    write(root / "slicing.py", SLICER)
    write(root / "train.py", CALLER.format(move=".cuda(non_blocking=True)"))
    first, _ = lint(root, tmp_path / "c")
    assert [(r[0], r[3]) for r in rows(first)] == [("slicing.py", "SL201")]
    write(root / "train.py", CALLER.format(move=".pin_memory()"))
    os.utime(root / "train.py", (2_000_000_000, 2_000_000_000))
    second, cache = lint(root, tmp_path / "c")
    assert rows(second) == []
    assert cache.hits == 0  # train.py changed; slicing.py read it
    _forget_modules()


# ---- damaged, foreign and unusual entries ----


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: b"garbage\n" + raw,
        lambda raw: raw[: len(raw) // 2],
        lambda raw: raw.replace(b"fake SL101", b"fake SL999"),  # body no longer matches
        lambda raw: b"",
        lambda raw: b"\xff\xfe\n\x00",
    ],
    ids=["garbage", "truncated", "tampered", "empty", "binary"],
)
def test_damaged_shard_is_ignored_and_replaced(tree, tmp_path, counted, damage):
    first, _ = lint(tree, tmp_path / "c")
    shard = next(s for s in shard_files(tmp_path / "c") if b'"a.py"' in s.read_bytes())
    shard.write_bytes(damage(shard.read_bytes()))
    second, cache = lint(tree, tmp_path / "c")
    assert (cache.hits, cache.misses) == (1, 3)  # only sub/c.py's shard is intact
    assert rows(second) == rows(first)
    _, cache = lint(tree, tmp_path / "c")
    assert cache.misses == 0  # rewritten whole


def _rewrite_entries(shard: Path, change) -> None:
    """Change a shard's body and give it a matching header, as a foreign writer could."""
    head, _, body = shard.read_bytes().partition(b"\n")
    entries = json.loads(body)
    change(entries)
    body = json.dumps(entries).encode()
    header = json.loads(head)
    header["body"] = __import__("streamlint.reads").reads.content_hash(body)
    shard.write_bytes(json.dumps(header).encode() + b"\n" + body)


@pytest.mark.parametrize(
    "change",
    [
        lambda e: e["a.py"]["diagnostics"][0].__setitem__(0, "two"),
        lambda e: e["a.py"]["diagnostics"][0].pop(),
        lambda e: e["a.py"].__setitem__("lines", "3"),
        lambda e: e["a.py"].__setitem__("deps", ["x"]),
        lambda e: e["a.py"].__setitem__("diagnostics", {"x": 1}),
        lambda e: e.__setitem__("a.py", 7),
        lambda e: e["a.py"]["diagnostics"][0].__setitem__(8, ["fix", "risky", []]),
    ],
    ids=["row-type", "short", "lines-type", "deps-type", "diags-type", "entry-type", "fix"],
)
def test_malformed_entry_is_a_miss(tree, tmp_path, counted, change):
    first, _ = lint(tree, tmp_path / "c")
    shard = next(s for s in shard_files(tmp_path / "c") if b'"a.py"' in s.read_bytes())
    _rewrite_entries(shard, change)
    second, cache = lint(tree, tmp_path / "c")
    assert cache.misses == 1 and rows(second) == rows(first)


def test_shard_of_another_directory_is_ignored(tree, tmp_path, counted):
    lint(tree, tmp_path / "c")
    shards = {json.loads(s.read_bytes().partition(b"\n")[0])["dir"]: s for s in shard_files(tmp_path / "c")}
    top, sub = shards[str(tree)], shards[str(tree / "sub")]
    top.write_bytes(sub.read_bytes())  # sub/'s entries where proj/'s belong
    _, cache = lint(tree, tmp_path / "c")
    assert cache.misses == 3 and cache.hits == 1


def test_shard_of_another_tool_version_is_ignored(tree, tmp_path, counted):
    lint(tree, tmp_path / "c")
    for shard in shard_files(tmp_path / "c"):
        head, _, body = shard.read_bytes().partition(b"\n")
        header = json.loads(head)
        header["tool"] = "0" * 24
        shard.write_bytes(json.dumps(header).encode() + b"\n" + body)
    _, cache = lint(tree, tmp_path / "c")
    assert cache.hits == 0


def test_fixes_survive_the_round_trip(tmp_path):
    from streamlint.cache import codec
    from streamlint.diagnostics import Diagnostic
    from streamlint.fixes.model import Applicability, Edit, Fix

    fix = Fix("Pass `non_blocking=True`", Applicability.UNSAFE, (Edit(3, 5, 3, 5, ", x=1"),))
    diag = Diagnostic("f.py", 3, 1, "SL201", "m", 3, 9, 3, "name", fix=fix, cell=2)
    back = codec.decode_diagnostic("g.py", json.loads(json.dumps(codec.encode_diagnostic(diag))))
    assert back.filename == "g.py"
    assert (back.fix, back.cell) == (fix, 2) and back == Diagnostic("g.py", *list(vars_of(diag))[1:])


def vars_of(diag):
    return [diag.filename, diag.row, diag.column, diag.code, diag.message, diag.end_row,
            diag.end_column, diag.noqa_row, diag.name]  # fmt: skip


def test_internal_errors_are_not_cached(tmp_path, counted):
    write(tmp_path / "p" / "x.py", "import torch.cuda\ncrash!\n")
    first, _ = lint(tmp_path / "p", tmp_path / "c")
    assert rows(first)[0][4].startswith("internal error")
    _, cache = lint(tmp_path / "p", tmp_path / "c")
    assert cache.misses == 1


def test_syntax_errors_are_cached(tmp_path, counted):
    write(tmp_path / "p" / "x.py", "import torch.cuda\nsyntax_error!\n")
    lint(tmp_path / "p", tmp_path / "c")
    second, cache = lint(tmp_path / "p", tmp_path / "c")
    assert cache.hits == 1 and rows(second)[0][3] == "SL000"


def test_entries_of_deleted_files_are_dropped(tree, tmp_path, counted):
    lint(tree, tmp_path / "c")
    (tree / "b.py").unlink()
    (tree / "a.py").write_text(FAKE + "# changed\n")  # something to write
    lint(tree, tmp_path / "c")
    shard = next(s for s in shard_files(tmp_path / "c") if b'"a.py"' in s.read_bytes())
    assert sorted(json.loads(shard.read_bytes().partition(b"\n")[2])) == ["a.py", "plain.py"]


# ---- atomic writes ----


def test_failed_write_leaves_the_old_shard_and_no_temporary_file(tree, tmp_path, counted, monkeypatch):
    lint(tree, tmp_path / "c")
    before = {s: s.read_bytes() for s in shard_files(tmp_path / "c")}
    (tree / "a.py").write_text("import torch.cuda\nhit(SL102)\n")

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    _, cache = lint(tree, tmp_path / "c")
    monkeypatch.undo()
    assert cache.warnings == [f"cannot write the cache in {tmp_path / 'c'}: No space left on device"]
    assert {s: s.read_bytes() for s in shard_files(tmp_path / "c")} == before
    assert not [p for p in (tmp_path / "c").rglob("*streamlint-tmp*")]


def test_unwritable_cache_directory_is_a_warning(tree, tmp_path, counted, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code = main(["check", "--cache-dir", str(blocker / "c"), str(tree)])
    _, err = capsys.readouterr()
    assert code == 1 and "streamlint: warning: cannot write the cache in" in err


# ---- command line ----


@pytest.mark.usefixtures("fake_engine")
class TestCommandLine:
    def test_cache_dir_option(self, tree, tmp_path, capsys):
        target = tmp_path / "elsewhere"
        assert main(["check", "--cache-dir", str(target), str(tree)]) == 1
        assert (target / "CACHEDIR.TAG").is_file() and shard_files(target)

    def test_default_location_is_the_project_root(self, tree, monkeypatch, capsys):
        monkeypatch.delenv("STREAMLINT_CACHE_DIR")
        write(tree / "pyproject.toml", "[tool.streamlint]\n")
        monkeypatch.chdir(tree / "sub")
        main(["check", "."])
        assert (tree / ".streamlint_cache" / "CACHEDIR.TAG").is_file()
        assert not (tree / "sub" / ".streamlint_cache").exists()

    def test_cache_dir_setting_is_relative_to_its_config(self, tree, monkeypatch, capsys):
        monkeypatch.delenv("STREAMLINT_CACHE_DIR")
        write(tree / "pyproject.toml", '[tool.streamlint]\ncache-dir = "var/lint"\n')
        monkeypatch.chdir(tree / "sub")
        main(["check", "."])
        assert (tree / "var" / "lint" / "CACHEDIR.TAG").is_file()
        assert main(["clean"]) == 0
        assert not (tree / "var" / "lint").exists()

    def test_cache_dir_setting_must_be_a_string(self, tree, monkeypatch, capsys):
        write(tree / "pyproject.toml", "[tool.streamlint]\ncache-dir = 3\n")
        monkeypatch.chdir(tree)
        assert main(["check", "."]) == 2
        assert "cache-dir must be a path" in capsys.readouterr().err

    @pytest.mark.parametrize("how", ["flag", "env"])
    def test_no_cache(self, tree, tmp_path, monkeypatch, capsys, how):
        target = tmp_path / "c"
        argv = ["check", "--cache-dir", str(target), str(tree)]
        if how == "flag":
            argv.insert(1, "--no-cache")
        else:
            monkeypatch.setenv("STREAMLINT_NO_CACHE", "1")
        assert main(argv) == 1
        assert not target.exists()

    def test_stdin_bypasses_the_cache(self, tmp_path, monkeypatch, capsys):
        import io

        target = tmp_path / "c"
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(FAKE.encode())))
        assert main(["check", "--cache-dir", str(target), "-"]) == 1
        assert not target.exists()

    def test_clean(self, tree, tmp_path, capsys):
        target = tmp_path / "c"
        main(["check", "--cache-dir", str(target), str(tree)])
        capsys.readouterr()
        assert main(["clean", "--cache-dir", str(target)]) == 0
        assert capsys.readouterr().out == f"removed {target}\n"
        assert not target.exists()
        assert main(["clean", "--cache-dir", str(target)]) == 0
        assert capsys.readouterr().out == f"no cache at {target}\n"

    def test_clean_leaves_what_is_not_ours(self, tree, tmp_path, capsys):
        target = tmp_path / "shared"
        write(target / "keep.txt", "mine")
        main(["check", "--cache-dir", str(target), str(tree)])
        main(["clean", "--cache-dir", str(target)])
        assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]
        home = tmp_path / "home"
        write(home / "notes.py", "x = 1\n")
        main(["clean", "--cache-dir", str(home)])
        assert "is not a streamlint cache: nothing removed" in capsys.readouterr().out
        assert (home / "notes.py").is_file()

    def test_clean_uses_the_environment_by_default(self, tree, private_cache, capsys):
        main(["check", str(tree)])
        assert private_cache.is_dir()
        main(["clean"])
        assert not private_cache.exists()


# ---- the cache never changes results; the pool never changes the order ----


@needs_fork
def test_output_is_the_same_with_one_or_two_processes(tmp_path, fake_engine):
    root = tmp_path / "many"
    for i in range(24):  # above the pool's threshold
        body = "import torch.cuda\n" + "x = 1\n" * (i * 37 % 11) + f"hit(SL{101 + i % 2})\n"
        write(root / f"d{i % 3}" / f"m{i:02}.py", body)
    serial, _ = lint(root, tmp_path / "c1", jobs=1, use_cache=False)
    parallel, _ = lint(root, tmp_path / "c2", jobs=2)
    warm, cache = lint(root, tmp_path / "c2", jobs=2)
    assert cache.hits == 24
    as_text = lambda results: [(r.path, rows([r]), r.analysed, r.lines) for r in results]  # noqa: E731
    assert as_text(serial) == as_text(parallel) == as_text(warm)
    assert [r.path for r in parallel] == sorted(r.path for r in parallel)


def _cli(*argv: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "streamlint", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True)  # fmt: skip


@pytest.mark.slow
def test_warm_run_on_fixtures_matches_cold_and_uncached(tmp_path):
    env = {**os.environ, "STREAMLINT_CACHE_DIR": str(tmp_path / "c")}
    argv = ("check", "fixtures", "--format", "json", "--exit-zero")
    cold = _cli(*argv, cwd=REPO, env=env)
    warm = _cli(*argv, cwd=REPO, env=env)
    uncached = _cli(*argv, "--no-cache", cwd=REPO, env=env)
    assert cold.returncode == 0 and json.loads(cold.stdout)  # there are findings to compare
    assert cold.stdout == warm.stdout == uncached.stdout


@pytest.mark.slow
def test_a_worker_gives_the_same_findings_whatever_order_it_checks_files_in(tmp_path):
    # A pool worker keeps what it made of the project from file to file (one per-run state): no file's findings may
    # depend on which files that worker happened to check before it. Script folders and packages both.
    items = list(discover([REPO / "fixtures" / "SL502"], SettingsResolver()).files)
    assert len(items) > 60

    def findings(order: list, run: str) -> dict:
        resolve.forget()
        checked = engine_run.check_chunk(order, None, None, digests=False, run=run)
        return {result.path: rows([result]) for result, *_ in checked}

    alone = {path: found for i, item in enumerate(items) for path, found in findings([item], f"alone {i}").items()}
    assert any(alone.values())
    assert findings(items, "forward") == alone
    assert findings(items[::-1], "backward") == alone
    # (one pair that differed: a script whose program was its neighbour's found a loop of its own hot)
    pair = [item for name in ("negative_model_output_fields_kept_on_device", "negative_metrics_summarized_at_listed")
            for item in items if item[0].name.startswith(name)]
    assert findings(pair, "pair") == {path: alone[path] for path in findings(pair, "pair again")}


@pytest.mark.slow
def test_warm_run_parses_nothing_and_does_not_import_libcst(tmp_path):
    env = {**os.environ, "STREAMLINT_CACHE_DIR": str(tmp_path / "c")}
    _cli("check", "fixtures/SL301", "--exit-zero", cwd=REPO, env=env)
    probe = (
        "import sys\nfrom streamlint.engine import lint as engine\n"
        "def refuse():\n    raise AssertionError('the checker was loaded')\n"
        "engine.load_checker = refuse\n"
        "from streamlint.cli import main\n"
        "code = main(['check', 'fixtures/SL301'])\n"
        "print('libcst' in sys.modules, code)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True)
    assert out.stdout.splitlines()[-1] == "False 1", out.stderr


# ---- pieces ----


def test_rule_codes_from_module_names_match_the_rules():
    from streamlint import rules

    assert rules.rule_codes() == tuple(r.code for r in rules.all_rules())


def test_settings_key_ignores_discovery_only_settings():
    base = Settings()
    codes = ("SL101",)
    assert keys.config_key(base, codes) == keys.config_key(
        Settings(extend_exclude=("x",), respect_gitignore=False, cache_dir=Path("c")), codes
    )
    assert keys.config_key(base, codes) != keys.config_key(base, ("SL101", "SL102"))
    assert keys.config_key(base, codes) != keys.config_key(Settings(ignore=("SL2",)), codes)


def test_parsed_modules_of_the_project_are_bounded(tmp_path, monkeypatch):
    _forget_modules()
    monkeypatch.setattr(project_modules, "MAX_CACHED_MODULES", 3)
    for i in range(6):
        write(tmp_path / f"h{i}.py", f"import torch\ndef f{i}():\n    return torch.zeros(3)\n")
        assert project_modules.read_source(tmp_path / f"h{i}.py", f"h{i}") is not None
    assert list(project_modules._parsed) == [str(tmp_path / f"h{i}.py") for i in (3, 4, 5)]
    monkeypatch.setattr(project_modules, "MAX_CACHED_SOURCE_BYTES", 250)
    write(tmp_path / "big.py", "import torch\n" + "x = 1\n" * 30)
    project_modules.read_source(tmp_path / "big.py", "big")
    kept = list(project_modules._parsed)
    assert kept[-1] == str(tmp_path / "big.py") and len(kept) < 3
    assert project_modules._parsed_bytes == sum(os.path.getsize(p) for p in kept) <= 250
    _forget_modules()


def test_resolution_probes_are_noted_on_every_lookup(tmp_path):
    from streamlint import reads

    _forget_modules()
    write(tmp_path / "main.py", "")
    for _ in range(2):  # the second lookup is answered from memory, and noted all the same
        with reads.recording() as notes:
            assert resolve.module_file(str(tmp_path / "main.py"), "missing.mod") is None
        assert notes and all(note is reads.ABSENT for note in notes.values())
        assert str(tmp_path / "missing" / "mod.py") in notes
    _forget_modules()


def test_notebook_results_keep_their_cells(tmp_path):
    from conftest import SL501_SNIPPET

    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# Title"},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": SL501_SNIPPET},
    ]  # fmt: skip
    notebook = {"cells": cells, "metadata": {"language_info": {"name": "python"}},
                "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    write(tmp_path / "nb" / "pipeline.ipynb", json.dumps(notebook))
    cold, _ = lint(tmp_path / "nb", tmp_path / "c")
    warm, cache = lint(tmp_path / "nb", tmp_path / "c")
    assert cache.hits == 1
    cells_of = lambda results: [(d.cell, d.row, d.column, d.code) for r in results for d in r.diagnostics]  # noqa: E731
    assert cells_of(warm) == cells_of(cold) == [(2, 3, 9, "SL501")]


def test_fix_from_a_warm_cache_writes_the_same_result(tmp_path, capsys):
    fixtures = REPO / "fixtures" / "SL201" / "fixes"
    before = fixtures / "pinned_and_side_stream_before.py"
    after = fixtures / "pinned_and_side_stream_after.py"
    cached, uncached = tmp_path / "a" / "train.py", tmp_path / "b" / "train.py"
    for target in (cached, uncached):
        write(target, before.read_text())
    argv = ["check", "--select", "SL201", "--cache-dir", str(tmp_path / "c")]
    main([*argv, str(cached)])  # fills the cache: the fixes are stored with the findings
    capsys.readouterr()
    assert main([*argv, "--fix", "--unsafe-fixes", str(cached)]) == 0
    assert main([*argv, "--no-cache", "--fix", "--unsafe-fixes", str(uncached)]) == 0
    assert cached.read_text() == uncached.read_text() == after.read_text()


def test_time_outs_are_not_cached_and_the_timeout_setting_keeps_entries(tmp_path, fake_engine, monkeypatch):
    from conftest import FakeSourceError
    from streamlint import deadline

    def slow_check(source, filename, rules):
        if "slow!" in source:
            raise deadline.AnalysisTimeout(30)
        return fake_check(source, filename, rules)

    monkeypatch.setattr(engine_lint, "load_checker", lambda: (slow_check, FakeSourceError))
    write(tmp_path / "p" / "slow.py", "import torch.cuda\nslow!\n")
    write(tmp_path / "p" / "fine.py", FAKE)
    first, _ = lint(tmp_path / "p", tmp_path / "c")
    assert [r[4] for r in rows(first) if r[0] == "slow.py"][0].startswith("analysis timed out")
    _, cache = lint(tmp_path / "p", tmp_path / "c")
    assert (cache.hits, cache.misses) == (1, 1)  # fine.py hits; slow.py is checked again
    write(tmp_path / "p" / "pyproject.toml", "[tool.streamlint]\ntimeout = 99\n")
    _, cache = lint(tmp_path / "p", tmp_path / "c")
    assert (cache.hits, cache.misses) == (1, 1)  # the time-out is not part of the key


def test_a_helper_summarised_then_checked_is_parsed_once(package, tmp_path, monkeypatch):
    import libcst

    lint(package, tmp_path / "c")
    # (an edit of its tokens: a comment alone keeps main.py's entry with no digest made)
    text = HELPERS.format(pin="") + "\n\ndef unrelated(x):\n    return x + 1\n"
    write(package / "helpers.py", text)
    _forget_modules()
    parsed: list[int] = []
    real = libcst.parse_module
    monkeypatch.setattr(libcst, "parse_module", lambda text, *a, **k: parsed.append(len(text)) or real(text, *a, **k))
    second, cache = lint(package, tmp_path / "c")
    assert (cache.hits, cache.misses) == (3, 1)
    # helpers.py is parsed once, whole, for its own check and the digest of make_host's summary now
    # (interproc/digests.py); its text the cache kept once, for the digest then; main.py not at all.
    assert sorted(parsed) == sorted([len(text), len(HELPERS.format(pin=""))])


def test_helper_walked_in_the_callers_context_rechecks_on_a_body_edit(tmp_path):
    # main.py calls scale_ under a side stream, so its result depends on the helper's
    # body (walked with main's values), not only on the helper's summary.
    _forget_modules()
    pkg = tmp_path / "pkg"
    write(pkg / "__init__.py", "")
    write(pkg / "ops.py", "import torch\n\n\ndef scale_(t):\n    return t.mul_(2)\n")
    write(pkg / "main.py", (
        "import torch\n\nfrom .ops import scale_\n\n\n"
        "def step(model, x):\n"
        "    side = torch.cuda.Stream()\n"
        "    side.wait_stream(torch.cuda.current_stream())\n"
        "    with torch.cuda.stream(side):\n"
        "        y = scale_(x)\n"
        "    return model(y)\n"
    ))
    first, _ = lint(pkg, tmp_path / "c")
    assert [(r[0], r[3]) for r in rows(first)] == [("main.py", "SL401")]
    write(pkg / "ops.py", "import torch\n\n\ndef scale_(t):\n    return t.clone()\n")  # now allocates on `side`
    os.utime(pkg / "ops.py", (2_000_000_000, 2_000_000_000))
    second, _ = lint(pkg, tmp_path / "c")
    assert sorted((r[0], r[3]) for r in rows(second)) == [("main.py", "SL401"), ("main.py", "SL404")]
    _forget_modules()


def test_uses_are_noted_only_for_a_cache_and_their_digest_deferred():
    from streamlint import reads

    with reads.recording(digests=False) as notes:
        reads.note("/x/helper.py", "abc")
        reads.use("/x/helper.py", "v3:f")
    assert notes == {"/x/helper.py": "abc"}  # the plain note stays
    with reads.recording() as notes:
        reads.note("/x/helper.py", "abc")
        reads.use("/x/helper.py", "v3:f")
    assert reads.parse_summary_note(notes["/x/helper.py"]) == ("abc", reads.DEFERRED, ("v3:f",))


def test_clean_removes_the_kept_texts_too(package, tmp_path, capsys):
    lint(package, tmp_path / "c")
    assert list((tmp_path / "c").glob("texts-*/*.z"))  # (the helper's text, kept for its importers)
    assert main(["clean", "--cache-dir", str(tmp_path / "c")]) == 0
    assert not (tmp_path / "c").exists()


def test_a_cold_run_makes_no_digest_and_a_lost_text_costs_a_recheck(package, tmp_path, monkeypatch):
    from streamlint.model.interproc import solver

    made = []
    real = solver.digest_of_use
    monkeypatch.setattr(solver, "digest_of_use", lambda *a: made.append(a[:2]) or real(*a))
    first, _ = lint(package, tmp_path / "c")
    assert made == []  # (digests are made by the run that finds a module changed)
    text = HELPERS.format(pin="") + "\n\ndef unrelated(x):\n    return x + 1\n"
    write(package / "helpers.py", text)
    for kept in (tmp_path / "c").glob("texts-*/*.z"):
        kept.write_bytes(b"damaged")
    _forget_modules()
    second, cache = lint(package, tmp_path / "c")
    # main.py cannot be settled without the helper's text then: it is checked again, same result
    assert (cache.hits, cache.misses) == (2, 2) and rows(second) == rows(first)
    # checked again, its entry carries the helper's new text: a later edit is settled by digests
    write(package / "helpers.py", text + "\n\ndef other(x):\n    return x - 1\n")
    _forget_modules()
    made.clear()
    third, cache = lint(package, tmp_path / "c")
    assert (cache.hits, cache.misses) == (3, 1) and rows(third) == rows(first)
    assert {name for _, name in made} == {"make_host"}
