"""Declared API models: the TOML format (good and bad input), the config keys that carry
them, the built-in models, the cache key, and their effect on findings."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import write

from streamlint.cache.keys import config_key
from streamlint.cli import main
from streamlint.config import ConfigError, Settings, load_settings
from streamlint.declared_toml import ModelError, load_file, parse_model, parse_models
from streamlint.engine.lint import lint_text
from streamlint.model import declared
from streamlint.model.api.facts import Block, Stream
from streamlint.model.api.op_kinds import OpKind

WRAPPERS = """
[tool.streamlint]

[[tool.streamlint.model]]
target = "mylib.get_accelerator"
namespace = "torch.cuda"

[[tool.streamlint.model]]
target = "mylib.copy_async"
kind = "h2d"
stream = "arg2:stream"
writes = ["arg0:dst"]
reads = ["arg1:src"]
host = "arg1:src"

[[tool.streamlint.model]]
target = "mylib.fence"
kind = "device-sync"
"""

USE = """
import torch
from mylib import copy_async, fence, get_accelerator


def upload(host):
    dev = torch.empty(1024, device="cuda")
    s = get_accelerator().Stream()
    copy_async(dev, host, s)
    return dev.sum()


def upload_fenced(host):
    dev = torch.empty(1024, device="cuda")
    s = get_accelerator().Stream()
    copy_async(dev, host, s)
    fence()
    return dev.sum()
"""


# ------------------------------------------------------------------ good input
def test_namespace_model():
    model = parse_model({"target": "mylib.get_accelerator", "namespace": "torch.cuda"}, "t")
    assert model.namespace == "torch.cuda" and model.kind is None


def test_effect_model_becomes_a_fact():
    model = parse_model({"target": "mylib.copy_async", "kind": "h2d", "stream": "arg2:stream",
                         "writes": ["arg0"], "reads": ["arg1:src"]}, "t")
    fact = model.fact()
    assert fact.kind is OpKind.COPY_H2D and fact.stream is Stream.ARG
    assert fact.stream_arg.pos == 2 and fact.stream_arg.kw == "stream"
    assert fact.writes[0].pos == 0 and fact.reads[0].kw == "src"
    assert fact.async_api  # an async copy given a stream: the pinned-memory rules apply


def test_sync_kinds_block_by_default_and_others_do_not():
    assert parse_model({"target": "m.fence", "kind": "device-sync"}, "t").fact().blocking is Block.ALWAYS
    assert parse_model({"target": "m.k", "kind": "kernel"}, "t").fact().blocking is Block.NEVER
    assert parse_model({"target": "m.c", "kind": "d2h", "blocking": True}, "t").fact().blocking is Block.ALWAYS


def test_stream_or_current_and_method_targets():
    model = parse_model({"target": "lib.Plan().execute", "kind": "kernel", "stream": "stream|current",
                         "reads": ["self"]}, "t")
    fact = model.fact()
    assert fact.stream is Stream.ARG_OR_CURRENT and fact.stream_arg.kw == "stream" and fact.self_reads
    assert "lib.Plan" in declared.Registry([model]).classes


def test_models_file(tmp_path):
    path = write(tmp_path / "models.toml", '[[model]]\ntarget = "a.b"\nkind = "kernel"\n')
    (model,) = load_file(path)
    assert model.target == "a.b"


def test_builtin_models_load_and_cover_the_libraries():
    targets = {m.target for m in declared.builtin_models()}
    assert "deepspeed.accelerator.get_accelerator" in targets
    assert "rmm.DeviceBuffer().copy_from_host" in targets
    assert "nvmath.linalg.advanced.Matmul().execute" in targets
    registry = declared.active()
    assert registry.namespaces["deepspeed.accelerator.get_accelerator"] == "torch.cuda"
    assert registry.namespaces["colossalai.accelerator.get_accelerator"] == "torch.cuda"


def test_config_carries_models(tmp_path):
    write(tmp_path / "pyproject.toml", WRAPPERS)
    settings = load_settings(tmp_path)
    assert [m.target for m in settings.models] == ["mylib.get_accelerator", "mylib.copy_async", "mylib.fence"]


def test_config_models_file_key(tmp_path):
    write(tmp_path / "extra.toml", '[[model]]\ntarget = "mylib.sync_all"\nkind = "device-sync"\n')
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nmodels = ["extra.toml"]\n')
    assert [m.target for m in load_settings(tmp_path).models] == ["mylib.sync_all"]


def test_models_change_the_cache_key(tmp_path):
    write(tmp_path / "pyproject.toml", WRAPPERS)
    with_models = load_settings(tmp_path)
    write(tmp_path / "pyproject.toml", "[tool.streamlint]\n")
    without = load_settings(tmp_path)
    assert config_key(with_models, ("SL401",)) != config_key(without, ("SL401",))


def test_declared_models_drive_findings(tmp_path):
    write(tmp_path / "pyproject.toml", WRAPPERS)
    settings = load_settings(tmp_path)
    found = lint_text(textwrap.dedent(USE), str(tmp_path / "use.py"), settings)
    rows = {(d.code, d.row) for d in found}
    assert ("SL401", 10) in rows  # dev written on s by the modelled copy, read on the current stream
    assert not any(d.row > 12 for d in found)  # the modelled fence orders everything
    # Without the models the wrapper is opaque: nothing to report.
    assert not [d for d in lint_text(textwrap.dedent(USE), "use.py", Settings.default()) if d.code == "SL401"]


DOWNLOAD = """
[tool.streamlint]

