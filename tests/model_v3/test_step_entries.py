"""Methods a framework calls once per pass of a loop the project never shows (`api/step_entries`): by what the class
derives from, by the environment protocol (`step(action)` with `reset()`), and the methods such an entry calls on its
receiver on every call (a template method's steps, also through `super().step(...)`). Each is hot under the entry."""

from __future__ import annotations

import textwrap

import libcst as cst

from streamlint.model.file_model import analyze_file
from streamlint.model.syntax.every_call import EveryCall, every_call


def _hot(source: str) -> dict[str, str]:
    """Each walked function's hot entry ("" when it has none), by its name in the module."""
    model = analyze_file(cst.parse_module(textwrap.dedent(source)), "prog.py")
    found: dict[str, str] = {}
    for (qualname, context), _ in model.solved.walks.items():
        name = qualname[len(model.module) + 1:]
        found[name] = found.get(name) or context.hot
    return found


def test_library_callbacks_and_agents_run_per_step():
    hot = _hot("""
        import torch
        from transformers import TrainerCallback
        from rl_games.common.algo_observer import AlgoObserver
        import pytorch_lightning as pl

        class MemoryCallback(TrainerCallback):
            def on_step_end(self, args, state, control, **kwargs):
                torch.cuda.synchronize()

            def on_epoch_end(self, args, state, control, **kwargs):
                torch.cuda.synchronize()

        class Observer(AlgoObserver):
            def process_infos(self, infos, done_indices):
                torch.cuda.synchronize()

            def after_print_stats(self, frame, epoch_num, total_time):
                torch.cuda.synchronize()

        class Timer(pl.Callback):
            def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
                torch.cuda.synchronize()

            def on_train_epoch_end(self, trainer, module):
                torch.cuda.synchronize()
    """)
    assert hot["MemoryCallback.on_step_end"] == "MemoryCallback.on_step_end"
    assert hot["Observer.process_infos"] == "Observer.process_infos"
    assert hot["Timer.on_train_batch_end"] == "Timer.on_train_batch_end"
    assert not hot["MemoryCallback.on_epoch_end"] and not hot["Observer.after_print_stats"]
    assert not hot["Timer.on_train_epoch_end"]


def test_the_environment_protocol_needs_an_action_and_a_reset():
    hot = _hot("""
        import torch

        class Simulator:
            def step(self, actions):
                self.apply(actions)
                if self.debug:
                    self.draw()

            def reset(self):
                torch.cuda.synchronize()

            def apply(self, actions):
                torch.cuda.synchronize()

            def draw(self):
                torch.cuda.synchronize()

        class Counter:
            def step(self):
                torch.cuda.synchronize()

            def reset(self):
                torch.cuda.synchronize()

        class Scheduler:
            def step(self, epoch):
                torch.cuda.synchronize()
    """)
    assert hot["Simulator.step"] == hot["Simulator.apply"] == "Simulator.step"
    assert not hot["Simulator.reset"] and not hot["Simulator.draw"]  # (per episode; under a flag)
    assert not hot["Counter.step"]  # no action handed: a counter, not an environment
    assert not hot["Scheduler.step"]  # no `reset`: not the protocol


def test_a_subclass_step_reached_through_the_base_template():
    hot = _hot("""
        import gym
        import torch

        class Base(gym.Env):
            def step(self, actions):
                self.pre_physics_step(actions)
                for _ in range(4):
                    self.simulate()
                self.post_physics_step()
                return self.obs

            def pre_physics_step(self, actions):
                pass

            def post_physics_step(self):
                pass

            def simulate(self):
                pass

        class Task(Base):
            def step(self, actions):
                actions = actions.clamp(-1, 1)
                return super().step(actions)

            def post_physics_step(self):
                torch.cuda.synchronize()

            def reset_idx(self, ids):
                torch.cuda.synchronize()
    """)
    assert hot["Task.post_physics_step"] == "Task.step"
    assert hot["Base.post_physics_step"] == "Base.step"
    assert not hot["Task.reset_idx"]


def test_every_call_stops_at_an_early_exit():
    node = cst.parse_statement(textwrap.dedent("""
        def step(self, actions):
            self.first(actions)
            with self.timer:
                self.second()
            if self.done:
                raise StopIteration
            self.third()
            if self.paused:
                self.fourth()
                return None
            self.fifth()
            super().step(actions)
    """))
    found = every_call(node)
    assert found.receiver_calls == {"first", "second", "third"}
    assert found.super_calls == frozenset()
    node = cst.parse_statement("def step(self, a):\n    try:\n        self.x()\n    finally:\n        pass\n    super().step(a)\n")
    assert every_call(node) == EveryCall(frozenset({"x"}), frozenset({"step"}))


def test_an_iterator_hands_out_one_item_per_pass_of_its_consumer():
    hot = _hot("""
        import torch

        class Reader:
            def __init__(self, batches):
                self.batches = batches

            def __iter__(self):
                return self

            def __next__(self):
                if not self.batches:
                    raise StopIteration
                return self._decode(self.batches.pop())

            def _decode(self, batch):
                torch.cuda.synchronize()

        class NotAnIterator:
            def __next__(self):
                torch.cuda.synchronize()
    """)
    assert hot["Reader.__next__"] == hot["Reader._decode"] == "Reader.__next__"
    assert not hot["Reader.__iter__"] and not hot["NotAnIterator.__next__"]
