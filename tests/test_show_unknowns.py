"""`check --show-unknowns` (`--explain-silence`): per function with GPU work, what the model could not see where it
mattered, at its place; what a caller's context or the code itself tells is not listed, and the listing follows
the project's settings (declared models, `assume-device`)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from conftest import write

from streamlint.cli import main

PKG = Path(__file__).resolve().parent.parent / "fixtures" / "crossmodule" / "assume_device_pkg"

TRAIN = textwrap.dedent('''\
    import torch
    from fastkern import fused_add


    def fused(x, n):
        y = torch.ones(n, device="cuda")
        return fused_add(y, x)


    def upload(batch):
        return batch.to("cuda", non_blocking=True)


    def upload_pinned(n):
        pinned = torch.empty(n, pin_memory=True)
        return pinned.to("cuda", non_blocking=True)


    def read(x):
        return x.item()


    def helper(t):
        return t.item()


    def caller(n):
        return helper(torch.ones(n, device="cuda"))


    def host_only(values):
        return sum(values) / len(values)
''')

FUSED_MODEL = textwrap.dedent('''\
    [tool.streamlint]

    [[tool.streamlint.model]]
    target = "fastkern.fused_add"
    kind = "kernel"
    reads = ["arg0", "arg1"]
    returns = "device"
''')


def _listed(capsys, *args: str) -> list[tuple[str, int, int, str, str]]:
    assert main(["check", "--show-unknowns", "--format", "json", *args]) == 0
    data = json.loads(capsys.readouterr().out)
    return [(Path(e["filename"]).name, e["row"], e["column"], e["function"], e["aspect"]) for e in data["unknowns"]]


def test_what_is_listed_and_what_is_not(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "train.py", TRAIN)
    assert _listed(capsys, "train.py") == [
        ("train.py", 7, 12, "fused", "opaque"),  # a library call given a CUDA tensor, resolved by nothing
        ("train.py", 11, 12, "upload", "memory"),  # a non-blocking upload of a batch whose memory is not shown
        ("train.py", 20, 12, "read", "device"),  # a host read of a parameter nothing shows is a tensor, or where
    ]
    # not listed: the pinned upload (its memory is shown), the helper (its only caller hands it a CUDA tensor),
    # the caller, and the function with no GPU work


def test_a_declared_model_makes_the_opaque_call_seen(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "train.py", TRAIN)
    write(tmp_path / "pyproject.toml", FUSED_MODEL)
    assert [e[3] for e in _listed(capsys, "train.py")] == ["upload", "read"]


def test_the_text_names_each_place_and_the_remedies(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "train.py", TRAIN)
    assert main(["check", "--explain-silence", "train.py"]) == 0  # (the name for it)
    out = capsys.readouterr().out
    assert "train.py: in `fused`\n  train.py:7:12: opaque: `fused_add(...)`: `fastkern.fused_add` is given GPU" in out
    assert "train.py:20:12: device: `x.item()`: the host reads parameter `x`, whose device the code never shows" in out
    assert "`helper`" not in out and "upload_pinned" not in out and "host_only" not in out
    assert "[[tool.streamlint.model]]" in out and "assume-device" in out
    assert "SL" not in out  # a listing, not findings


def test_the_listing_follows_assume_device(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("__init__.py", "schedule.py", "sampler.py"):
        write(tmp_path / "pkg" / name, (PKG / name).read_text(encoding="utf-8"))
    before = _listed(capsys, "pkg")
    # the timestep read (a view of the helper's tensor) and the scheduler's method, both in the sampler's loop
    assert ("sampler.py", 22, 50, "Sampler.sample", "device") in before
    assert ("sampler.py", 22, 23, "Sampler.sample", "opaque") in before
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nassume-device = "cuda"\n')
    after = _listed(capsys, "pkg")
    assert not [e for e in after if e[4] == "device" and e[0] == "sampler.py" and e[1] == 22]
    assert ("sampler.py", 22, 23, "Sampler.sample", "opaque") in after


def test_stdin_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--show-unknowns", "-", "--stdin-filename", "a.py"]) == 2
    assert "--show-unknowns" in capsys.readouterr().err


STREAMS = textwrap.dedent('''\
    import torch

    config = {}


    def gather(x, w):
        y = torch.nn.functional.linear(x.cuda(non_blocking=True), w)
        config["load_stream"].wait_stream(torch.cuda.current_stream())
        return y
''')


def test_a_wait_on_a_stream_not_identified_is_a_stream_and_a_framework_function_is_no_opaque_call(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "streams.py", STREAMS)
    # the upload's host memory is not shown; `F.linear` has no row but PyTorch's invariant says where it runs
    assert _listed(capsys, "streams.py") == [
        ("streams.py", 7, 36, "gather", "memory"),
        ("streams.py", 8, 5, "gather", "stream"),
    ]


def test_a_file_that_cannot_be_analysed_is_named_with_why(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "broken.py", "import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    # no GPU word: not analysed, and not named
    write(tmp_path / "plain.py", "def mean(xs):\n    return sum(xs) / len(xs)\n")
    assert main(["check", "--show-unknowns", "--format", "json", "."]) == 0
    data = json.loads(capsys.readouterr().out)
    not_analysed = [(Path(e["filename"]).name, "SyntaxError" in e["error"]) for e in data["not_analysed"]]
    assert not_analysed == [("broken.py", True)]
    assert data["unknowns"] == [] and data["functions_with_gpu_work"] == 0
