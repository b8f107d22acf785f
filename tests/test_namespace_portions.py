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


def test_a_top_level_namespace_folder_the_package_imports_itself_through_names_its_modules(tmp_path):
    # row 10.86: `basicsr/models/` (a package) in `basicsr/` (no `__init__.py`): its modules write
    # `from basicsr.models.base_model import BaseModel`, so that is their name; a src layout's modules import
    # `pkg.x`, never `src.pkg.x`, so `src` stays out of their names
    resolve.forget()
    _touch(tmp_path / "basicsr" / "models" / "__init__.py")
    base = _touch(tmp_path / "basicsr" / "models" / "base_model.py", "class BaseModel:\n    pass\n")
    sr = _touch(tmp_path / "basicsr" / "models" / "sr_model.py",
                "from basicsr.models.base_model import BaseModel\n\n\nclass SRModel(BaseModel):\n    pass\n")
    _touch(tmp_path / "src" / "pkg" / "__init__.py")
    inner = _touch(tmp_path / "src" / "pkg" / "a.py", "from pkg.b import f\n")
    _touch(tmp_path / "src" / "pkg" / "b.py", "def f():\n    pass\n")
    assert resolve.canonical_name(base) == "basicsr.models.base_model"
    assert resolve.canonical_name(sr) == "basicsr.models.sr_model"
    assert resolve.canonical_name(tmp_path / "basicsr" / "models" / "__init__.py") == "basicsr.models"
    assert resolve.canonical_name(inner) == "pkg.a"


def test_a_comment_or_string_that_spells_the_longer_name_is_no_import(tmp_path):
    resolve.forget()
    _touch(tmp_path / "tools" / "lib" / "__init__.py")
    mod = _touch(tmp_path / "tools" / "lib" / "m.py", 'DOC = """\nfrom tools.lib import m\n"""\n')
    assert resolve.canonical_name(mod) == "lib.m"
