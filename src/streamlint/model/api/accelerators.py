"""Library abstractions that stand for a framework namespace (CodeQL's `typeModel`).

DeepSpeed routes all its stream work through `get_accelerator()`, whose CUDA
implementation forwards to `torch.cuda` (`Stream`, `stream`, `current_stream`,
`default_stream`, `synchronize`, `Event`) and adds a few spellings of its own
(`pin_memory(t)`, `current_device_name()`). `torch.accelerator` is PyTorch's own
device-generic namespace: on a CUDA machine it is `torch.cuda`.
"""

from __future__ import annotations

from streamlint.model.api.facts import Fact
from streamlint.model.ops import OpKind as K

# A call of the key returns (an object that behaves as) the namespace of the value.
NAMESPACE_RETURNS: dict[str, str] = {
    "deepspeed.accelerator.get_accelerator": "torch.cuda",
    "deepspeed.accelerator.real_accelerator.get_accelerator": "torch.cuda",
    "deepspeed.get_accelerator": "torch.cuda",
}

# Importing these packages brings their framework's semantics (their tensors are its tensors).
IMPLIES_FRAMEWORK: dict[str, str] = {"deepspeed": "torch"}

# Module spellings that are another module.
MODULE_ALIASES: dict[str, str] = {
    "torch.accelerator": "torch.cuda",
}

# The accelerator's own methods, spelled in the namespace it stands for.
FUNCTIONS: dict[str, Fact] = {
    "torch.cuda.pin_memory": Fact(K.PIN, "torch", result="pinned:torch"),
    "torch.cuda.current_device_name": Fact(None, "torch", result="cuda_device"),
    "torch.cuda.device_name": Fact(None, "torch", result="cuda_device"),
    "torch.cuda.current_device": Fact(None, "torch", result="cuda_device"),
}
