"""The words without which a file cannot have a finding, apart from the API tables so
that the engine can prefilter (and a cached run can start) without loading the model."""

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
