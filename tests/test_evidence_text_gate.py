"""The text gate in front of the body-evidence walk (evidence.text_may_show): a module
whose text cannot hold any evidence skips the walk; one that can is walked as before."""
from streamlint.model.evidence import text_may_show

TORCH = frozenset({"torch"})


def test_no_evidence_word_means_no_walk():
    assert not text_may_show("def f(x):\n    return x.to(device)\n", TORCH)
    # the method alone is not enough: `to` is evidence only with non_blocking and "cpu"
    assert not text_may_show("y = x.to('cuda', non_blocking=True)\n", TORCH)


def test_each_kind_of_evidence_opens_the_gate():
    assert text_may_show("t.record_stream(s)\n", TORCH)
    assert text_may_show("h = x.to('cpu', non_blocking=True)\n", TORCH)
    assert text_may_show("dist.all_reduce(buf)\n", TORCH)
    assert text_may_show("d.copy_to_host(out)\n", frozenset({"numba"}))
    assert text_may_show("a.set(host)\n", frozenset({"cupy"}))


def test_evidence_needs_its_framework_imported():
    assert not text_may_show("d.copy_to_host(out)\n", TORCH)
    assert not text_may_show("dist.all_reduce(buf)\n", frozenset({"cupy"}))


def test_the_memo_flag_skips_only_the_body_walk():
    import libcst as cst

    from streamlint.model.evidence import TEXT_SAYS_NONE, Kind, param_kinds
    from streamlint.model.values import UNKNOWN

    source = "def keep(t, side):\n    t.record_stream(side)\n"
    node = cst.parse_module(source).body[0]
    walk = param_kinds(node, ["t"], TORCH, lambda e: None, lambda e: UNKNOWN, memo={TEXT_SAYS_NONE: False})
    assert walk == {"t": Kind.TORCH_CUDA}
    skipped = param_kinds(node, ["t"], TORCH, lambda e: None, lambda e: UNKNOWN, memo={TEXT_SAYS_NONE: True})
    assert skipped == {}
    assert text_may_show(source, TORCH)  # (so the analysis never sets the flag for this text)


def test_class_attributes_a_cuda_only_method_is_called_on():
    from streamlint.model.evidence import device_attributes

    source = (
        "class Batch:\n"
        "    def record_stream(self, s):\n"
        "        self._values.record_stream(s)\n"
        "        lengths = self._lengths\n"
        "        if lengths is not None:\n"
        "            lengths.record_stream(s)\n"
        "        w = self._weights\n"
        "        w = self._offsets if w is None else w\n"
        "        w.record_stream(s)\n"
        "    def host(self):\n"
        "        return self._keys.to('cpu', non_blocking=True)\n"
        "    def plain(self):\n"
        "        return self._other.to('cuda')\n"
    )
    body = source.split("\n", 1)[1]
    assert device_attributes(TORCH, body) == {"_values", "_lengths", "_keys"}
    assert device_attributes(frozenset({"cupy"}), body) == frozenset()  # torch not imported
    assert device_attributes(TORCH, None) == frozenset()  # no class text: no evidence read
