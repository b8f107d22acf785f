"""PyTorch beyond single tensors: modules, optimizers, hooks and training steps (hot paths)."""

from __future__ import annotations

# Methods of a class deriving from an optimizer that run once per training step.
OPTIMIZER_HOT_METHODS = frozenset({"step"})

# Registrations of a callable PyTorch calls on every step (autograd, module and optimizer hooks):
# a hot entry, as `forward` is. By method name: the registration is the evidence, whatever the receiver.
HOOK_REGISTRATIONS = frozenset({
    "register_hook", "register_post_accumulate_grad_hook", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "register_full_backward_pre_hook", "register_backward_hook",
    "register_step_pre_hook", "register_step_post_hook",
})

# What a training step calls, by kind: methods whatever the receiver (`loss.backward()`,
# `scaler.step(opt)`), not functions of a module (`profiler.step()`), and the functions below. A
# loop that calls both kinds trains: a sync there every step is a stall (queries.trains), unlike a
# measurement harness's (`zero_grad()` is no update: harnesses reset gradients between passes).
STEP_BACKWARD = "backward"  # the backward pass
STEP_UPDATE = "update"  # the parameter update
TRAINING_STEP_CALLS: dict[str, str] = {"backward": STEP_BACKWARD, "step": STEP_UPDATE}
TRAINING_STEP_FUNCTIONS: dict[str, str] = {"torch.autograd.backward": STEP_BACKWARD}


# Methods of a class deriving from a map-style dataset that the data loader calls once per sample (or per batch of
# indices): a hot entry, as `forward` is; GPU work or a wait there repeats for every item of every epoch.
DATASET_HOT_METHODS = frozenset({"__getitem__", "__getitems__"})
DATASET_BASES = frozenset({"torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset"})


def dataset_base(base_texts: list[str]) -> bool:
    """Does a class derive from PyTorch's map-style `Dataset` (its `__getitem__` runs per sample)?"""
    return any(t in DATASET_BASES for t in base_texts)


def optimizer_base(base_texts: list[str]) -> bool:
    """Does a class derive from an optimizer (its `step` is a hot path, as forward is)?"""
    return any(t.rsplit(".", 1)[-1] in ("Optimizer", "ZeroRedundancyOptimizer") or t.startswith("torch.optim.")
               for t in base_texts)


# Hot entries: methods PyTorch runs on every step, by what their class derives from. A method
# of a class deriving from anything in `torch.nn` named here runs once per call of the module.
MODULE_NAMESPACE = "torch.nn."
# Libraries' classes that derive from `torch.nn.Module` (their models' `forward` is a module's): by namespace, by name,
# and Hugging Face's `transformers.models.<name>.modeling_<name>.*`.
LIBRARY_MODULE_NAMESPACES = ("diffusers.models.", "transformers.modeling_utils.", "timm.models.",
                             "lightning.pytorch.core.module.", "pytorch_lightning.core.module.")
LIBRARY_MODULE_CLASSES = frozenset({"transformers.PreTrainedModel", "diffusers.ModelMixin", "lightning.LightningModule",
                                    "lightning.pytorch.LightningModule", "pytorch_lightning.LightningModule"})


def is_module_class(qualname: str) -> bool:
    """A class that derives from `torch.nn.Module`, by where it is defined (a base the project imports)."""
    return qualname.startswith((MODULE_NAMESPACE, *LIBRARY_MODULE_NAMESPACES)) or qualname in LIBRARY_MODULE_CLASSES \
        or (qualname.startswith("transformers.models.") and ".modeling_" in qualname)
# The methods that move a module's parameters (and return the module): `.cuda()`, `.to(device)`.
MODULE_MOVES = frozenset({"cuda", "to"})
# `nn.Module` methods no tensor has that return the module itself (`model.cuda().eval()`: the moved module).
RETURNS_SELF = frozenset({"eval", "train", "apply", "share_memory", "to_empty", "requires_grad_", "compile"})
# A module's methods that list tensors in its memory (its parameters and buffers: where `.to()` put them).
MEMORY_LISTINGS = frozenset({"parameters", "buffers"})
# A module's methods that yield (name, item) pairs: the names are strings the host has.
NAMED_ITEMS = frozenset({"named_parameters", "named_buffers", "named_modules", "named_children"})
MODULE_HOT_METHODS = frozenset({"forward"})
# Cold entries: methods of a module or an optimizer that PyTorch (and the code that saves, restores or prints
# one) calls at checkpoint, restore or print time, never once per step; what they reach only is off the hot path.
# A module-level function whose name holds one of these words builds, loads or converts a checkpoint's state
# (`load_optimizer_state_dict`, `get_model_state_dict`): it runs at checkpoint or restore time, as the methods below do.
COLD_FUNCTION_WORDS = ("state_dict",)
# A function or method of any class whose name holds one of these words warms a program up (compiles, autotunes,
# fills caches) once before its steady state: a cold entry.
WARM_UP_WORDS = ("warmup", "warm_up")
# A method of any class with one of these names ends the object's work (flushes, joins, runs a last optimization
# before exit): it runs once, at the end of a run, so what it reaches only is off the hot path.
TEARDOWN_METHODS = frozenset({"terminate", "shutdown", "close", "finalize", "teardown", "cleanup", "__del__",
                              "__exit__"})
# A module's or an optimizer's constructor runs where the model is built (set-up), not once per step.
COLD_METHODS = frozenset({"__init__", "state_dict", "load_state_dict", "_save_to_state_dict", "_load_from_state_dict",
                          "extra_repr", "__repr__", "__getstate__", "__setstate__"})
