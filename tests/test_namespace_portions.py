"""A folder without `__init__.py` inside a package is a namespace portion of it (PEP 420): its modules are named
from the package's top and listed with the package; a folder whose name is no module name is not."""

from __future__ import annotations

from pathlib import Path

from streamlint.model import resolve


def _touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_module_of_a_namespace_portion_is_named_from_the_package_top(tmp_path):
    resolve.forget()
    _touch(tmp_path / "engine" / "__init__.py")
    layer = _touch(tmp_path / "engine" / "worker" / "layers" / "decoder.py")
    script = _touch(tmp_path / "engine" / "tool-scripts" / "run.py")
    loose = _touch(tmp_path / "scripts" / "bench.py")
    assert resolve.canonical_name(layer) == "engine.worker.layers.decoder"
    assert resolve.canonical_name(script) == "run"  # (`tool-scripts` names no module)
    assert resolve.canonical_name(loose) == "bench"  # (no package above it)


def test_package_listing_takes_in_namespace_portions(tmp_path):
    resolve.forget()
    _touch(tmp_path / "engine" / "__init__.py")
    model = _touch(tmp_path / "engine" / "worker" / "model.py")
    layer = _touch(tmp_path / "engine" / "worker" / "layers" / "decoder.py")
    _touch(tmp_path / "engine" / "tool-scripts" / "run.py")
    listed = resolve.enclosing_package_files(str(layer), 100, 100)
    assert str(model.resolve()) in {str(Path(f).resolve()) for f in listed}
    assert not any("tool-scripts" in f for f in listed)
