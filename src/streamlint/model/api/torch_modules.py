"""PyTorch beyond single tensors: modules, optimizers, multi-tensor ops, namespaces.

What real training code calls and the tensor tables cannot say:
- `nn.Module.to/cuda/cpu/half/bfloat16/float/double` act on the module's parameters and
  buffers: `.to(device, non_blocking=True)` / `.cuda(non_blocking=True)` write them on the
  current stream; `.half()`/`.bfloat16()` rewrite them there (a cast kernel per tensor);
  `.to("cpu")` / `.cpu()` copies them out and releases their GPU storage.
- `torch.optim.Optimizer.step()` reads every parameter's `.grad` and writes the
  parameters on the current stream; `zero_grad()` writes (or frees) the gradients.
  `step` is a hot path, as `forward` is.
- `torch._foreach_<op>_(tensors, ...)` writes every tensor of its list arguments (the
  first list; `_foreach_copy_` and friends too); the out-of-place `_foreach_<op>` reads
  them and returns new CUDA tensors.
- `torch.linalg.*`, `torch.fft.*`, `torch.special.*`: kernels on the current stream.
- `t.untyped_storage().resize_(0)` (and `.storage().resize_(0)`): the tensor's memory is
  released to the caching allocator right there.
"""

from __future__ import annotations


# Methods of a class deriving from an optimizer that run once per training step.
OPTIMIZER_HOT_METHODS = frozenset({"step"})

# Registrations of a callable that PyTorch calls again on every step: autograd hooks on
# a tensor or its gradient accumulator (once per parameter per backward), module hooks
# (once per call of the module) and optimizer step hooks. The callable is a hot entry,
# as `forward` is. Keyed by method name: the registration is the evidence, whatever
# the receiver (`grad_acc.register_hook(fn)` on `grad_fn.next_functions[0][0]`).
HOOK_REGISTRATIONS = frozenset({
    "register_hook", "register_post_accumulate_grad_hook",
    "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "register_full_backward_pre_hook", "register_backward_hook",
    "register_step_pre_hook", "register_step_post_hook",
})

# What a training step calls, by kind: methods of values, whatever the receiver
# (`loss.backward()`, `scaler.scale(loss).backward()`, `accelerator.backward(loss)`,
# `optimizer.step()`, `scaler.step(optimizer)`, `engine.step()`), but not functions of a
# module (`debug_api.step()`, `profiler.step()` of an imported module); and the functions
# below. A loop that calls both kinds trains: a sync there every step, even to time the
# step or to read a memory statistic, is a stall (queries.trains), unlike a measurement
# harness's. (`zero_grad()` is no update: harnesses reset gradients between measured
# backward passes.)
STEP_BACKWARD = "backward"  # the backward pass
STEP_UPDATE = "update"  # the parameter update
TRAINING_STEP_CALLS: dict[str, str] = {"backward": STEP_BACKWARD, "step": STEP_UPDATE}
TRAINING_STEP_FUNCTIONS: dict[str, str] = {"torch.autograd.backward": STEP_BACKWARD}


def optimizer_base(base_texts: list[str]) -> bool:
    """Does a class derive from an optimizer (its `step` is a hot path, as forward is)?"""
    return any(t.rsplit(".", 1)[-1] in ("Optimizer", "ZeroRedundancyOptimizer") or t.startswith("torch.optim.")
               for t in base_texts)


# Hot entries: methods PyTorch runs on every step, by what their class derives from. A method
# of a class deriving from anything in `torch.nn` named here runs once per call of the module.
MODULE_NAMESPACE = "torch.nn."
MODULE_HOT_METHODS = frozenset({"forward"})
