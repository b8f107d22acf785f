"""The class-text filter (model/class_text.py): which methods' text assigns `self.<attr>`.

It replaces generating each method's code from the tree, so it must never miss an
assignment the tree has (a miss would lose a finding); it may name extra ones."""
from streamlint.model.class_text import class_starts, method_assignments

SOURCE = '''
import torch

class Prefetcher(Base,
                 Other):
    """Doc whose lines sit at column 0:
text at column 0
    """
    depth = 2

    @property
    def stream(self):
        self.cached = torch.cuda.Stream()
        def inner():
            self.from_inner = 1
        return self.cached

    async def preload(self, x):
        note = """
self.in_string = 3
"""
        self.next_input = x.cuda(non_blocking=True)  # self.in_comment = 1
    limit = 3
    def reset(self): self.next_input = None

def free(self):
    self.after_class = 1
'''


def assignments(source: str, name: str, methods=()):
    return method_assignments(source, class_starts(source), name, methods)


def test_every_method_and_its_nested_functions_are_read():
    found = assignments(SOURCE, "Prefetcher", ["stream", "preload", "reset"])
    assert found is not None
    assert found["stream"] == {"cached", "from_inner"}
    assert {"next_input", "in_string"} <= found["preload"]  # (strings and comments may add names)
    assert found["reset"] == {"next_input"}


def test_the_class_ends_at_its_dedent_even_after_a_column_zero_docstring():
    found = assignments(SOURCE, "Prefetcher", ["stream"])
    assert found is not None
    assert all("after_class" not in attrs for attrs in found.values())


def test_unreadable_classes_fall_back_to_the_tree():
    twice = SOURCE + "\nclass Prefetcher:\n    def other(self):\n        self.x = 1\n"
    assert assignments(twice, "Prefetcher", ["stream"]) is None  # two classes of one name
    assert assignments(SOURCE, "Missing") is None
    # a method the text does not show (made by a decorator factory, a nested class...)
    assert assignments(SOURCE, "Prefetcher", ["stream", "made_elsewhere"]) is None


def test_nested_and_indented_classes():
    source = (
        "def factory():\n    class Local:\n        def set(self):\n"
        "            self.ready = True\n    return Local\n"
    )
    assert assignments(source, "Local", ["set"]) == {"set": frozenset({"ready"})}


def test_stream_attributes_from_the_body_text_match_the_tree():
    import libcst as cst

    from streamlint.model.class_text import body_text
    from streamlint.model.evidence import stream_attributes

    source = (
        "class Overlap:\n"
        "    def step(self):\n"
        "        self.side.wait_stream(torch.cuda.current_stream())\n"
        "        ev = self.copy_stream \\\n"
        "            .record_event()\n"
        "        self.other.wait(3)\n"
        "        y = (self.third\n"
        "             .wait_event(ev))\n"
        "x = self.after_class.wait_stream(s)\n"
    )
    node = cst.parse_module(source).body[0]
    body = body_text(source, class_starts(source), "Overlap")
    assert body is not None and "after_class" not in body
    assert stream_attributes(node, source, body) == stream_attributes(node, source) == {
        "side", "copy_stream", "third"}
