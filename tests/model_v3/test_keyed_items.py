"""Row 9.45: what code stores under keys written out in a mapping it does not otherwise know (a loader's batch dict,
a parameter) is what that mapping holds there: in the function, in its callers after the call (the summary's
`param_keys`), and in the callees it is handed to (the argument's told keys)."""

from __future__ import annotations

import textwrap

from streamlint.config import Settings
from streamlint.engine.lint import lint_text

HELPER = """
import torch


def prepare_batch(target):
    target["img"] = target["img"].cuda()
    target["mask"] = target["mask"].cuda()
    return target

"""


def _found(source: str) -> list[tuple[int, str]]:
    return [(d.row, d.code) for d in lint_text(textwrap.dedent(source), "prog.py", Settings.default())]


def test_items_a_helper_moves_by_key_are_cuda_in_the_caller():
    source = HELPER + textwrap.dedent("""
        def fit(loader):
            losses = []
            for target in loader:
                target = prepare_batch(target)
                losses.append((target["img"] * target["mask"]).sum().item())
            return losses
    """)
    assert _found(source) == [(15, "SL502")]


def test_the_helpers_moves_reach_the_caller_without_its_return_being_used():
    source = HELPER + textwrap.dedent("""
        def fit(loader):
            losses = []
            for target in loader:
                prepare_batch(target)
                losses.append(target["img"].sum().item())
            return losses
    """)
    assert _found(source) == [(15, "SL502")]


def test_a_model_given_the_moved_batch_returns_cuda_tensors():
    source = HELPER + textwrap.dedent("""
        class Wrapper(torch.nn.Module):
            def __init__(self, net):
                super().__init__()
                self.net = net

            def forward(self, target):
                return self.net.tick(target)


        def fit(net, loader):
            wrapper = Wrapper(net)
            losses = []
            for target in loader:
                target = prepare_batch(target)
                loss = wrapper(target)
                losses.append(loss.item())
            return losses
    """)
    assert _found(source) == [(26, "SL502")]


def test_a_key_the_helper_did_not_move_stays_the_loaders():
    source = HELPER + textwrap.dedent("""
        def fit(loader):
            frames = []
            for target in loader:
                target = prepare_batch(target)
                frames.extend(target["frame_id"].tolist())
            return frames
    """)
    assert _found(source) == []


def test_what_a_name_held_on_an_earlier_pass_is_not_the_next_batchs():
    # the store at the end of a pass names the batch by `target`; the next pass's batch is another object, whose
    # "img" the host-side helper below leaves in host memory
    source = """
        import torch


        def normalise(target):
            target["img"] = target["img"].float() / 255.0
            return target


        def fit(model, loader):
            losses = []
            for target in loader:
                target = normalise(target)
                losses.append(model(target["img"]).sum().item())
                target["img"] = torch.empty(0, device="cuda")
            return losses
    """
    assert _found(source) == []


def test_a_string_key_store_into_a_tensor_parameter_is_an_item_of_a_mapping():
    source = """
        import torch


        def fit(model, loader):
            losses = []
            for batch in loader:
                batch = batch.to("cuda")
                batch["aux"] = torch.zeros(3)
                losses.append(model(batch["aux"]).sum().item())
            return losses
    """
    assert _found(source) == []
