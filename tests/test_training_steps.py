"""The structural reading of a training step's `backward` (model/interproc/training_steps.py)."""
import textwrap

import libcst as cst
import pytest

from streamlint.model.interproc import training_steps


def _reads(code: str) -> bool:
    module = cst.parse_module(textwrap.dedent(code))
    fn = module.body[0]
    assert isinstance(fn, cst.FunctionDef)
    params = [p.name.value for p in fn.params.params]
    def qualname(expr: cst.BaseExpression) -> str:
        return cst.Module([]).code_for_node(expr)  # (the imports are plain: `import torch`)

    return training_steps.runs_backward_every_call(
        fn, params, lambda name: name in ("torch", "debug_api"), qualname)


@pytest.mark.parametrize("code", [
    """
    def backward(self, loss):
        loss.backward()
    """,
    """
    def backward(self, loss, retain_graph=False):
        if self.zero:
            self.optimizer.backward(loss, retain_graph=retain_graph)
        elif self.amp:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            torch.autograd.backward(loss)
    """,
    """
    def backward(self, loss):
        if self.accum > 1:
            loss = self._scale(loss)
        try:
            self.scaler.scale(loss).backward()
        finally:
            self.timer.stop()
    """,
])
def test_every_call(code):
    assert _reads(code)


@pytest.mark.parametrize("code", [
    # under a flag, no else
    """
    def backward(self, loss):
        if self.check_grads:
            loss.backward()
    """,
    # a return before it on some path
    """
    def backward(self, loss):
        if loss is None:
            return
        loss.backward()
    """,
    # in a loop: the loop decides
    """
    def backward(self, losses):
        for loss in losses:
            loss.backward()
    """,
    # the method's own loss, not one it is handed
    """
    def backward(self, batch_size):
        loss = self.model(self.batch)
        loss.backward()
    """,
    # a one-off by its name, a module's function
    """
    def warmup(self, loss):
        loss.backward()
    """,
    """
    def backward(self, loss):
        debug_api.backward(loss)
    """,
    # a check of functions it is handed on an input it makes from a shape parameter
    """
    def verify(self, test_fn, ref_fn, shape, device="cuda"):
        x = torch.randn(shape, device=device, requires_grad=True)
        dy = torch.randn_like(x)
        y_ref = ref_fn(x)
        y_ref.backward(dy)
    """,
    # an input built from settings with defaults: no loss is handed in
    """
    def verify(self, tst_func, N=8, C=64, ref_func=reference):
        shape = (N, C)
        x = 0.5 * torch.randn(shape, requires_grad=True)
        y_ref = ref_func(x)
        y_ref.backward(torch.ones_like(y_ref))
    """,
])
def test_not_every_call(code):
    assert not _reads(code)
