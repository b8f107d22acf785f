"""A program that makes CUDA PyTorch's default device (`torch.set_default_tensor_type('torch.cuda.FloatTensor')`,
`torch.set_default_device("cuda")`): its factories with no `device=` make CUDA tensors from then on."""

from __future__ import annotations

import libcst as cst

from streamlint.model.syntax.children import walk
from streamlint.model.syntax.names import dotted

_SETTERS = frozenset({"torch.set_default_tensor_type", "torch.set_default_device"})


def sets_cuda_default(module: cst.Module) -> bool:
    """Does the module call one of the setters with a CUDA type or device (a string or a `torch.cuda.*Tensor` type,
    `torch.device("cuda")`)?"""
    for node in walk(module, skip=()):
        if type(node) is cst.Call and dotted(node.func) in _SETTERS and node.args and _cuda(node.args[0].value):
            return True
    return False


def _cuda(value: cst.BaseExpression) -> bool:
    if type(value) is cst.SimpleString:
        text = value.raw_value  # type: ignore[attr-defined]
        return text.startswith("cuda") or text.startswith("torch.cuda.")
    if type(value) is cst.Call and dotted(value.func) == "torch.device" and value.args:
        return _cuda(value.args[0].value)
    name = dotted(value)
    return name is not None and name.startswith("torch.cuda.")