[[tool.streamlint.model]]
target = "mylib.download_async"
kind = "d2h"
stream = "arg2:stream"
writes = ["arg0:dst"]
reads = ["arg1:src"]
host = "arg0:dst"
"""

FETCH = """
import torch
from mylib import download_async


def fetch(n):
    dev = torch.ones(n, device="cuda")
    host = torch.empty(n, pin_memory=True)
    s = torch.cuda.Stream()
    download_async(host, dev, s)
    return host.numpy().sum()
"""


def test_a_declared_download_reads_and_writes_the_buffers_it_names(tmp_path):
    # The model is a fact row: its `reads`/`writes` are the copy's source and destination.
    write(tmp_path / "pyproject.toml", DOWNLOAD)
    found = lint_text(textwrap.dedent(FETCH), str(tmp_path / "use.py"), load_settings(tmp_path))
    rows = {(d.code, d.row) for d in found}
    assert ("SL401", 10) in rows  # `dev`, made on the current stream, read by the copy on `s`
    assert ("SL403", 11) in rows  # the host reads `host` before the asynchronous copy into it finished


def test_explain_applies_the_projects_models(tmp_path, capsys):
    write(tmp_path / "pyproject.toml", WRAPPERS)
    write(tmp_path / "use.py", textwrap.dedent(USE))
    assert main(["explain", f"{tmp_path / 'use.py'}::upload"]) == 0
    assert "mylib.copy_async: H2D copy on the stream made at" in capsys.readouterr().out


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("entry, fragment", [
    ({"kind": "kernel"}, "key 'target'"),
    ({"target": "nodots", "kind": "kernel"}, "key 'target'"),
    ({"target": "a.b", "namespace": "torch.cuda", "kind": "kernel"}, "not both"),
    ({"target": "a.b", "namespace": "jax"}, "key 'namespace'"),
    ({"target": "a.b"}, "missing key 'kind'"),
    ({"target": "a.b", "kind": "teleport"}, "key 'kind'"),
    ({"target": "a.b", "kind": "kernel", "strem": "arg0"}, "did you mean 'stream'"),
    ({"target": "a.b", "kind": "kernel", "stream": "arg-1"}, "key 'stream'"),
    ({"target": "a.b", "kind": "kernel", "stream": 3}, "key 'stream'"),
    ({"target": "a.b", "kind": "kernel", "reads": "arg0"}, "key 'reads'"),
    ({"target": "a.b", "kind": "kernel", "writes": ["0"]}, "key 'writes'"),
    ({"target": "a.b", "kind": "kernel", "writes": ["self"]}, "'self' names the receiver"),
    ({"target": "a.b", "kind": "kernel", "blocking": "yes"}, "key 'blocking'"),
    ({"target": "a.b", "kind": "kernel", "returns": "tensor"}, "key 'returns'"),
    ({"target": "a.b", "kind": "kernel", "framework": "jax"}, "key 'framework'"),
    ({"target": "a.b", "kind": "value", "reads": ["arg0"]}, "kind 'value'"),
    ({"target": "a.b", "namespace": "torch.cuda", "stream": "current"}, "unknown key 'stream'"),
    ("a.b", "expected a table"),
])
def test_bad_models_name_the_key(entry, fragment):
    with pytest.raises(ModelError) as err:
        parse_model(entry, "pyproject.toml: model[0]")
    assert fragment in str(err.value)
    assert "model[0]" in str(err.value)


def test_model_must_be_an_array_of_tables():
    with pytest.raises(ModelError, match="array of tables"):
        parse_models({"target": "a.b"}, "t")


def test_bad_models_file(tmp_path):
    path = write(tmp_path / "m.toml", "model = 3\nother = 1\n")
    with pytest.raises(ModelError, match="unknown top-level key 'other'"):
        load_file(path)
    path = write(tmp_path / "n.toml", "[[model]\n")
    with pytest.raises(ModelError, match="invalid TOML"):
        load_file(path)


def test_config_errors_for_models(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nmodels = ["missing.toml"]\n')
    with pytest.raises(ConfigError, match="missing file"):
        load_settings(tmp_path)
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\n[[tool.streamlint.model]]\ntarget = "a.b"\nkind = "x"\n')
    with pytest.raises(ConfigError, match=r"model\[0\] \(target 'a.b'\): key 'kind'"):
        load_settings(tmp_path)


def test_bad_model_exits_2(tmp_path, capsys):
    body = '[tool.streamlint]\n[[tool.streamlint.model]]\ntarget = "a.b"\nkind = "kernel"\nstrem = "s"\n'
    write(tmp_path / "pyproject.toml", body)
    write(tmp_path / "a.py", "import torch\n")
    assert main(["check", str(tmp_path)]) == 2
    assert "unknown key 'strem'" in capsys.readouterr().err


def test_every_builtin_model_file_is_valid():
    root = Path(declared.__file__).parent / "api" / "models"
    files = sorted(root.glob("*.toml"))
    assert {f.stem for f in files} >= {"deepspeed", "colossalai", "rmm", "nvmath"}
    checked = tuple(m for path in files for m in load_file(path, f"streamlint's models/{path.name}"))
    assert checked == declared.builtin_models()  # (loaded unchecked: the config layer's check holds)


def test_readme_model_examples_are_valid(tmp_path):
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in readme.split("```toml\n")[1:]]
    blocks = [b for b in blocks if "[[tool.streamlint.model]]" in b]
    assert len(blocks) >= 2
    write(tmp_path / "pyproject.toml", "[tool.streamlint]\n" + "\n".join(blocks))
    targets = {m.target for m in load_settings(tmp_path).models}
    assert {"mylib.copy_async", "mylib.get_accelerator", "mylib.fence"} <= targets


def test_per_thread_default_stream_key(tmp_path):
    src = textwrap.dedent("""
        import cupy as cp

        def two_streams(n):
            s1 = cp.cuda.Stream()
            s2 = cp.cuda.Stream()
            a = cp.zeros(n)
            with s1:
                b = a * 2
            c = a + 1
            with s2:
                d = a * 3
            return b, c, d
    """)
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nper-thread-default-stream = ["cupy"]\n')
    settings = load_settings(tmp_path)
    assert settings.per_thread_default_stream == ("cupy",)
    assert not [d for d in lint_text(src, str(tmp_path / "a.py"), settings) if d.code == "SL101"]
    assert [d for d in lint_text(src, "a.py", Settings.default()) if d.code == "SL101"]
    write(tmp_path / "pyproject.toml", '[tool.streamlint]\nper-thread-default-stream = ["jax"]\n')
    with pytest.raises(ConfigError, match="per-thread-default-stream"):
        load_settings(tmp_path)
