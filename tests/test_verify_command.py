"""`streamlint verify` on the command line: what it says before any GPU work."""

from __future__ import annotations

from streamlint.cli import main


def test_a_missing_path_is_no_such_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["verify", "nonexistent.py"]) == 2
    err = capsys.readouterr().err
    assert err == "streamlint verify: no such file: nonexistent.py\n"
    assert "fixture" not in err


def test_a_missing_fixture_directory_is_no_such_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fixtures").mkdir()
    assert main(["verify", "fixtures", "nowhere"]) == 2
    assert "no such file: nowhere" in capsys.readouterr().err


def test_a_scripts_arguments_need_not_be_paths(tmp_path):
    from streamlint.commands.verify import first_missing

    script = tmp_path / "train.py"
    script.write_text("print(1)\n")
    assert first_missing([str(script), "--epochs", "3"]) is None
    assert first_missing([str(script), "--", "not-a-file"]) is None


def test_help_names_both_tracers_in_its_description(capsys):
    # (not only in --tracer's choices: the paragraph a user reads first)
    assert main(["verify", "--help"]) == 0
    out = capsys.readouterr().out
    description = " ".join(out.split("\n\n")[1].split())
    assert "PyTorch profiler" in description and "CUPTI" in description
