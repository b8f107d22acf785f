"""Methods a framework calls once per step, sample or batch of a loop the project never shows (the training library's,
the data loader's, the RL runner's): hot entries, by what their class derives from or the protocol it implements.
What such a method calls on its receiver on every call is on the same step (`syntax/every_call`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable

from streamlint.model.api import torch_modules


class Driver(Enum):
    """Whose loop calls the method, once per pass."""

    MODULE_CALL = "a module's call"  # `model(x)` runs `forward`
    OPTIMIZER = "the training step's update"
    DATA_LOADER = "the data loader, per item"
    AUTOGRAD = "autograd, per forward and backward pass"
    TRAINING_LIBRARY = "a training library's loop, per batch"
    RL_RUNNER = "an RL runner's loop, per environment step"
    CONSUMER = "the consumer's loop, per item"  # `for batch in loader:` runs `__next__`


@dataclass(frozen=True)
class StepEntry:
    """Methods `methods` of a class that derives from a base `derives` accepts (qualified, through project bases), or
    that defines all of `protocol` itself or through its project bases, run once per pass of `driver`'s loop;
    `handed`: only where the method takes an argument besides its receiver (an environment's `step(action)`)."""

    driver: Driver
    methods: frozenset[str]
    derives: Callable[[str], bool] = lambda base: False
    protocol: frozenset[str] = frozenset()
    handed: bool = False


def _named(*bases: str) -> Callable[[str], bool]:
    names = frozenset(bases)
    return lambda base: base in names


_LIGHTNING_BATCH_HOOKS = frozenset({
    "on_train_batch_start", "on_train_batch_end", "on_validation_batch_start", "on_validation_batch_end",
    "on_test_batch_start", "on_test_batch_end", "on_predict_batch_start", "on_predict_batch_end",
    "on_before_backward", "on_after_backward", "on_before_optimizer_step", "on_before_zero_grad",
})
_LIGHTNING_CALLBACKS = _named(
    "lightning.Callback", "lightning.pytorch.Callback", "lightning.pytorch.callbacks.Callback",
    "pytorch_lightning.Callback", "pytorch_lightning.callbacks.Callback", "pytorch_lightning.callbacks.base.Callback")
_LIGHTNING_MODULES = _named(
    "lightning.LightningModule", "lightning.pytorch.LightningModule", "pytorch_lightning.LightningModule",
    "lightning.pytorch.core.module.LightningModule", "pytorch_lightning.core.module.LightningModule",
    "pytorch_lightning.core.lightning.LightningModule")
_HF_TRAINERS = _named("transformers.Trainer", "transformers.trainer.Trainer", "transformers.Seq2SeqTrainer",
                      "transformers.trainer_seq2seq.Seq2SeqTrainer", "trl.SFTTrainer", "trl.DPOTrainer",
                      "trl.GRPOTrainer", "trl.RewardTrainer")
_HF_CALLBACKS = _named("transformers.TrainerCallback", "transformers.trainer_callback.TrainerCallback")
_ENVIRONMENTS = _named(
    "gym.Env", "gym.core.Env", "gym.Wrapper", "gym.core.Wrapper", "gym.vector.VectorEnv",
    "gymnasium.Env", "gymnasium.core.Env", "gymnasium.Wrapper", "gymnasium.core.Wrapper", "gymnasium.vector.VectorEnv",
    "stable_baselines3.common.vec_env.VecEnv", "stable_baselines3.common.vec_env.base_vec_env.VecEnv")
_RL_GAMES_OBSERVERS = _named("rl_games.common.algo_observer.AlgoObserver")
_RL_GAMES_AGENTS = _named(
    "rl_games.common.a2c_common.A2CBase", "rl_games.common.a2c_common.ContinuousA2CBase",
    "rl_games.common.a2c_common.DiscreteA2CBase", "rl_games.algos_torch.a2c_continuous.A2CAgent",
    "rl_games.algos_torch.a2c_discrete.DiscreteA2CAgent")

STEP_ENTRIES: tuple[StepEntry, ...] = (
    StepEntry(Driver.MODULE_CALL, torch_modules.MODULE_HOT_METHODS, torch_modules.is_module_class),
    StepEntry(Driver.OPTIMIZER, torch_modules.OPTIMIZER_HOT_METHODS, lambda b: torch_modules.optimizer_base([b])),
    StepEntry(Driver.DATA_LOADER, torch_modules.DATASET_HOT_METHODS, lambda b: torch_modules.dataset_base([b])),
    # a custom autograd function's static `forward` and `backward` run on every pass through it
    StepEntry(Driver.AUTOGRAD, frozenset({"forward", "backward"}),
              _named("torch.autograd.Function", "torch.autograd.function.Function")),
    StepEntry(Driver.TRAINING_LIBRARY, frozenset({"training_step", "validation_step", "test_step", "predict_step",
                                                  "optimizer_step"}) | _LIGHTNING_BATCH_HOOKS, _LIGHTNING_MODULES),
    StepEntry(Driver.TRAINING_LIBRARY, _LIGHTNING_BATCH_HOOKS, _LIGHTNING_CALLBACKS),
    StepEntry(Driver.TRAINING_LIBRARY, frozenset({"training_step", "compute_loss", "prediction_step"}), _HF_TRAINERS),
    StepEntry(Driver.TRAINING_LIBRARY, frozenset({"on_step_begin", "on_step_end", "on_substep_end",
                                                  "on_pre_optimizer_step", "on_optimizer_step"}), _HF_CALLBACKS),
    StepEntry(Driver.RL_RUNNER, frozenset({"step", "step_wait"}), _ENVIRONMENTS),
    # the environment protocol (Gym's): a class with `step(action)` and `reset()` is stepped by an outer loop, whatever
    # its base (an RL project's own abstract `Env`)
    StepEntry(Driver.RL_RUNNER, frozenset({"step"}), protocol=frozenset({"step", "reset"}), handed=True),
    # the iterator protocol: a loader's or reader's `__next__` hands the consumer one batch per pass of its loop
    StepEntry(Driver.CONSUMER, frozenset({"__next__"}), protocol=frozenset({"__iter__", "__next__"})),
    StepEntry(Driver.RL_RUNNER, frozenset({"process_infos"}), _RL_GAMES_OBSERVERS),
    StepEntry(Driver.RL_RUNNER, frozenset({"calc_gradients", "env_step", "get_action_values"}), _RL_GAMES_AGENTS),
)

# Every method name some row makes a hot entry (a quick test before a class's bases are read).
STEP_METHODS = frozenset().union(*(row.methods for row in STEP_ENTRIES))
