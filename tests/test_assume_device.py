"""`assume-device = "cuda"`: tensors whose device the code never shows are taken as CUDA tensors, in a project
that says so; off by default. The fixture package (fixtures/crossmodule/assume_device_pkg) is a sampler whose
device its callers hand in: silent by default (its `.expected` snapshots), reported with the setting; tensors the
code puts on the host stay silent with it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import write

from streamlint.cache.keys import config_key
from streamlint.cli import main
from streamlint.config import ConfigError, Settings, load_settings
from streamlint.engine.lint import lint_text
from streamlint.model import declared
from streamlint.model.interproc import replay

PKG = Path(__file__).resolve().parent.parent / "fixtures" / "crossmodule" / "assume_device_pkg"
CUDA = replace(Settings.default(), assume_device="cuda")


def _found(name: str, settings: Settings) -> list[tuple[int, str]]:
    path = PKG / name
    return [(d.row, d.code) for d in lint_text(path.read_text(encoding="utf-8"), str(path), settings)]


def test_the_sampler_is_silent_by_default_and_reported_when_the_project_assumes_cuda():
    assert _found("sampler.py", Settings.default()) == []
    # the timestep made by a helper of another module on the caller's device, read every step; the scores of the
    # batch moved to that device, read every step; the lengths made on that device, read one element per step
    assert _found("sampler.py", CUDA) == [(22, "SL502"), (32, "SL502"), (32, "SL502")]
    assert _found("sampler.py", Settings.default()) == []  # (and again after: nothing of the setting stays)


def test_a_type_test_tells_a_tensor_whose_device_the_setting_tells():
    # `torch.is_tensor(v)` holds: `v` is a tensor (of a device not told); `v.item()` per step is read with the setting
    assert _found("trainer.py", CUDA) == [(11, "SL502")]
    assert _found("trainer.py", Settings.default()) == []


def test_walks_kept_for_a_run_are_kept_apart_per_assumed_device():
    """A run whose files have different settings never replays a walk made under the other assumption."""
    try:
        declared.use((), (), "cuda")
        assumed = replay.kept_walks()
        declared.use((), (), "")
        assert replay.kept_walks() is not assumed
        declared.use((), (), "cuda")
        assert replay.kept_walks() is assumed
    finally:
        declared.use((), ())


def test_tensors_the_code_puts_on_the_host_stay_silent_with_the_setting():
    assert _found("host_lengths.py", CUDA) == []
    assert _found("host_lengths.py", Settings.default()) == []


def test_the_key_in_pyproject_and_its_errors(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nassume-device = "cuda"\n')
    settings = load_settings(tmp_path)
    assert settings.assume_device == "cuda"
    assert Settings.default().assume_device is None
    assert config_key(settings, ("SL502",)) != config_key(Settings.default(), ("SL502",))  # a cached result differs
    for bad in ('"gpu"', '"cpu"', "true", '["cuda"]'):
        write(tmp_path / "pyproject.toml", f"[tool.streamlint]\nassume-device = {bad}\n")
        with pytest.raises(ConfigError, match="assume-device"):
            load_settings(tmp_path)


def test_the_command_line_reports_with_the_project_setting_only(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pkg = tmp_path / "pkg"
    for name in ("__init__.py", "schedule.py", "sampler.py", "host_lengths.py"):
        write(pkg / name, (PKG / name).read_text(encoding="utf-8"))
    assert main(["check", "--no-cache", "--format", "json", "pkg"]) == 0
    capsys.readouterr()
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nassume-device = "cuda"\n')
    assert main(["check", "--no-cache", "--format", "json", "pkg"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert sorted((Path(d["filename"]).name, d["location"]["row"], d["code"]) for d in found) == [
        ("sampler.py", 22, "SL502"), ("sampler.py", 32, "SL502"), ("sampler.py", 32, "SL502")]
    # the project's setting never outlives its run: a later analysis in this process assumes nothing
    assert declared.assumed_device() == ""


def test_a_move_to_a_device_the_code_never_shows_is_cuda_with_the_setting(tmp_path):
    # row 10.85: `x.to(device)` of a batch and a device the callers hand in: a CUDA tensor where the project assumes
    # CUDA (no copy of its own: the untold tensor already is one), nothing told by default
    path = tmp_path / "loop.py"
    write(path, "import torch\n\n\ndef train(model, loader, device):\n    for x in loader:\n"
                "        x = x.to(device)\n        loss = model(x)\n        print(loss.item())\n")
    found = [(d.row, d.code) for d in lint_text(path.read_text(encoding="utf-8"), str(path), CUDA)]
    assert found == [(8, "SL502")]
    assert lint_text(path.read_text(encoding="utf-8"), str(path), Settings.default()) == []


def test_a_project_file_that_spells_only_torch_is_checked_under_the_setting(tmp_path, capsys, monkeypatch):
    # the prefilter skips a file with no GPU word; under the setting a file whose tensors come in through
    # `.to(x.device)` (no `cuda` anywhere) can have findings, so `torch` is enough to check it
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "decode.py", "import torch\n\n\ndef decode(model, prompt, features, steps):\n"
                                          "    tokens = prompt.to(features.device)\n    for _ in range(steps):\n"
                                          "        best = model(tokens, features)[:, -1].argmax(-1)\n"
                                          "        print(best.item())\n"
                                          "        tokens = torch.cat([tokens, best[:, None]], dim=1)\n")
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nassume-device = "cuda"\n')
    assert main(["check", "--no-cache", "--format", "json", "pkg"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert [(Path(d["filename"]).name, d["location"]["row"], d["code"]) for d in found] == [("decode.py", 8, "SL502")]
    write(tmp_path / "pyproject.toml", "[tool.streamlint]\n")
    assert main(["check", "--no-cache", "--format", "json", "pkg"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_a_project_module_whose_device_is_never_shown_computes_on_cuda_with_the_setting():
    # the module built at module level and called per batch: its loss read each batch is reported with the setting;
    # the copy kept on the host (`.to("cpu")`) stays silent with it
    assert _found("evaluator.py", CUDA) == [(28, "SL502")]
    assert _found("evaluator.py", Settings.default()) == []


def test_a_legacy_typed_constructor_makes_host_memory_and_its_cuda_namesake_cuda_memory():
    # (the host buffer's fill and its plain copy race nothing, setting or not; the CUDA scratch is read per pass)
    assert _found("token_stream.py", CUDA) == [(39, "SL502")]
    assert _found("token_stream.py", Settings.default()) == [(39, "SL502")]


def test_a_method_no_tensor_has_tells_its_receiver_is_no_tensor():
    # (`net.get_avg_time_dict()` of a module moved with `.to(device)`: its values are not CUDA tensors)
    assert _found("timing_report.py", CUDA) == []


def test_a_join_with_a_piece_on_the_host_is_on_the_host_whatever_the_setting():
    # `b` is a piece of indices whose device the code never shows; `torch.full(...)` beside it is on the host, and
    # PyTorch joins tensors of one device only: the packet is on the host, and reading its items waits for nothing
    source = (
        "import torch\n"
        "\n"
        "\n"
        "def packets(indices, batch_size, lookup):\n"
        "    names = []\n"
        "    for j, b in enumerate(torch.split(indices, batch_size)):\n"
        "        packet = torch.cat((b, torch.full((b.shape[0], 1), j, dtype=torch.long)), dim=1)\n"
        "        for group_idx in torch.unique(packet[:, 0]):\n"
        "            names.append(lookup[group_idx.item()])\n"
        "    return names\n"
    )
    assert lint_text(source, "packets.py", CUDA) == []
    untold = source.replace("torch.full((b.shape[0], 1), j, dtype=torch.long)", "b")
    assert [d.code for d in lint_text(untold, "packets.py", CUDA)] == ["SL502"]
