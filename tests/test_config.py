"""Configuration: discovery of [tool.streamlint], validation, selection, overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write

from streamlint import selection
from streamlint.cli import main
from streamlint.config import (
    DEFAULT_EXCLUDES,
    ConfigError,
    Settings,
    SettingsResolver,
    load_settings,
)
from streamlint.engine.run import lint_paths
from streamlint.selection import RuleSelection
from streamlint.settings import DEFAULT_PER_FILE_IGNORES, rules_for_file

ALL_FAKE = "import torch.cuda\nhit(SL101)\nhit(SL102)\nhit(SL202)\nhit(SL501)\n"


def found_codes(results) -> list[str]:
    return [d.code for r in results for d in r.diagnostics]


def test_default_settings():
    s = Settings.default()
    assert s.select is None and s.ignore == () and s.per_file_ignores == DEFAULT_PER_FILE_IGNORES
    assert s.exclude == DEFAULT_EXCLUDES
    for name in (".git", ".venv", "build", "dist", "node_modules", "__pycache__", "site-packages"):
        assert name in s.exclude


_SYNC_IN_LOOP_AND_RACE = """import torch


def run(loader):
    side = torch.cuda.Stream()
    for x in loader:
        y = x.cuda() * 2
        print(y.sum().item())
    with torch.cuda.stream(side):
        z = y + 1
    return z
