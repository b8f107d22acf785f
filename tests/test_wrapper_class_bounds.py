"""The text tests that bound the wrapper-class mechanisms (model/duck.py): which classes
of other modules are worth parsing, which parameters are worth a duck-typing visit."""

from __future__ import annotations

import re
from pathlib import Path

from streamlint.model import api, duck

MEMORY_MODULE = '''\
import cupy


class DeviceMemory(
    object,
):
    def __init__(self):
        self.memory = None

    def assign(self, n):
        self.memory = cupy.cuda.alloc(n)

    def buffer(self, n):
        return self.memory
# a comment at column 0 does not end the class

    def from_device(self, src, n):
        self.memory.copy_from_device(src.data, n)


class Counter:
    def add(self, n):
        self.total = n
'''


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_class_text_ends_at_the_next_statement_no_deeper_than_the_class():
    text = MEMORY_MODULE.encode()
    start = re.search(rb"^class DeviceMemory", text, re.MULTILINE).start()
    block = duck._block(text, start, 0)
    assert b"def from_device" in block  # past the column-0 comment and the multi-line header
    assert b"class Counter" not in block


def test_only_classes_whose_own_text_has_a_gpu_word_are_worth_parsing(tmp_path):
    path = _write(tmp_path, "memory.py", MEMORY_MODULE)
    assert duck.may_define_gpu_class(path, "DeviceMemory")
    assert not duck.may_define_gpu_class(path, "Counter")  # the module has one, the class none
    assert duck.may_define_gpu_class(path, "Counter", given_gpu_values=True)
    assert not duck.may_define_gpu_class(path, "Missing", given_gpu_values=True)


def test_an_edited_module_is_read_again(tmp_path):
    path = _write(tmp_path, "memory.py", MEMORY_MODULE)
    assert not duck.may_define_gpu_class(path, "Counter")
    path.write_text(MEMORY_MODULE + "\n        self.stream = cupy.cuda.Stream()\n")
    assert duck.may_define_gpu_class(path, "Counter")


def test_receivers_are_names_called_with_two_methods_an_imported_gpu_module_defines(tmp_path):
    from streamlint.checker import parse
    from streamlint.model.analysis import FileAnalyzer

    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    _write(pkg, "__init__.py", "")
    _write(pkg, "memory.py", MEMORY_MODULE)
    user = _write(pkg, "user.py", '''\
import cupy
from pkg import memory


def exchange(buf, other, n):
    buf.from_device(other, n)
    view = buf.buffer(n)
    other.add(n)
    other.buffer(n)
    return view
''')
    source = user.read_text()
    analyzer = FileAnalyzer(parse(source), path=str(user), source=source)
    analyzer.run()  # (binds the module's imports)
    names = duck.receivers(analyzer)
    assert "buf" in names  # from_device and buffer: both defined by DeviceMemory
    assert "other" in names  # add and buffer are both defined in memory.py (the text test is per module)
    assert "cupy" not in names


def test_aliases_fold_by_the_longest_dotted_prefix():
    assert api.normalize("chainer.cuda.Stream.null") == "cupy.cuda.Stream.null"
    assert api.normalize("chainer.backends.cuda.cupy.asarray") == "cupy.asarray"
    assert api.normalize("chainer.cudax") == "chainer.cudax"  # a prefix of a word is no alias
    assert api.normalize("numpy.asarray") == "numpy.asarray"
