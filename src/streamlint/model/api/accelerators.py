"""Namespaces that stand for a framework's (CodeQL's `typeModel`): `torch.accelerator` is
`torch.cuda` on a CUDA machine. Libraries' wrappers (DeepSpeed's `get_accelerator()`) are
declared models (api/models/*.toml)."""

from __future__ import annotations

MODULE_ALIASES: dict[str, str] = {
    "torch.accelerator": "torch.cuda",
}
