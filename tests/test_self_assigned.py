"""The text gate in front of inherited attributes (project.self_assigned): a base class's
module is parsed for `self.<attr>` only when its text assigns that attribute from an
expression that names a GPU framework, a device or a stream."""
from streamlint.model import project


def test_assignments_of_every_form_are_seen(tmp_path):
    base = tmp_path / "base.py"
    base.write_text(
        "class Engine:\n"
        "    def __init__(self):\n"
        "        self.device = torch.device('cuda')\n"
        "        self.stream: torch.cuda.Stream = torch.cuda.Stream()\n"
        "        self.buf += torch.ones(3)\n"
        "        self.steps: int = 0\n"
        "        if self.ready == True:\n"
        "            self.cache[0] = 1\n"
    )
    # a setting (`self.steps = 0`) is no evidence when inherited: not read for it
    assert project.self_assigned(base) == frozenset({"device", "stream", "buf"})


def test_a_changed_file_is_read_again(tmp_path):
    base = tmp_path / "base.py"
    base.write_text("class A:\n    def f(self):\n        self.x = 1\n")
    assert "y" not in project.self_assigned(base)
    base.write_text("class A:\n    def f(self):\n        self.x = 1\n        self.y = torch.zeros(2)\n")
    assert "y" in project.self_assigned(base)


def test_a_missing_file_assigns_nothing(tmp_path):
    assert project.self_assigned(tmp_path / "absent.py") == frozenset()
