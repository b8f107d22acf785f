"""reverse.py's text reading for the callers of a method (duck typing by method name)."""

from streamlint.model import reverse


def test_signature_accepts_by_arity_and_keywords():
    sig = reverse._Signature("self, model, stream=None):\n    pass")
    assert sig.known and sig.positional == ["model", "stream"] and sig.required == 1
    assert sig.accepts(1, frozenset()) and sig.accepts(2, frozenset())
    assert sig.accepts(1, frozenset({"stream"}))
    assert not sig.accepts(0, frozenset()) and not sig.accepts(3, frozenset())
    assert not sig.accepts(1, frozenset({"other"}))
    assert reverse._Signature("self):").accepts(0, frozenset())
    assert not reverse._Signature("self):").accepts(2, frozenset())
    star = reverse._Signature("self, *args, **kwargs):")
    assert star.accepts(5, frozenset({"anything"}))


def test_signature_unread_header_may_accept_anything():
    sig = reverse._Signature("self, mode='a,b'):")
    assert not sig.known and sig.accepts(7, frozenset())


def test_methods_and_their_classes_from_text():
    text = b"""
class Base(object):
    def reduce(self, x):
        raise NotImplementedError


class Nccl(mod.Base):
    def helper(self):
        def reduce(y):
            return y
        return reduce

    def reduce(self, x, stream=None):
        pass


def reduce(x):
    pass
"""
    bases, defs = reverse._classes_and_defs(text, "reduce")
    assert bases["Nccl"] == {"Base"} and bases["Base"] == {"object"}
    assert [owner for owner, _ in defs] == ["Base", reverse.UNPLACED, "Nccl", None]
    assert reverse._ancestors("Nccl", bases) == {"Nccl", "Base"}
