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
    dict(
        id="cuquantum-cupy-tensor-get-null-stream",
        repo="NVIDIA/cuQuantum", fix="61bc3fa", path="python/cuquantum/cutensornet/_internal/tensor_ifc_cupy.py",
        framework="cupy", rule="SL401", scope="implicit",
        p=[("return self.tensor.get()", None)],
        f=[("out = self.tensor.get(stream=stream)", None)],
        desc="CupyTensor.numpy() copies a result to the host with ndarray.get() on CuPy's current "
             "(null) stream, while the contraction that wrote it ran on the user's stream, with no "
             "wait (cupy/cupy#7820; part of a larger sync-with-internal-repo commit).",
    ),
    dict(
        id="internevo-broadcast-side-stream-no-wait",
        repo="InternLM/InternEvo", fix="7f61505", path="internlm/solver/optimizer/hybrid_zero_optim.py",
        framework="pytorch", rule="SL401", scope="cross-function",
        p=[("with torch.cuda.stream(self._broadcast_comm_stream):", 651),
           ("fp16_param.data.copy_(fp32_param)", 649)],
        f=[("self.broadcast_params()", None), ("fp16_param.data.copy_(fp32_param)", 645)],
        desc="After the step copies the updated fp32 shards into the fp16 parameters on the current "
             "stream, the parameters are broadcast from a side communication stream that does not "
             "wait for those copies (and the next forward does not wait for the broadcast).",
    ),
    dict(
        id="dgl-sparse-adam-cpu-state-async-d2h",
        repo="dmlc/dgl", fix="8932285652", path="python/dgl/optim/pytorch/sparse_optim.py",
        framework="pytorch", rule="SL403", scope="local",
        p=[("state_mem[state_idx] = update_mem.to(state_dev, non_blocking=True)", 620),
           ("state_power[state_idx] = update_power.to(state_dev, non_blocking=True)", 621)],
        f=[("state_mem[state_idx] = update_mem.to(state_dev,", 626),
           ("state_power[state_idx] = update_power.to(state_dev,", 628)],
        desc="SparseAdam copies the updated moments D2H with non_blocking=True and scatters the "
             "result into the CPU state at once, so the host reads the copy's destination before it "
             "completes (NaNs, dgl#2760).",
    ),
    dict(
        id="dgl-dist-sparse-adam-async-d2h",
        repo="dmlc/dgl", fix="ae2eef41cf", path="python/dgl/distributed/optim/pytorch/sparse_optim.py",
        framework="pytorch", rule="SL403", scope="local",
        p=[("state_mem[state_idx] = update_mem.to(state_dev, non_blocking=True)", 361),
           ("state_power[state_idx] = update_power.to(state_dev, non_blocking=True)", 362)],
        f=[("state_mem[state_idx] = update_mem_dst", 388)],
        desc="Distributed SparseAdam: the same D2H non_blocking copies into CPU state read by the "
             "host (index assignment) with no event wait or sync.",
    ),
    dict(
        id="dgl-dist-sparse-adagrad-async-d2h",
        repo="dmlc/dgl", fix="94b7e96b80", path="python/dgl/distributed/optim/pytorch/sparse_optim.py",
        framework="pytorch", rule="SL403", scope="local",
        p=[("self._state[emb.name][grad_indices] = grad_state.to(th.device('cpu'), non_blocking=True)", 244),
           ("emb._tensor[grad_indices] -= tmp.to(th.device('cpu'), non_blocking=True)", 249)],
        f=[("self._state[emb.name][grad_indices] = grad_state_dst", 268),
           ("emb._tensor[grad_indices] -= tmp_dst", 274)],
        desc="Distributed SparseAdagrad writes the D2H non_blocking results into CPU tensors by index "
             "assignment immediately, reading them on the host before the copies complete.",
    ),
    dict(
        id="dgl-prefetch-batch-no-record-stream",
        repo="dmlc/dgl", fix="3c2247a288", path="python/dgl/dataloading/dataloader.py",
        framework="pytorch", rule="SL404", scope="cross-function",
        p=[("batch = recursive_apply(batch, lambda x: x.to(dataloader.device, non_blocking=True))", 324)],
        f=[("batch = recursive_apply(batch, lambda x: x.to(dataloader.device, non_blocking=True))", 343)],
        desc="The prefetcher moves batch tensors to the GPU on its side stream and hands them to the "
             "training loop on the current stream without record_stream, so their blocks can be "
             "reused on the side stream while the model still reads them.",
    ),
    dict(
        id="dgl-graphbolt-feature-fetch-ids-no-record-stream",
        repo="dmlc/dgl", fix="2e6ded06b4", path="python/dgl/graphbolt/feature_fetcher.py",
        framework="pytorch", rule="SL404", scope="class",
        p=[("self.feature_store.read(", 99), ("self.feature_store.read(", 109),
           ("self.feature_store.read(", 141)],
        f=[("self.feature_store.read(", 101), ("self.feature_store.read(", 113),
           ("self.feature_store.read(", 147)],
        desc="With overlapped feature fetching, node and edge ids made on the main stream are read "
             "on the fetcher's side stream without record_stream, so the allocator can reuse them "
             "on the main stream while the side-stream reads are pending.",
    ),
    dict(
        id="dgl-graphbolt-edge-ids-no-record-stream",
        repo="dmlc/dgl", fix="3ee4ea6ef4", path="python/dgl/graphbolt/impl/neighbor_sampler.py",
        framework="pytorch", rule="SL404", scope="local",
        p=[("subgraph.original_edge_ids = record_stream(", 421),
           ("subgraph._edge_ids_in_fused_csc_sampling_graph = None", 427)],
        f=[("subgraph.original_edge_ids = record_stream(", 430),
           ("subgraph._edge_ids_in_fused_csc_sampling_graph = None", 436)],
        desc="The sampled edge ids (made on the current stream) are read by index_select on the "
             "host-to-device side stream and then dropped without record_stream on that stream in "
             "the branch where indices were already present.",
    ),
    dict(
        id="distributed-ucx-send-device-frames-no-sync",
        repo="dask/distributed", fix="0d64f3a3c", path="distributed/comm/ucx.py",
        framework="numba", rule="SL403", scope="cross-function",
        p=[("await self.ep.send(frame)", 165)],
        f=[("await self.ep.send(frame)", 182)],
        desc="Device frames (CuPy/Numba/RMM arrays produced by stream-ordered work) are handed to "
             "UCX, which is not stream-ordered, with no stream synchronize before the send, so UCX "
             "can read buffers whose producing kernels or copies have not finished (fixed with a "
             "Numba default-stream synchronize).",
    ),
    dict(
        id="gpu4pyscf-df-prefetch-refill-while-computing",
        repo="pyscf/gpu4pyscf", fix="fca1a805", path="gpu4pyscf/df/df_o1.py",
        framework="cupy", rule="SL402", scope="local",
        p=[("buf_prefetch[:p2-p1].set(cderi_sparse[p1:p2], stream=stream)", 204)],
        f=[("buf_prefetch[:p2-p1].set(cderi_sparse[p1:p2], stream=io_stream)", 209)],
        desc="The density-fitting loop double-buffers blocks: the next block is copied on a "
             "non-blocking IO stream into the buffer the compute stream was still reading for the "
             "previous block; the loop only synchronizes the IO stream, never orders the refill "
             "after the compute stream.",
    ),
    dict(
        id="gpu4pyscf-multi-gpu-reduce-returns-before-copies",
        repo="pyscf/gpu4pyscf", fix="d61f40ba", path="gpu4pyscf/lib/multi_gpu.py",
        framework="cupy", rule="SL404", scope="cross-function",
        p=[("return array_list[0].reshape(out_shape)", 166),
           ("dst[p0:p1] += cp.asarray(src[p0:p1])", 164)],
        f=[("return array_list[0].reshape(out_shape)", 173)],
        desc="array_reduce returns while the cross-device copies and additions of the tree reduction "
             "are still queued; the caller then releases the per-device arrays (their worker "
             "contexts), so the copies can read recycled memory.",
    ),
    dict(
        id="gpu4pyscf-df-jk-workers-read-before-sync",
        repo="pyscf/gpu4pyscf", fix="a04370f8", path="gpu4pyscf/df/df_jk.py",
        framework="cupy", rule="SL401", scope="cross-function",
        p=[("mo_coeff = intopt.sort_orbitals(mo_coeff, axis=[1])", 487),
           ("future = executor.submit(", 492)],
        f=[("mo_coeff = intopt.sort_orbitals(mo_coeff, axis=[1])", 486),
           ("future = executor.submit(", 493)],
        desc="get_jk synchronizes the current stream before sort_orbitals produces mo_coeff, then "
             "hands mo_coeff to worker threads that run on other devices and streams, so they can "
             "read it before the sort finished (the fix moves the synchronize after the producer).",
    ),
    dict(
        id="gpu4pyscf-df-hessian-jk-workers-read-before-sync",
        repo="pyscf/gpu4pyscf", fix="0eca40e4", path="gpu4pyscf/df/hessian/jk.py",
        framework="cupy", rule="SL401", scope="cross-function",
        p=[("mo_coeff = [intopt.sort_orbitals(mo, axis=[0]) for mo in mo_coeff]", 171),
           ("future = executor.submit(", 176)],
        f=[("mo_coeff = [intopt.sort_orbitals(mo, axis=[0]) for mo in mo_coeff]", 170),
           ("future = executor.submit(", 176)],
        desc="The Hessian get_jk synchronizes the current stream before the sort_orbitals calls that "
             "produce occ_coeffs, mo1s and mo_coeff, then hands them to per-device worker threads, "
             "which can read them before the producing kernels finished.",
    ),
    dict(
        id="nemo-rl-packed-broadcast-consumer-returns-before-load",
        repo="NVIDIA-NeMo/RL", fix="47c54505b", path="nemo_rl/utils/packed_tensor.py",
        framework="pytorch", rule="SL401", scope="cross-function",
        p=[("post_unpack_func(", 204), ("group.broadcast(packed_tensors[buffer_idx], src=src)", 202)],
        f=[("post_unpack_func(", 212)],
        desc="packed_broadcast_consumer receives and loads weights into the model on rotating side "
             "streams and returns without joining them, so generation on the current stream reads "
             "weights the last unpack/load copies have not finished writing.",
    ),
    dict(
        id="nemo-rl-packed-broadcast-producer-returns-before-send",
        repo="NVIDIA-NeMo/RL", fix="47c54505b", path="nemo_rl/utils/packed_tensor.py",
        framework="pytorch", rule="SL402", scope="cross-function",
        p=[("packed_tensors[buffer_idx] = torch.cat(", 98),
           ("group.broadcast(packed_tensors[buffer_idx], src=src)", 101)],
        f=[("packed_tensors[buffer_idx] = torch.cat(", 98),
           ("group.broadcast(packed_tensors[buffer_idx], src=src)", 101)],
        desc="packed_broadcast_producer packs and broadcasts the source parameters on side streams "
             "and returns while the last pack and broadcast still read them, so the caller can "
             "mutate or offload the parameters mid-broadcast.",
    ),
    dict(
        id="torchrl-batched-inference-output-no-wait",
        repo="pytorch/rl", fix="0846fc9a7", path="torchrl/envs/batched_inference.py",
        framework="pytorch", rule="SL401", scope="local",
        p=[("output = self.policy(device_batch)", 199), ("return result", 210)],
        f=[("output = self.policy(device_batch)", 246), ("return result", 266)],
        desc="FixedBatchedInference runs the H2D copy and the policy forward on its dedicated stream "
             "and returns the output to the caller without the calling stream waiting for it, so "
             "reads on the caller's stream race with the forward pass.",
    ),
    dict(
        id="torchrl-batched-inference-device-batch-no-record-stream",
        repo="pytorch/rl", fix="1901968de", path="torchrl/envs/batched_inference.py",
        framework="pytorch", rule="SL404", scope="local",
        p=[("device_batch = staging.to(self.device, non_blocking=True)", 234),
           ("output = self.policy(device_batch)", 246)],
        f=[("device_batch = staging.to(self.device, non_blocking=True)", 252),
           ("output = self.policy(device_batch)", 271)],
        desc="The device batch is allocated by the H2D copy on the copy stream and read by the "
             "policy on the compute stream, then dropped when __call__ returns without "
             "record_stream, so the allocator can reuse it on the copy stream while the compute "
             "stream still reads it.",
    ),
    dict(
        id="nanotron-domino-comm-stream-no-wait",
        repo="huggingface/nanotron", fix="23f21081", path="src/nanotron/models/llama.py",
        framework="pytorch", rule="SL401", scope="local",
        p=[('hidden_states1 = attn_output1["hidden_states"] + residual1', 896),
           ('hidden_states0 = mlp_output0["hidden_states"] + residual0', 909)],
        f=[('hidden_states1 = attn_output1["hidden_states"] + residual1', 907),
           ('hidden_states0 = mlp_output0["hidden_states"] + residual0', 925)],
        desc="The Domino decoder layer waits for the async tensor-parallel collectives inside a "
             "`with torch.cuda.stream(comm_stream)` block (so only the comm stream waits) and then "
             "reads their outputs on the current stream without wait_stream(comm_stream).",
    ),
    dict(
        id="lmdeploy-spec-agent-fork-item-per-processor",
        repo="InternLM/lmdeploy", fix="8da275c2c", path="lmdeploy/pytorch/spec_decode/spec_agent.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("guided_manager.accept_token(fork_proc, pos_token_ids[idx].item())", 589)],
        f=[("guided_manager.accept_token(fork_proc, cpu_pos_token_ids[idx].item())", 593)],
        desc="Guided speculative logits processing advances each forked grammar matcher with one "
             ".item() on the CUDA argmax ids per request, for every draft position: a host sync "
             "per request per position.",
    ),
    dict(
        id="dgl-graphbolt-seed-positions-no-record-stream",
        repo="dmlc/dgl", fix="a2e1c79618", path="python/dgl/graphbolt/impl/neighbor_sampler.py",
        framework="pytorch", rule="SL404", scope="cross-function",
        p=[("minibatch._subgraph_seed_nodes = original_positions", 57),
           ("index, original_positions = index.sort()", 53)],
        f=[("minibatch._subgraph_seed_nodes = record_stream(", 71),
           ("index, original_positions = index.sort()", 66)],
        desc="The pipelined sampler sorts the seed nodes on its side stream and stores the "
             "permutation on the minibatch for the main stream without record_stream on the main "
             "stream (and reads the main-stream seeds on the side stream likewise unrecorded), so "
             "the caching allocator can recycle them while the other stream uses them (wrong "
             "accuracy, dgl#7088).",
    ),
    dict(
        id="fastvideo-layerwise-offload-prefetch-no-record-stream",
        repo="hao-ai-lab/FastVideo", fix="71ce5e2da", path="fastvideo/hooks/layerwise_offload.py",
        framework="pytorch", rule="SL404", scope="class",
        p=[("gpu_param = self.cpu_named_parameters[name].to(", 60)],
        f=[("gpu_param = self.cpu_named_parameters[name].to(", 61)],
        desc="Layerwise offload prefetches parameters H2D on its async copy stream (allocating them "
             "there), the forward reads them on the compute stream, and release_gpu_params drops "
             "them without record_stream, so their memory can be reused while the forward still "
             "reads it (use-after-free).",
    ),
    dict(
        id="flashinfer-test-dcp-alltoall-rank-streams-no-wait",
        repo="flashinfer-ai/flashinfer", fix="ae7a3623b", path="tests/comm/test_dcp_alltoall.py",
        framework="pytorch", rule="SL401", scope="local", test_code=True,
        p=[("o, s = decode_cp_a2a_alltoall(", 124), ("with torch.cuda.stream(streams[r]):", 123)],
        f=[("o, s = decode_cp_a2a_alltoall(", 128), ("with torch.cuda.stream(streams[r]):", 127)],
        desc="The test helper fills the inputs with torch.randn on the current stream and launches "
             "each rank's all-to-all on a fresh side stream with no wait_stream, so a rank's kernel "
             "can read partially written inputs (flashinfer#3806).",
    ),
    dict(
        id="flashinfer-test-repeated-alltoall-rank-streams-no-wait",
        repo="flashinfer-ai/flashinfer", fix="ae7a3623b", path="tests/comm/test_dcp_alltoall.py",
        framework="pytorch", rule="SL401", scope="local", test_code=True,
        p=[("o, s = decode_cp_a2a_alltoall(", 268), ("with torch.cuda.stream(streams[r]):", 267)],
        f=[("o, s = decode_cp_a2a_alltoall(", 275), ("with torch.cuda.stream(streams[r]):", 274)],
        desc="test_repeated_alltoall: each round refills the inputs on the current stream and "
             "launches the per-rank all-to-all on side streams without ordering them after the fills.",
    ),
    dict(
        id="gpu4pyscf-array-reduce-reads-unsynced-devices",
        repo="pyscf/gpu4pyscf", fix="14aa885f", path="gpu4pyscf/lib/multi_gpu.py",
        framework="cupy", rule="SL401", scope="cross-function",
        p=[("dst[p0:p1] += p2p_transfer(buf[:p1-p0], src[p0:p1])", 161),
           ("return [fut.result() for fut in futures]", 49)],
        f=[("p2p_transfer(buf[:p1-p0], src[p0:p1])", 166),
           ("results = [fut.result() for fut in futures]", 49)],
        desc="run() returns the per-device results of its worker threads without synchronizing "
             "their devices, and array_reduce then copies a peer device's partial result and "
             "accumulates it on another device's stream with nothing ordering the copy after the "
             "peer's producing kernels or the accumulation after the copy (launch failures with 4 "
             "GPUs).",
    ),
    dict(
        id="lmdeploy-fp4-ep-prefill-item-sync",
        repo="InternLM/lmdeploy", fix="56929e469", path="lmdeploy/pytorch/kernels/cuda/v4_fp4_grouped_gemm.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("all_tokens = recv_tokens_per_expert.sum().item()", 198)],
        f=[("if M <= 0:", 199)],
        desc="The expert-parallel FP4 MoE prefill reads the total received token count back to the "
             "host with .sum().item() on every call, a device-to-host sync per MoE layer per step, "
             "where the row count of recv_x already gives it.",
    ),
    dict(
        id="lmdeploy-cache-engine-stream-per-wakeup",
        repo="InternLM/lmdeploy", fix="4b453712f", path="lmdeploy/pytorch/engine/cache_engine.py",
        framework="pytorch", rule="SL501", scope="cross-function",
        p=[("self.cache_stream = torch.cuda.Stream()", 66)],
        f=[("self.cache_stream = cache_stream or torch.cuda.Stream()", 69)],
        desc="Every CacheEngine built (once per sleep/wake-up cycle) creates a new torch.cuda.Stream; "
             "after about 30 wake-ups PyTorch's stream pool wraps around and hands out the current "
             "stream, failing the engine's assertion (fixed by creating the stream once in the agent).",
    ),
    dict(
        id="cuquantum-numpy-operands-h2d-null-stream",
        repo="NVIDIA/cuQuantum", fix="61bc3fa", path="python/cuquantum/cutensornet/_internal/tensor_ifc_numpy.py",
        framework="cupy", rule="SL401", scope="implicit",
        p=[("tensor_device = cupy.asarray(self.tensor)", 79)],
        f=[("tensor_device = cupy.asarray(self.tensor)", 82)],
        desc="NumpyTensor.to() copies host operands to the GPU with cupy.asarray on CuPy's current "
             "(null) stream, while the network later contracts them on the user's stream, which "
             "need not be ordered after the null stream (fixed by copying under the user stream; "
             "same sync-with-internal-repo commit as the .get() fix).",
    ),
]
