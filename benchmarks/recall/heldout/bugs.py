"""Held-out stream bugs from public fix commits (issue 27): input of build_manifest.py.

Same fields and conventions as ../bugs.py (the development set): id, repo (owner/name),
fix (commit id or prefix), path (in the parent), framework (pytorch | cupy | numba |
cuda-python), rule (expected code; scoring uses the family), p / f: [(substring, line
hint)] in the parent / fixed file, scope, desc. No repository here is used by the
development set. Mined and labelled without running streamlint on any of them.

    python benchmarks/recall/build_manifest.py --bugs benchmarks/recall/heldout/bugs.py \
        --out benchmarks/recall/heldout/manifest.toml
"""

BUGS = [
    dict(
        id="lmdeploy-h2d-inputs-no-record-stream",
        repo="InternLM/lmdeploy", fix="19a085cf9", path="lmdeploy/pytorch/engine/model_agent/agent.py",
        framework="pytorch", rule="SL404", scope="cross-function",
        p=[("forward_inputs_cuda[k] = _try_to_cuda(forward_inputs_cuda[k], non_blocking=non_blocking)", None),
           ("await self._async_step(**forward_inputs, )", None)],
        f=[("forward_inputs_cuda[key] = _try_to_cuda(forward_inputs_cuda[key], non_blocking=non_blocking)", None),
           ("await self._async_step(**forward_inputs, )", None)],
        desc="Forward inputs are copied H2D (allocated) on out_stream and consumed on the forward "
             "stream after a wait_event, but never record_stream'ed there, so the allocator can hand "
             "their blocks back to out_stream while the forward stream still reads them.",
    ),
    dict(
        id="lmdeploy-guided-accept-other-thread-stream",
        repo="InternLM/lmdeploy", fix="dd4d43051", path="lmdeploy/pytorch/engine/logits_process.py",
        framework="pytorch", rule="SL401", scope="cross-function",
        p=[("cpu_result = next_token_ids.tolist()", 368),
           ("await asyncio.to_thread(self._accept_guided_tokens, next_token_ids)", 377)],
        f=[("cpu_result = next_token_ids.tolist()", 370),
           ("await asyncio.to_thread(self._accept_guided_tokens, next_token_ids, ready_event)", 385)],
        desc="Sampled token ids produced on the forward stream are read with tolist() in a worker "
             "thread (asyncio.to_thread) whose current stream is another one, with no event recorded "
             "on the producer and waited on, so the read can see unfinished tokens.",
    ),
    dict(
        id="lmdeploy-mtp-draft-item-per-processor",
        repo="InternLM/lmdeploy", fix="8da275c2c", path="lmdeploy/pytorch/spec_decode/proposers/deepseek_mtp.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("guided_manager.accept_token(processor, draft_token_ids[idx, 0].item())", None)],
        f=[("guided_manager.accept_token(processor, cpu_draft_token_ids[idx].item())", None)],
        desc="The draft step reads one CUDA token id per guided request with .item() inside a loop, "
             "a device-to-host sync per request per decoding step (fixed with one .cpu() before the loop).",
    ),
    dict(
        id="lmdeploy-eagle3-draft-item-per-processor",
        repo="InternLM/lmdeploy", fix="8da275c2c", path="lmdeploy/pytorch/spec_decode/proposers/eagle3.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("guided_manager.accept_token(processor, draft_token_ids[idx, 0].item())", None)],
        f=[("guided_manager.accept_token(processor, cpu_draft_token_ids[idx].item())", None)],
        desc="Same as the MTP proposer in the Eagle3 proposer: a .item() on the CUDA draft ids per "
             "guided request inside the loop.",
    ),
    dict(
        id="lmdeploy-spec-agent-rejected-item-per-processor",
        repo="InternLM/lmdeploy", fix="8da275c2c", path="lmdeploy/pytorch/spec_decode/spec_agent.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("n_rejected = num_rejected_tokens[idx].item()", None),
           ("tid = output_token_ids[idx, pos].item()", None)],
        f=[("n_rejected = cpu_num_rejected[idx].item()", None),
           ("tid = cpu_output_token_ids[idx, pos].item()", None)],
        desc="After rejection sampling the agent reads rejected counts and output token ids of CUDA "
             "tensors element by element with .item() in nested loops over guided requests and draft "
             "positions: one device-to-host sync per element per step.",
    ),
    dict(
        id="torchao-cpu-offload-param-h2d-no-wait",
        repo="pytorch/ao", fix="122eb73a9", path="torchao/prototype/low_bit_optim/cpu_offload.py",
        framework="pytorch", rule="SL401", scope="class",
        p=[("p_device.copy_(p_host, non_blocking=True)", 108)],
        f=[("p_device.copy_(p_host, non_blocking=True)", 108)],
        desc="CPUOffloadOptimizer.step copies the updated parameters back H2D on its side stream and "
             "returns without the current stream waiting for it, so the next forward pass reads "
             "parameters the copy has not finished writing.",
    ),
    dict(
        id="ffcv-next-batch-no-wait",
        repo="libffcv/ffcv", fix="99137e4", path="ffcv/loader/epoch_iterator.py",
        framework="pytorch", rule="SL401", scope="class",
        p=[("return result", 114), ("result = code(*args)", 100)],
        f=[("return result", 115)],
        desc="The loader thread runs the batch pipeline (with non_blocking copies) on the slot's side "
             "stream and __next__ hands the batch to the caller's current stream without waiting for "
             "that stream.",
    ),
    dict(
        id="ffcv-slot-refilled-while-consumed",
        repo="libffcv/ffcv", fix="249005e", path="ffcv/loader/epoch_iterator.py",
        framework="pytorch", rule="SL402", scope="class",
        p=[("stream.synchronize()", 105), ("result = code(*args)", 117)],
        f=[("cuda_event.wait()", 121), ("result = code(*args)", 133)],
        desc="Before refilling a batch slot's memory the loader synchronizes only the slot's own side "
             "stream, not the default stream where the model still reads the batch previously handed "
             "out from that slot, so the refill can overwrite it in use.",
    ),
    dict(
        id="ffcv-normalize-cupy-kernel-null-stream",
        repo="libffcv/ffcv", fix="351e8e5", path="ffcv/transforms/normalize.py",
        framework="cupy", rule="SL401", scope="cross-function",
        p=[("kernel(images, table, result_c)", 73)],
        f=[("kernel(images, table, result_c)", 78)],
        desc="The CuPy normalization kernel is launched on CuPy's current stream (the null stream) "
             "while its inputs are produced and its output consumed on PyTorch's current stream, the "
             "loader's non-blocking side stream, with no ordering between the two.",
    ),
    dict(
        id="fbpic-gpudirect-mpi-send-no-sync",
        repo="fbpic/fbpic", fix="cd834534", path="fbpic/boundaries/boundary_communicator.py",
        framework="numba", rule="SL403", scope="cross-function",
        p=[("self.exchange_domains(", 532), ("self.exchange_domains(", 582),
           ("self.exchange_domains(", 632), ("self.exchange_domains(", 680)],
        f=[("self.exchange_domains(", 537), ("self.exchange_domains(", 592),
           ("self.exchange_domains(", 647), ("self.exchange_domains(", 700)],
        desc="exchange_fields packs the guard cells into the GPU send buffers with asynchronous Numba "
             "kernels and hands those device buffers straight to CUDA-aware MPI without "
             "cuda.synchronize(), so MPI can send buffers the kernels have not finished writing.",
    ),
]
