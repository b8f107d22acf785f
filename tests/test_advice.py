"""Advice text is code the user can paste: no placeholder for an unknown index."""
from streamlint.rules._shared import over_elements, wait_idiom


def test_a_stream_drawn_from_a_collection_is_waited_for_in_a_loop():
    assert wait_idiom("self._block_streams[...]", "the current stream", "torch") == (
        "`for s in self._block_streams: torch.cuda.current_stream().wait_stream(s)`"
    )
    advice = wait_idiom("the current stream", "streams[...]", "torch")
    assert advice == "`for s in streams: s.wait_stream(torch.cuda.current_stream())`"
    assert over_elements("`streams[...].synchronize()`", ("streams[...]",)) == "`for s in streams: s.synchronize()`"


def test_named_streams_are_left_as_they_are():
    assert over_elements("`side.synchronize()`", ("side",)) == "`side.synchronize()`"
    assert wait_idiom("side", "the current stream", "torch") == "`torch.cuda.current_stream().wait_stream(side)`"


def test_two_streams_spelled_alike_get_no_self_wait():
    """`torch.cuda.current_stream().wait_stream(torch.cuda.current_stream())` orders nothing: never advised."""
    advice = wait_idiom("the current stream", "the current stream", "torch")
    assert "wait_stream" not in advice and "event recorded" in advice
    assert "wait_event" not in wait_idiom("s", "s", "cupy")
