"""The GPU's vocabulary as the syntax layer's text queries take it (syntax/gpu_words.py): the words
without which a file has no finding, and the methods of the fact tables that only streams, events and
tensors of a known memory have."""

from __future__ import annotations

from streamlint.model.api import cuda_core, cupy, numba_cuda, torch_api
from streamlint.model.prefilter import PREFILTER_KEYS

# A name or string spells the GPU when it contains one of these.
GPU_WORDS = tuple(word.decode() for word in PREFILTER_KEYS)
# The methods of streams and events, and those that tell a tensor's memory (`record_stream`,
# `pin_memory`): a function that calls one works with the GPU whatever else its text spells.
GPU_METHODS = frozenset().union(*(set(table.STREAM_METHODS) | set(table.EVENT_METHODS)
                                  for table in (cuda_core, cupy, numba_cuda, torch_api)))
GPU_METHODS |= frozenset(method for method, memory in torch_api.RECEIVER_EVIDENCE.items() if memory)
