"""The words without which a file cannot have a finding, apart from the API tables so
that the engine can prefilter (and a cached run can start) without loading the model."""

from __future__ import annotations

# A file none of whose bytes contain any of these words cannot produce a finding, so
# it is not parsed: every rule needs a CUDA device, a stream, pinned memory, a
# non-blocking copy or one of the non-torch frameworks to appear in the text. (Plain
# "torch" is not enough: most of PyTorch's own files import torch and never touch CUDA.)
PREFILTER_KEYS: tuple[bytes, ...] = (
    b"cuda", b"cupy", b"numba", b"Stream", b"pin_memory", b"non_blocking",
    b"accelerator", b"Event",
    # NCCL collectives: the tensors they are given are CUDA tensors (api/nccl.py).
    b"all_reduce", b"all_gather", b"reduce_scatter", b"all_to_all",
    # CUDA-aware MPI: device buffers made in other modules go to MPI here (api/mpi.py).
    b"mpi4py",
)

# Under `assume-device = "cuda"` the project declares every tensor whose device its code never shows a CUDA
# tensor, so a file that only spells `torch` (its tensors come in through `.to(x.device)` or from a caller) can
# have findings too.
ASSUMED_DEVICE_KEYS: tuple[bytes, ...] = (b"torch",)


def may_have_findings(data: bytes, assume_device: str | None = None) -> bool:
    """Can a file with these bytes have a finding (else it is not parsed)?"""
    keys = PREFILTER_KEYS + (ASSUMED_DEVICE_KEYS if assume_device == "cuda" else ())
    return any(word in data for word in keys)