"""


def test_test_and_benchmark_files_get_only_the_race_rules_by_default(tmp_path):
    tests = ("tests/test_loop.py", "pkg/loop_test.py", "benchmarks/bench_loop.py", "pkg/unit_tests/infer_loop.py",
             "corelib/attn/test.py", "pkg/tests.py", "scripts/benchmark_allreduce.py", "tools/bench_copy.py",
             "dietgpu/benchmark.py")
    for name in (*tests, "src/loop.py"):
        write(tmp_path / name, _SYNC_IN_LOOP_AND_RACE)
    by_file = {Path(r.path).relative_to(tmp_path).as_posix(): sorted({d.code for d in r.diagnostics})
               for r in lint_paths([tmp_path], Settings.default())}
    assert by_file["src/loop.py"] == ["SL401", "SL404", "SL502"]
    for name in tests:
        assert by_file[name] == ["SL401", "SL404"], name


def test_a_config_per_file_ignores_replaces_the_defaults_and_an_extension_adds_to_them(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.streamlint.per-file-ignores]\n"other/*.py" = ["SL4"]\n')
    assert load_settings(tmp_path / "tests" / "test_x.py").per_file_ignores == (("other/*.py", ("SL4",)),)
    write(tmp_path / "pyproject.toml", '[tool.streamlint.extend-per-file-ignores]\n"other/*.py" = ["SL4"]\n')
    extended = load_settings(tmp_path / "tests" / "test_x.py").per_file_ignores
    assert extended == DEFAULT_PER_FILE_IGNORES + (("other/*.py", ("SL4",)),)


def test_nearest_pyproject_with_our_table_wins(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nselect = ["SL1"]\n')
    # A pyproject without [tool.streamlint] is not ours: the search walks past it.
    write(tmp_path / "pkg" / "pyproject.toml", '[project]\nname = "x"\n')
    write(tmp_path / "pkg" / "sub" / "pyproject.toml", '[tool.streamlint]\nignore = ["SL502"]\n')
    target = write(tmp_path / "pkg" / "mod.py", "")
    assert load_settings(target).select == ("SL1",)
    inner = load_settings(tmp_path / "pkg" / "sub")
    assert inner.ignore == ("SL502",) and inner.select is None
    assert inner.root == tmp_path / "pkg" / "sub"


def test_no_config_gives_defaults(tmp_path):
    target = write(tmp_path / "a.py", "")
    # tmp_path has no pyproject; ancestors (/tmp, /) have none with our table either.
    assert load_settings(target).select is None


def test_explicit_config_file_with_top_level_keys(tmp_path):
    cfg = write(tmp_path / "streamlint.toml", 'select = ["SL5"]\nextend-exclude = ["gen"]\n')
    s = load_settings(tmp_path, cfg)
    assert s.select == ("SL5",) and s.extend_exclude == ("gen",)


@pytest.mark.parametrize(
    "body, fragment",
    [
        ('selct = ["SL1"]', "unknown key 'selct' (did you mean 'select'?)"),
        ('select = ["SL999"]', "unknown rule selector 'SL999'"),
        ('select = ["XYZ"]', "unknown rule selector 'XYZ'"),
        ('select = "SL1"', "expected a list of strings"),
        ('ignore = [1]', "expected a list of strings"),
        ('per-file-ignores = ["a"]', "per-file-ignores must be a table"),
        ('per-file-ignores = {"a.py" = ["SL8"]}', "unknown rule selector 'SL8'"),
        ('respect-gitignore = "yes"', "respect-gitignore must be true or false"),
        ("select = [", "invalid TOML"),
    ],
)
def test_invalid_config_is_a_clear_error(tmp_path, body, fragment):
    write(tmp_path / "pyproject.toml", "[tool.streamlint]\n" + body + "\n")
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path)
    assert fragment in str(info.value)
    assert "pyproject.toml" in str(info.value)


def test_invalid_config_exits_2(tmp_path, capsys, fake_engine):
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nbogus = 1\n')
    write(tmp_path / "a.py", ALL_FAKE)
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'bogus'" in err and "Traceback" not in err


def test_missing_explicit_config_exits_2(tmp_path, capsys, fake_engine):
    write(tmp_path / "a.py", ALL_FAKE)
    assert main([str(tmp_path), "--config", str(tmp_path / "nope.toml")]) == 2
    assert "config file not found" in capsys.readouterr().err


def test_prefixes_and_reserved_family_are_valid():
    assert selection.validate("SL1") == "SL1"
    assert selection.validate("SL") == "SL"
    assert selection.validate("ALL") == "ALL"
    assert selection.validate("SL4") == "SL4"  # announced family, accepted ahead of time
    with pytest.raises(selection.SelectorError):
        selection.validate("SL8")  # no SL8xx rule exists


@pytest.mark.usefixtures("fake_engine")
class TestSelection:
    def selected(self, **layer) -> list[str]:
        s = Settings(**layer)
        return [r.code for r in rules_for_file(s, "x.py")]

    def test_default_is_everything(self):
        assert self.selected() == ["SL101", "SL102", "SL202", "SL301", "SL501", "SL502"]

    def test_select_prefix(self):
        assert self.selected(select=("SL1",)) == ["SL101", "SL102"]

    def test_select_code_and_extend(self):
        chosen = self.selected(select=("SL101",), extend_select=("SL5",))
        assert chosen == ["SL101", "SL501", "SL502"]

    def test_more_specific_wins(self):
        assert self.selected(select=("SL1",), ignore=("SL101",)) == ["SL102"]
        assert self.selected(select=("SL101",), ignore=("SL1",)) == ["SL101"]
        assert self.selected(select=("ALL",), ignore=("SL",)) == []

    def test_command_line_layer_overrides_config(self):
        config = Settings(select=("SL1",), ignore=("SL101",))
        cli = config.with_overrides(RuleSelection(select=("SL101", "SL5")))
        assert [r.code for r in rules_for_file(cli, "x.py")] == ["SL101", "SL501", "SL502"]
        # A CLI layer without --select keeps the config's choice and adds to it.
        cli = config.with_overrides(RuleSelection(extend_select=("SL502",), ignore=("SL102",)))
        assert [r.code for r in rules_for_file(cli, "x.py")] == ["SL502"]


@pytest.mark.usefixtures("fake_engine")
def test_per_file_ignores(tmp_path):
    write(
        tmp_path / "pyproject.toml",
        '[tool.streamlint]\n[tool.streamlint.per-file-ignores]\n'
        '"tests/*.py" = ["SL1"]\n"gen_*.py" = ["ALL"]\n',
    )
    write(tmp_path / "tests" / "t.py", ALL_FAKE)
    write(tmp_path / "deep" / "gen_x.py", ALL_FAKE)
    write(tmp_path / "src" / "tests" / "t.py", ALL_FAKE)  # pattern is anchored to the root
    results = {Path(r.path).relative_to(tmp_path).as_posix(): r for r in lint_paths([tmp_path])}
    assert [d.code for d in results["tests/t.py"].diagnostics] == ["SL202", "SL501"]
    assert results["deep/gen_x.py"].diagnostics == []
    assert len(results["src/tests/t.py"].diagnostics) == 4


@pytest.mark.usefixtures("fake_engine")
def test_cli_flags_override_config(tmp_path, capsys, monkeypatch):
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nselect = ["SL1"]\nignore = ["SL101"]\n')
    write(tmp_path / "a.py", ALL_FAKE)
    monkeypatch.chdir(tmp_path)
    assert main(["a.py", "--format", "json"]) == 1
    assert '"SL102"' in (out := capsys.readouterr().out) and '"SL101"' not in out
    assert main(["a.py", "--select", "SL101,SL5", "-q", "--output-format", "concise"]) == 1
    out = capsys.readouterr().out
    assert [line.split()[1] for line in out.splitlines()] == ["SL101", "SL501"]
    assert main(["a.py", "--ignore", "SL102"]) == 0
    assert "All checks passed!" in capsys.readouterr().out


@pytest.mark.usefixtures("fake_engine")
def test_unknown_cli_selector_exits_2(tmp_path, capsys):
    write(tmp_path / "a.py", ALL_FAKE)
    assert main([str(tmp_path), "--select", "SL7"]) == 2
    assert "invalid value for --select: unknown rule selector 'SL7'" in capsys.readouterr().err


def test_resolver_caches_and_layers(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nselect = ["SL1"]\n')
    write(tmp_path / "a" / "b" / "c.py", "")
    resolver = SettingsResolver(overrides=RuleSelection(ignore=("SL102",)))
    s1 = resolver.for_path(tmp_path / "a" / "b" / "c.py")
    s2 = resolver.for_path(tmp_path / "a")
    assert s1 is s2
    assert s1.select == ("SL1",) and s1.overrides == (RuleSelection(ignore=("SL102",)),)
