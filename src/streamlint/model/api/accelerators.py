"""Library abstractions that stand for a framework namespace (CodeQL's `typeModel`).

`torch.accelerator` is PyTorch's own device-generic namespace: on a CUDA machine it is
`torch.cuda`. DeepSpeed's `get_accelerator()` is a declared model (api/models/deepspeed.toml,
the format of model/declared.py), as a project's own wrappers are.
"""

from __future__ import annotations

# DeepSpeed's `get_accelerator()` and its own spellings (`pin_memory(t)`,
# `current_device_name()`) are declared models now: api/models/deepspeed.toml.


# Module spellings that are another module.
MODULE_ALIASES: dict[str, str] = {
    "torch.accelerator": "torch.cuda",
}
