"""The v3 summary as a value (codec, digest) and the solver's results on small programs:
a callee's effects taken into its caller, classes composed through their methods' stores,
loops, releases."""

import textwrap

import libcst as cst

from streamlint.model.file_model import analyze_file
from streamlint.model.summary import codec
from streamlint.model.transfer import interpret


def hazards(source: str):
    model = analyze_file(cst.parse_module(textwrap.dedent(source)), "prog.py")
    return model, sorted((h.kind.value, h.function.split(".", 1)[1], h.site.split("#")[1]) for h in model.hazards)


def kinds(source: str) -> list[str]:
    return [kind for kind, _, _ in hazards(source)[1]]


PIPELINE = """
import torch

def stage(x, s):
    with torch.cuda.stream(s):
        return x.to("cuda", non_blocking=True)

def consume(y):
    return y * 2

def run(n):
    s = torch.cuda.Stream()
    h = torch.empty(n, pin_memory=True)
    y = stage(h, s)
    {wait}
    z = consume(y)
    {record}
    return z
"""


def test_callee_under_the_caller_stream_and_consumer_in_another_callee():
    found = kinds(PIPELINE.format(wait="", record=""))
    assert "read_after_write" in found


def test_wait_in_the_caller_orders_the_callees():
    found = kinds(PIPELINE.format(wait="torch.cuda.current_stream().wait_stream(s)", record=""))
    assert "read_after_write" not in found
    assert found == ["release_without_record"]  # used on the current stream, made on s, dropped
    fixed = PIPELINE.format(wait="torch.cuda.current_stream().wait_stream(s)",
                            record="y.record_stream(torch.cuda.current_stream())")
    assert kinds(fixed) == []


def test_summaries_round_trip_and_digests_ignore_nothing_that_matters():
    model, _ = hazards(PIPELINE.format(wait="", record=""))
    for (_, _), walked in model.solved.walks.items():
        text = codec.dumps(walked.summary)
        again = codec.loads(text)
        assert again == walked.summary
        assert codec.sealed(again).digest == codec.sealed(walked.summary).digest
    stage = [w.summary for (q, c), w in model.solved.walks.items() if q.endswith(".stage") and c.args]
    assert stage and stage[0].effects, "the callee's copy is an effect of its summary"
    other, _ = hazards(PIPELINE.format(wait="", record="").replace('"cuda"', '"cpu"'))
    changed = [w.summary for (q, c), w in other.solved.walks.items() if q.endswith(".stage") and c.args]
    assert codec.sealed(changed[0]).digest != codec.sealed(stage[0]).digest


PREFETCHER = """
import torch

class Prefetcher:
    def __init__(self):
        self.stream = torch.cuda.Stream()

    def preload(self, batch):
        with torch.cuda.stream(self.stream):
            self.next = batch.cuda(non_blocking=True)

    def next_batch(self):
        {wait}
        b = self.next
        {record}
        return b + 1

def train(batches):
    p = Prefetcher()
    for b in batches:
        p.preload(b.pin_memory())
        x = p.next_batch()
"""


def test_class_state_composes_methods_through_a_caller():
    found = kinds(PREFETCHER.format(wait="", record=""))
    assert "read_after_write" in found and "release_without_record" in found


def test_class_wait_and_record_stream_silence_it():
    waited = PREFETCHER.format(wait="torch.cuda.current_stream().wait_stream(self.stream)", record="")
    assert kinds(waited) == ["release_without_record"]
    recorded = PREFETCHER.format(wait="torch.cuda.current_stream().wait_stream(self.stream)",
                                 record="b.record_stream(torch.cuda.current_stream())")
    assert kinds(recorded) == []


def test_host_read_of_a_non_blocking_copy_before_and_after_a_sync():
    source = """
    import torch
    def f(n):
        t = torch.randn(n, device="cuda")
        h = t.to("cpu", non_blocking=True)
        {sync}
        return float(h)
    """
    assert kinds(source.format(sync="")) == ["host_read_before_sync"]
    assert kinds(source.format(sync="torch.cuda.synchronize()")) == []


def test_each_function_is_walked_once_per_context():
    interpret.WALKS.clear()
    hazards(PREFETCHER.format(wait="", record=""))
    assert interpret.WALKS and max(interpret.WALKS.values()) == 1


LAUNCHER = """
from numba import cuda

def launch(kernel, n, *args, stream=None):
    kernel[n // 256 + 1, 256, stream](n, *args)

def run(k, h, g):
    d = cuda.to_device(h)
    e = cuda.to_device(g)
    launch(k, 1024, d, e)
"""


def test_positional_arguments_past_star_args_bind_no_keyword_only_parameter():
    """`launch(k, n, d, e)`: `d` and `e` fill `*args`; the keyword-only `stream` stays unbound
    (neither a context fact nor an argument of the apply: its None default tells nothing to a function that never
    compares it with None), so no array is taken for a stream."""
    model, found = hazards(LAUNCHER)
    contexts = [context for (qualname, context) in model.solved.walks if qualname == "prog.launch"]
    assert contexts and all(context.arg("stream") is None for context in contexts)
    summary = next(w.summary for (q, _), w in model.solved.walks.items() if q == "prog.launch")
    assert summary.params == ("kernel", "n", "*args", "stream")
    assert found == []


def test_a_methods_walks_from_part_of_its_class_state_are_not_reported():
    # the first round of class composition walks a method from the constructor's stores alone (here none: the
    # streams and the event are set in `init`); the method's own walk starts from every method's stores joined
    source = """
    import torch

    class StreamsAttention:
        def init(self):
            self.stream1 = torch.cuda.Stream()
            self.event = torch.cuda.Event()

        def forward(self, query):
            self.event.record()
            self.event.wait(self.stream1)
            with torch.cuda.stream(self.stream1):
                out = query * 2
            torch.cuda.current_stream().wait_stream(self.stream1)
            return out
    """
    model, found = hazards(source)
    assert found == []
    walks = [(ctx, key in model.solved.unreported) for key, ctx in
             ((key, key[1]) for key in model.solved.walks if key[0].endswith("StreamsAttention.forward"))]
    states = {bool(ctx.receiver_state and ctx.receiver_state[0][0]): unreported for ctx, unreported in walks}
    assert states == {False: True, True: False}  # the bare walk is unreported, the one from the joined state reported
