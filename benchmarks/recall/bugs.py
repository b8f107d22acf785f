"""Curated stream bugs from public fix commits (input of build_manifest.py).

Fields: id, repo (owner/name), fix (commit id or prefix), path (in the parent),
framework (pytorch | cupy | numba | cuda-python), rule (expected code; scoring uses the
family: SL1, SL2, SL3, SL4 = SL401-SL404, SL5), p / f: [(substring, line hint)] in the
parent / fixed file, scope ('local' = producer, consumer and fix in one function;
'class' = across methods of one class; 'cross-function' = across functions or modules;
'implicit' = the stream or buffer comes from a library wrapper), desc.
"""

BUGS = [
    dict(
        id="apex-prefetcher-record-stream",
        repo="NVIDIA/apex", fix="d5e2bb4b", path="examples/imagenet/main_amp.py",
        framework="pytorch", rule="SL404", scope="class",
        p=[("self.next_input = self.next_input.cuda(non_blocking=True)", 276),
           ("input = self.next_input", 287)],
        f=[("self.next_input = self.next_input.cuda(non_blocking=True)", 283),
           ("input = self.next_input", 301)],
        desc="data_prefetcher allocates next_input/next_target on its side stream in preload() and "
             "next() hands them to the default stream without record_stream, so the caching allocator "
             "can reuse the blocks on the side stream while the model still reads them.",
    ),
    dict(
        id="megatron-bookkeeping-pinned-refill",
        repo="NVIDIA/Megatron-LM", fix="53a2dd56fe",
        path="megatron/core/inference/contexts/dynamic_context.py",
        framework="pytorch", rule="SL402", scope="class",
        p=[("self.gpu_view._buf.copy_(self._cpu_bookkeeping_buf, non_blocking=True)", 2512)],
        f=[("self.gpu_view._buf.copy_(self._cpu_bookkeeping_buf, non_blocking=False)", 2524)],
        desc="A non_blocking H2D copy from the pinned bookkeeping buffer is still in flight when the "
             "next step re-stages the same host buffer in place, so the GPU reads corrupted indices "
             "(illegal memory access).",
    ),
    dict(
        id="megatron-offload-wrong-stream-event",
        repo="NVIDIA/Megatron-LM", fix="ae6707622e",
        path="megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py",
        framework="pytorch", rule="SL401", scope="cross-function",
        p=[("self._d2h_stream.record_event().wait(torch.cuda.current_stream())", 125),
           ("gpu_param.data.copy_(param.data, non_blocking=True)", 124)],
        f=[("self._h2d_stream.record_event().wait(torch.cuda.current_stream())", 125),
           ("gpu_param.data.copy_(param.data, non_blocking=True)", 124)],
        desc="The hook copies parameters back on _h2d_stream but makes the current stream wait on an "
             "event of _d2h_stream, so the model reads gpu_param before the H2D copy finished.",
    ),
    dict(
        id="megatron-ddp-wait-default-not-current",
        repo="NVIDIA/Megatron-LM", fix="3548385ac3",
        path="megatron/core/distributed/param_and_grad_buffer.py",
        framework="pytorch", rule="SL401", scope="class",
        p=[("self.communication_stream.wait_stream(torch.cuda.default_stream())", 573)],
        f=[("self.communication_stream.wait_stream(torch.cuda.current_stream())", 573)],
        desc="The communication stream waits on the default stream, not on the current stream that "
             "produced the gradients (different under CUDA graphs / side streams), so the reduce-scatter "
             "can read unfinished gradients.",
    ),
    dict(
        id="megatron-ddp-finish-wait-default-not-current",
        repo="NVIDIA/Megatron-LM", fix="3548385ac3",
        path="megatron/core/distributed/param_and_grad_buffer.py",
        framework="pytorch", rule="SL401", scope="class",
        p=[("torch.cuda.default_stream().wait_stream(self.communication_stream)", 680)],
        f=[("torch.cuda.current_stream().wait_stream(self.communication_stream)", 680)],
        desc="finish_grad_sync makes the default stream, not the current stream, wait for the "
             "communication stream, so the optimizer on the current stream reads reduced gradients "
             "before the collective finished.",
    ),
    dict(
        id="apex-bottleneck-halo-wait",
        repo="NVIDIA/apex", fix="05dd9c69", path="apex/contrib/bottleneck/bottleneck.py",
        framework="pytorch", rule="SL401", scope="local",
        p=[("btm_out1_halo = btm_out1_halo.clone()", 336)],
        f=[("btm_out1_halo = btm_out1_halo.clone()", 337)],
        desc="The out2 halo correction on stream2 reads btm_out1_halo, produced by the halo "
             "transfer on stream1, without stream2.wait_stream(stream1).",
    ),
    dict(
        id="apex-distadam-l2norm-no-wait",
        repo="NVIDIA/apex", fix="be4c41c2",
        path="apex/contrib/optimizers/distributed_fused_adam.py",
        framework="pytorch", rule="SL401", scope="class",
        p=[("return self._L2_grad_norm", 341)],
        f=[("return self._L2_grad_norm", 344)],
        desc="The L2_grad_norm property returns a norm computed on the block streams without making "
             "the current stream wait for them, so callers read a partial norm.",
    ),
    dict(
        id="torchrec-clipping-blocking-h2d",
        repo="pytorch/torchrec", fix="caebdb1b", path="torchrec/optim/clipping.py",
        framework="pytorch", rule="SL201", scope="local",
        p=[("sharded_grad_norm.to(current_shard_norm.device), current_shard_norm", 219)],
        f=[("sharded_grad_norm.to(current_shard_norm.device, non_blocking=True)", 219)],
        desc="Gradient clipping moves a CPU scalar to the GPU with a blocking copy every step, "
             "a host sync in the training loop (fixed with a pinned source and non_blocking=True).",
    ),
    dict(
        id="torchrec-clipping-blocking-h2d-replicate",
        repo="pytorch/torchrec", fix="caebdb1b", path="torchrec/optim/clipping.py",
        framework="pytorch", rule="SL201", scope="local",
        p=[(").to(sharded_grad_norm.device)", 229)],
        f=[(").to(sharded_grad_norm.device, non_blocking=True)", 230)],
        desc="Second blocking H2D copy of a CPU norm in the same clipping step.",
    ),
    dict(
        id="fairscale-fsdp-mixed-precision-record-stream",
        repo="facebookresearch/fairscale", fix="c06efdf6",
        path="fairscale/nn/data_parallel/fully_sharded_data_parallel.py",
        framework="pytorch", rule="SL404", scope="local",
        p=[("param.grad.data = param.grad.data.to(dtype=param.data.dtype)", 970)],
        f=[("param.grad.data = param.grad.data.to(dtype=param.data.dtype)", 971)],
        desc="The fp16 gradient produced on the post-backward stream is dropped when grad.data is "
             "rebound to its fp32 cast, without record_stream, so its block can be reused while the "
             "cast still reads it.",
    ),
    dict(
        id="fairscale-fsdp-cpu-grad-async-d2h",
        repo="facebookresearch/fairscale", fix="c06efdf6",
        path="fairscale/nn/data_parallel/fully_sharded_data_parallel.py",
        framework="pytorch", rule="SL403", scope="cross-function",
        p=[("param._cpu_grad.copy_(param.grad.data, non_blocking=True)", 974)],
        f=[("param._cpu_grad.copy_(param.grad.data, non_blocking=False)", 977)],
        desc="Gradients are copied D2H into the pinned _cpu_grad with non_blocking=True and handed "
             "to the CPU optimizer as param.grad without any sync, so the host can read stale values.",
    ),
    dict(
        id="colossalai-gemini-prefetch-no-wait",
        repo="hpcaitech/ColossalAI", fix="3bcbba926", path="colossalai/zero/gemini/gemini_hook.py",
        framework="pytorch", rule="SL401", scope="implicit",
        p=[("with get_accelerator().stream(self._gemini_manager.chunk_manager._prefetch_stream):", 58),
           ("maybe_work = self._chunk_manager.access_chunk(chunk, async_access=True)", 60)],
        f=[("maybe_work = self._chunk_manager.access_chunk(chunk, async_access=True)", 69)],
        desc="Chunks are prefetched on the prefetch stream without waiting for the current stream, "
             "so the first prefetch can read parameters the optimizer is still updating.",
    ),
    dict(
        id="cupy-test-get-stream-no-sync",
        repo="cupy/cupy", fix="1444cbeb5", path="tests/cupy_tests/core_tests/test_ndarray_get.py",
        framework="cupy", rule="SL403", scope="class", test_code=True,
        p=[("np_testing.assert_array_equal(a_gpu.get(stream), a_cpu)", 21)],
        f=[("np_testing.assert_array_equal(a_cpu, b_cpu)", 24)],
        desc="ndarray.get(stream) on a non-null stream is an async D2H copy; the host compares the "
             "result before synchronizing the stream.",
    ),
    dict(
        id="cupy-test-texture-stream-no-wait",
        repo="cupy/cupy", fix="a9def844e", path="tests/cupy_tests/cuda_tests/test_texture.py",
        framework="cupy", rule="SL401", scope="local", test_code=True,
        p=[("cu_arr.copy_from(arr, stream)", 67)],
        f=[("cu_arr.copy_from(arr, stream)", 69)],
        desc="Input generated on the current (default) stream is copied into a CUDAarray on a "
             "separate stream with no event wait, so the copy can read unfinished data.",
    ),
    dict(
        id="cupy-test-graph-same-stream-no-wait",
        repo="cupy/cupy", fix="1acfada13", path="tests/cupy_tests/cuda_tests/test_graph.py",
        framework="cupy", rule="SL401", scope="local", test_code=True,
        p=[("g.launch()", 58), ("out1 = func(a)", 54)],
        f=[("g.launch()", 57)],
        desc="`a` is produced on the legacy default stream and read by a graph captured and launched "
             "on a non_blocking=True stream, which is not ordered after the default stream.",
    ),
    dict(
        id="cupy-test-graph-two-streams-no-wait",
        repo="cupy/cupy", fix="1acfada13", path="tests/cupy_tests/cuda_tests/test_graph.py",
        framework="cupy", rule="SL401", scope="local", test_code=True,
        p=[("g.launch()", 80), ("out1 = func(a)", 75)],
        f=[("g.launch()", 79)],
        desc="Same as above with the graph captured on s1 and launched on s2, both non-blocking: "
             "nothing orders them after the default-stream producer of `a`.",
    ),
    dict(
        id="cupy-batched-inv-info-sync-loop",
        repo="cupy/cupy", fix="253d3bb8e", path="cupy/linalg/solve.py",
        framework="cupy", rule="SL502", scope="local",
        p=[("if info < 0:", 383), ("info = info_array[i]", 382)],
        f=[("cupy.linalg.util._check_cublas_info_array_if_synchronization_allowed(", 378)],
        desc="_batched_inv compares each element of the device info array to 0 in a Python loop, "
             "one device-to-host sync per matrix of the batch.",
    ),
    dict(
        id="te-offload-reload-buffer-side-stream",
        repo="NVIDIA/TransformerEngine", fix="67fcc1525", path="transformer_engine/pytorch/cpu_offload.py",
        framework="pytorch", rule="SL404", scope="cross-function",
        p=[("recovered_tensor = SynchronizedGroupOffloadHandler.reload(", 565)],
        f=[("recovered_tensor = SynchronizedGroupOffloadHandler.reload(", 571)],
        desc="Reload buffers are allocated inside reload() while the h2d side stream is current and "
             "then used and freed on the main stream, so the allocator can hand the block back to "
             "the side stream while the main stream still uses it.",
    ),
    dict(
        id="examples-imagenet-cuda-true-train",
        repo="pytorch/examples", fix="83f1b5c", path="imagenet/main.py",
        framework="pytorch", rule="SL201", scope="local",
        p=[("target = target.cuda(True)", 189)],
        f=[("target = target.cuda(non_blocking=True)", 189)],
        desc="`target.cuda(True)` passes True as the device, not non_blocking: the copy from the "
             "pinned DataLoader batch is blocking.",
    ),
    dict(
        id="examples-imagenet-cuda-true-validate",
        repo="pytorch/examples", fix="83f1b5c", path="imagenet/main.py",
        framework="pytorch", rule="SL201", scope="local",
        p=[("target = target.cuda(True)", 233)],
        f=[("target = target.cuda(non_blocking=True)", 233)],
        desc="Same `.cuda(True)` mistake in the validation loop.",
    ),
    dict(
        id="deepspeed-zero2-overlap-war",
        repo="deepspeedai/DeepSpeed", fix="a41729f6a", path="deepspeed/runtime/zero/stage_1_and_2.py",
        framework="pytorch", rule="SL402", scope="implicit",
        p=[("stream.wait_stream(get_accelerator().current_stream())", 1041)],
        f=[("stream.wait_stream(get_accelerator().current_stream())", 1041)],
        desc="With overlap_comm the reduction stream reads the IPG bucket while the current stream "
             "goes on to refill it; the current stream never waits for the reduction stream.",
    ),
    dict(
        id="torchrec-embedding-forward-record-stream",
        repo="pytorch/torchrec", fix="575e0810", path="torchrec/distributed/train_pipeline/utils.py",
        framework="pytorch", rule="SL404", scope="class",
        p=[("tensor = embeddings.values()", 486)],
        f=[("tensor = embeddings.values()", 544)],
        desc="Pooled embeddings produced on the embedding stream are used on the current stream "
             "without record_stream (NaNs / illegal memory access under memory pressure).",
    ),
    dict(
        id="megatron-cp-index-blocking-h2d",
        repo="NVIDIA/Megatron-LM", fix="13722647f3", path="megatron/utils.py",
        framework="pytorch", rule="SL201", scope="local",
        p=[("index = torch.tensor([cp_rank, (2 * cp_size - cp_rank - 1)], device=val.device)", 246)],
        f=[("index = torch.tensor([cp_rank, (2 * cp_size - cp_rank - 1)],", 246)],
        desc="get_batch_on_this_cp_rank builds a CUDA index tensor from a Python list for every "
             "batch, a blocking pageable H2D copy (fixed: pinned + .cuda(non_blocking=True)).",
    ),
    dict(
        id="megatron-cp-rope-index-blocking-h2d",
        repo="NVIDIA/Megatron-LM", fix="13722647f3",
        path="megatron/core/models/common/embeddings/rotary_pos_embedding.py",
        framework="pytorch", rule="SL201", scope="local",
        p=[("cp_idx = torch.tensor([cp_rank, (2 * cp_size - cp_rank - 1)], device=pos_emb.device)", 37)],
        f=[("cp_idx = torch.tensor(", 37)],
        desc="Same blocking list-to-CUDA tensor in the rotary embedding of every forward.",
    ),
    dict(
        id="megatron-ep-overlap-shared-expert-record-stream",
        repo="NVIDIA/Megatron-LM", fix="dedb6dd689", path="megatron/core/models/gpt/fine_grained_callables.py",
        framework="pytorch", rule="SL404", scope="cross-function",
        p=[("output = layer.mlp.postprocess(output, shared_expert_output)", 559),
           ("shared_expert_output = getattr(node.layer_state, 'shared_expert_output', None)", 557)],
        f=[("output = layer.mlp.postprocess(output, shared_expert_output)", 581)],
        desc="With EP overlap the combine step runs on the communication stream and reads "
             "shared_expert_output, allocated on the computation stream, without record_stream, so "
             "the computation stream can reuse its block too early (the residual already had one).",
    ),
    dict(
        id="fairscale-fsdp-free-full-params-no-wait",
        repo="facebookresearch/fairscale", fix="05ce7971",
        path="fairscale/nn/data_parallel/fully_sharded_data_parallel.py",
        framework="pytorch", rule="SL402", scope="class",
        p=[("free_storage_(p._full_param_padded)", 1144),
           ("with torch.cuda.stream(self._streams[\"all_gather\"]):", 1131)],
        f=[("free_storage_(p._full_param_padded)", 1143)],
        desc="_free_full_params frees the gathered parameters on the all_gather stream without "
             "waiting for the current stream, which may still be computing with them.",
    ),
    dict(
        id="deepspeed-zero3-wait-default-not-current",
        repo="deepspeedai/DeepSpeed", fix="be60451f6", path="deepspeed/runtime/zero/stage3.py",
        framework="pytorch", rule="SL401", scope="implicit",
        p=[("self.reduce_and_partition_stream.wait_stream(get_accelerator().default_stream())", 1363)],
        f=[("self.reduce_and_partition_stream.wait_stream(get_accelerator().current_stream())", 1363)],
        desc="The reduce-and-partition stream waits on the default stream, not on the current "
             "stream that produced the gradient (different under torch.compile / side streams), so "
             "the bucket copy can read an unfinished gradient.",
    ),
    dict(
        id="deepspeed-zero2-double-buffer-swap-no-wait",
        repo="deepspeedai/DeepSpeed", fix="f897b6739", path="deepspeed/runtime/zero/stage_1_and_2.py",
        framework="pytorch", rule="SL402", scope="implicit",
        p=[("bucket.index = 1 - bucket.index", 999)],
        f=[("bucket.index = 1 - bucket.index", 1002)],
        desc="With overlap_comm and contiguous gradients the IPG double buffer is swapped without "
             "the current stream waiting for the reduction stream, so the next gradients overwrite "
             "a buffer the reduction may still read (#7188).",
    ),
    dict(
        id="deepspeed-zero2-allreduce-buffer-lifetime",
        repo="deepspeedai/DeepSpeed", fix="dac1525b3", path="deepspeed/runtime/zero/stage_1_and_2.py",
        framework="pytorch", rule="SL404", scope="implicit",
        p=[("buf.copy_(synced)", 1184)],
        f=[("buf.copy_(synced)", 1186)],
        desc="allreduce_and_copy_with_multiple_ranks uses the allreduced buffer and the gradient "
             "buffers on the reduction stream without record_stream, so their blocks can be reused "
             "by the current stream while the reduction still reads them.",
    ),
    dict(
        id="deepspeed-zero2-allreduce-buffer-lifetime-2",
        repo="deepspeedai/DeepSpeed", fix="dac1525b3", path="deepspeed/runtime/zero/stage_1_and_2.py",
        framework="pytorch", rule="SL404", scope="implicit",
        p=[("buf.copy_(synced)", 1751)],
        f=[("buf.copy_(synced)", 1757)],
        desc="Same missing record_stream in allreduce_and_copy (second copy-back loop).",
    ),
    dict(
        id="deepspeed-zero2-multi-producer-wait",
        repo="deepspeedai/DeepSpeed", fix="711bd11ec", path="deepspeed/runtime/zero/stage_1_and_2.py",
        framework="pytorch", rule="SL401", scope="implicit",
        p=[("stream.wait_stream(get_accelerator().current_stream())", 1265)],
        f=[("stream.wait_stream(producer_stream)", 1288)],
        desc="average_tensor makes the reduction stream wait only on the current stream, while the "
             "IPG bucket was filled by copies on several autograd streams (#8061).",
    ),
    dict(
        id="deepspeed-zeropp-secondary-partition-race",
        repo="deepspeedai/DeepSpeed", fix="4578c2490", path="deepspeed/runtime/zero/partition_parameters.py",
        framework="pytorch", rule="SL401", scope="cross-function",
        p=[("param.ds_secondary_tensor.copy_(sec_src_tensor)", 1643)],
        f=[("sec_numel).copy_(one_dim_param.narrow(0, secondary_start, sec_numel))", 1644)],
        desc="The secondary (hpZ) partition is filled on the current stream and later all-gathered "
             "on the communication stream with no ordering, so the all-gather can read it before the "
             "copy is done (fixed with a stream sync).",
    ),
    dict(
        id="colossalai-zero-overlap-comm-no-wait",
        repo="hpcaitech/ColossalAI", fix="d86ddd9b2", path="colossalai/zero/low_level/low_level_optim.py",
        framework="pytorch", rule="SL401", scope="local",
        p=[("flat_grads = flat_grads.to(self._communication_dtype)", 257),
           ("dist.all_reduce(flat_grads, group=self.dp_pg)", 260),
           ("flat_grads_list = list(flat_grads.split(len(flat_grads) // self._world_size))", 274)],
        f=[("flat_grads = flat_grads.to(self._communication_dtype)", 266),
           ("dist.all_reduce(flat_grads, group=self.dp_pg)", 269),
           ("flat_grads_list = list(flat_grads.split(len(flat_grads) // self._world_size))", 283)],
        desc="With overlap_communication the flattened gradients, produced and scaled on the current "
             "stream, are reduced on the comm stream with no wait_stream (and no record_stream, so "
             "the block can also be reused too early).",
    ),
    dict(
        id="colossalai-cache-embedding-stream-per-call",
        repo="hpcaitech/ColossalAI", fix="c638bec02",
        path="colossalai/nn/parallel/layers/cache_embedding/cache_mgr.py",
        framework="pytorch", rule="SL501", scope="cross-function",
        p=[("idxslt_stream = torch.cuda.Stream()", 353)],
        f=[("with torch.cuda.stream(self._memcpy_stream):", 374)],
        desc="_prepare_rows_on_cuda, run for every batch, creates a new torch.cuda.Stream on each "
             "call for the async row copy (fixed: one stream created in __init__).",
    ),
    dict(
        id="deepspeed-zero2-device-sync-per-bucket",
        repo="deepspeedai/DeepSpeed", fix="97deaaec5", path="deepspeed/runtime/zero/stage_1_and_2.py",
        framework="pytorch", rule="SL103", scope="cross-function",
        p=[("torch.cuda.synchronize()", 944)],
        f=[("stream.wait_stream(torch.cuda.current_stream())", 945)],
        desc="average_tensor, run for every gradient bucket during backward, calls "
             "torch.cuda.synchronize() where the reduction stream only needs to wait for the "
             "current stream.",
    ),
    dict(
        id="torchtitan-per-iter-synchronize",
        repo="pytorch/torchtitan", fix="cc2061a0b", path="train.py",
        framework="pytorch", rule="SL103", scope="local",
        p=[("torch.cuda.synchronize()", 260)],
        f=[("scaler.update()", 252)],
        desc="The training loop calls torch.cuda.synchronize() every iteration to time it with "
             "CUDA events, stalling the host each step (fixed: host-side timing per log window).",
    ),
    dict(
        id="torchtitan-loss-item-per-iter",
        repo="pytorch/torchtitan", fix="5b2bb5232", path="train.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("current_loss = loss.item()", 298)],
        f=[("losses_since_last_log.append(loss)", 296)],
        desc="loss.item() on every training step; the fix keeps the tensors and reads them once "
             "per logging window.",
    ),
    dict(
        id="torchtitan-multimodal-item-per-element",
        repo="pytorch/torchtitan", fix="4d38b17ad", path="torchtitan/models/common/multimodal.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("start = int(region_starts[i].item())", 82),
           ("n_tokens = int(num_vision_tokens_per_item[i].item())", 83)],
        f=[("start = int(region_starts_list[i])", 86)],
        desc="get_vision_positions calls .item() on two CUDA tensors for every item of a Python "
             "loop, one sync per scalar (fixed: one .tolist() before the loop).",
    ),
    dict(
        id="torchtune-full-finetune-loss-item-per-step",
        repo="pytorch/torchtune", fix="efa68eb8e", path="recipes/full_finetune.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("pbar.set_description(f\"{curr_epoch+1}|{idx+1}|Loss: {loss.item()}\")", 375)],
        f=[("pbar.set_description(f\"{curr_epoch+1}|{idx+1}|Loss: {loss.item()}\")", 376)],
        desc="The progress bar reads loss.item() on every step of the training loop (fixed: only "
             "on logging steps, under `% log_every_n_steps == 0`).",
    ),
    dict(
        id="torchtune-single-device-loss-item-per-step",
        repo="pytorch/torchtune", fix="bb1aa9176", path="recipes/full_finetune_single_device.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("pbar.set_description(f\"{curr_epoch+1}|{idx+1}|Loss: {loss.item()}\")", 373)],
        f=[("pbar.set_description(f\"{curr_epoch+1}|{idx+1}|Loss: {loss.item()}\")", 374)],
        desc="Same per-step loss.item() in the single-device recipe, moved under the logging guard.",
    ),
    dict(
        id="deepspeed-engine-loss-item-per-microstep",
        repo="deepspeedai/DeepSpeed", fix="fac1df998", path="deepspeed/runtime/engine.py",
        framework="pytorch", rule="SL502", scope="cross-function",
        p=[("self.losses += loss.mean().item()", 1954)],
        f=[("mean_loss = loss.mean().detach()", 1954)],
        desc="DeepSpeedEngine.backward, run for every micro-step, reads loss.mean().item() for "
             "logging even when nothing is logged (fixed: accumulate on the device, read at the "
             "accumulation boundary).",
    ),
    dict(
        id="torchrec-kjt-a2a-lengths-item-per-rank",
        repo="pytorch/torchrec", fix="b6594d31", path="torchrec/distributed/dist_data.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("int(length.sum().item()) for length in lengths_per_rank", 393)],
        f=[("out_lengths_per_worker = (", 392)],
        desc="KJT all-to-all computes each rank's output length with .item() inside a list "
             "comprehension, one device-to-host sync per rank (fixed: cat, then one .cpu().tolist()).",
    ),
    dict(
        id="torchrec-length-per-key-item-per-chunk",
        repo="pytorch/torchrec", fix="e2cc13ac", path="torchrec/sparse/jagged_tensor.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("int(torch.sum(chunk).item()) for chunk in torch.split(lengths, stride_per_key)", 635)],
        f=[("[torch.sum(chunk).view(1) for chunk in torch.split(lengths, stride_per_key)]", 635)],
        desc="_length_per_key_from_stride_per_key syncs once per key with .item() in a comprehension "
             "(fixed: one .tolist() of the concatenated sums).",
    ),
    dict(
        id="megatron-multimodal-loss-mask-item-per-sample",
        repo="NVIDIA/Megatron-LM", fix="821d3c1d52", path="examples/multimodal/train.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("loss_mask[b, :max(0, question_length[b].item())] = 0.0", 254)],
        f=[("question_length_mask = torch.arange(loss_mask.size(1), device=loss_mask.device)[None, :] < question_length[:, None]", 253)],
        desc="get_ltor_masks_and_position_ids reads question_length[b].item() for every sample of "
             "the micro-batch in a Python loop (fixed: one vectorised mask on the device).",
    ),
    dict(
        id="torchrec-staged-pipeline-last-stage-no-wait",
        repo="pytorch/torchrec", fix="a90d3ede", path="torchrec/distributed/train_pipeline/train_pipeline.py",
        framework="pytorch", rule="SL401", scope="class",
        p=[("return output", 779), ("output = self._advance()", 768)],
        f=[("return out", 815)],
        desc="StagedTrainPipeline.progress returns the last stage's output, produced on that stage's "
             "stream with an event recorded, without making the compute stream wait on the event "
             "(or record_stream), so the model forward can read an unfinished batch.",
    ),
    dict(
        id="lightning-move-to-cpu-non-blocking",
        repo="Lightning-AI/pytorch-lightning", fix="cf32127e7e", path="pytorch_lightning/utilities/apply_func.py",
        framework="pytorch", rule="SL403", scope="cross-function",
        p=[("data_output = data.to(device, **kwargs)", 278),
           ("kwargs = dict(non_blocking=True) if isinstance(data, torch.Tensor) else {}", 277)],
        f=[("data_output = data.to(device, **kwargs)", 284)],
        desc="move_data_to_device passes non_blocking=True also when the target is the CPU, so "
             "batches moved back to the host are returned while the D2H copy may still be in "
             "flight and callers read stale values (fixed: non_blocking only for non-CPU targets).",
    ),
    dict(
        id="holotomocupy-shift-int-ceil-sync",
        repo="nikitinvv/holotomocupy", fix="579bc5c8", path="src/holotomocupy/shift.py",
        framework="cupy", rule="SL502", scope="cross-function",
        p=[("int(cp.ceil(self.n / 32)),", 48), ("int(cp.ceil(self.nz / 32)),", 49)],
        f=[("math.ceil(self.n / 32),", 48)],
        desc="The shift operators, run for every chunk of every iteration inside the streamed chunk "
             "pipeline, compute each kernel's grid with int(cp.ceil(x / 32)) on Python floats: "
             "cp.ceil makes a device scalar (H2D) and int() reads it back, two host syncs per launch "
             "(fixed: math.ceil).",
    ),
    dict(
        id="holotomocupy-propagation-int-ceil-sync",
        repo="nikitinvv/holotomocupy", fix="579bc5c8", path="src/holotomocupy/propagation.py",
        framework="cupy", rule="SL502", scope="cross-function",
        p=[("(int(cp.ceil(2 * n / 32)), int(cp.ceil(2 * nz / 32)), ntheta),", 28)],
        f=[("(math.ceil(2 * n / 32), math.ceil(2 * nz / 32), ntheta),", 28)],
        desc="Same int(cp.ceil(...)) grid computation in the Fresnel propagator's padding kernels, "
             "a device round trip and host sync on every launch of the per-chunk operator.",
    ),
    dict(
        id="chainermn-pure-nccl-pack-allreduce-no-wait",
        repo="chainer/chainermn", fix="cfb8bd92", path="chainermn/communicators/pure_nccl_communicator.py",
        framework="cupy", rule="SL401", scope="local",
        p=[("self.nccl_comm.allReduce(self.gpu_buffer_a.ptr(),", 66),
           ("_memory_utility.pack_params(", 64)],
        f=[("self.nccl_comm.allReduce(self.gpu_buffer_a.ptr(),", 68)],
        desc="allreduce_grad packs the gradients into gpu_buffer_a on the null stream and then "
             "all-reduces gpu_buffer_a on the caller's stream (the double-buffering side stream) with "
             "no wait, so the collective can read a half-packed buffer (fixed: null-stream sync "
             "when a side stream is used).",
    ),
    dict(
        id="chainermn-send-gpu-array-no-sync",
        repo="chainer/chainermn", fix="95d462b0", path="chainermn/communicators/_base.py",
        framework="cupy", rule="SL403", scope="cross-function",
        p=[("self.mpi_comm.Send(buf, dest=dest, tag=tag)", 35)],
        f=[("self.mpi_comm.Send(buf, dest=dest, tag=tag)", 38)],
        desc="send() hands a CuPy array's device buffer to CUDA-aware MPI_Send without synchronizing "
             "the stream that produced it, so MPI can read the buffer before the kernels writing it "
             "finished (fixed: Stream.null.synchronize() for GPU arrays).",
    ),
    dict(
        id="chainermn-inter-alltoall-after-reduce-no-sync",
        repo="chainer/chainermn", fix="f9d6c4f2", path="chainermn/communicators/_communication_utility.py",
        framework="cupy", rule="SL403", scope="cross-function",
        p=[("inter_mpi_comm.Alltoall(", 68)],
        f=[("inter_mpi_comm.Alltoall(", 69)],
        desc="inter_allreduce_gpu passes gpu_buffer_b, just written by the intra-node NCCL reduce "
             "on the caller's stream, to a CUDA-aware MPI Alltoall without synchronizing that stream "
             "(the caller even carried a 'TODO: sync necessary?').",
    ),
    dict(
        id="chainermn-inter-alltoall-after-copy-no-sync",
        repo="chainer/chainermn", fix="f9d6c4f2", path="chainermn/communicators/_communication_utility.py",
        framework="cupy", rule="SL403", scope="local",
        p=[("inter_mpi_comm.Alltoall(", 81)],
        f=[("inter_mpi_comm.Alltoall(", 84)],
        desc="The reduced region is summed on the GPU and copied into gpu_buffer_a with device copies, "
             "then gpu_buffer_a goes to the second MPI Alltoall without a stream sync, so MPI can "
             "send stale data.",
    ),
    dict(
        id="chainermn-unpack-tmp-buffer-wrong-stream",
        repo="chainer/chainermn", fix="67430be6", path="chainermn/communicators/pure_nccl_communicator.py",
        framework="cupy", rule="SL401", scope="local",
        p=[("params, grad_dtype.itemsize, 'grad', self.gpu_tmp_buffer)", 166),
           ("_memory_utility.unpack_params(", 165)],
        f=[("params, grad_dtype.itemsize, 'grad', self.gpu_tmp_buffer, stream=stream)", 175)],
        desc="With a gradient dtype different from the allreduce dtype, the converting kernel writes "
             "gpu_tmp_buffer on the allreduce stream but unpack_params reads it without stream=, on "
             "the null stream, with no wait (fixed during the double-buffering PR: stream=stream).",
    ),
    dict(
        id="chainermn-double-buffering-grads-no-null-sync",
        repo="chainer/chainermn", fix="67430be6", path="chainermn/optimizers.py",
        framework="cupy", rule="SL401", scope="cross-function",
        p=[("self.communicator.allreduce_grad_async(", 109),
           ("self.allreduce_grad_stream.synchronize()", 131)],
        f=[("self.communicator.allreduce_grad_async(", 109)],
        desc="The double-buffering optimizer swaps in the gradients just computed by backward on the "
             "null stream and all-reduces them on its own non-blocking stream; wait() only syncs the "
             "allreduce stream, so packing can read unfinished gradients (fixed during the PR: wait() "
             "also syncs the null stream).",
    ),
    dict(
        id="chainermn-batched-pack-ignores-stream",
        repo="chainer/chainer", fix="aad602d7", path="chainermn/communicators/mpi_communicator_base.py",
        framework="cupy", rule="SL401", scope="cross-function",
        p=[("_memory_utility._batched_pack_params(", 713)],
        f=[("_memory_utility._batched_pack_params(", 713)],
        desc="_pack_params_to_buffer takes the allreduce stream but the batched-copy path launches the "
             "pack kernel on the current stream, so the NCCL allreduce on the given (double-buffering) "
             "stream can read the buffer before it is packed.",
    ),
    dict(
        id="chainermn-batched-unpack-ignores-stream",
        repo="chainer/chainer", fix="aad602d7", path="chainermn/communicators/mpi_communicator_base.py",
        framework="cupy", rule="SL401", scope="cross-function",
        p=[("_memory_utility._batched_unpack_params(", 735)],
        f=[("_memory_utility._batched_unpack_params(", 735)],
        desc="Same for unpacking: the batched unpack kernel runs on the current stream and reads the "
             "receive buffer that the allreduce and division wrote on the given stream, with no wait.",
    ),
    dict(
        id="diffusers-ltx2-connector-mask-per-sample-sync",
        repo="huggingface/diffusers", fix="ebaa1871", path="src/diffusers/pipelines/ltx2/connectors.py",
        framework="pytorch", rule="SL502", scope="local",
        p=[("hidden_states_non_padded = [hidden_states[i, binary_attn_mask[i].bool(), :] for i in range(batch_size)]", 304)],
        f=[("hidden_states = mask * hidden_states + (1 - mask) * registers_expanded", 308)],
        desc="The LTX2 connector removes padding with a boolean-mask index per sample in a list "
             "comprehension, a data-dependent shape and so one device-to-host sync per batch element "
             "(fixed in #13564, 'Eliminate GPU sync overhead': one vectorised mask).",
    ),
]
