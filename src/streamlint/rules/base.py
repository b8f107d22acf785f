"""What a rule is: metadata, its documentation (the class docstring), and a query."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterable, Optional

if TYPE_CHECKING:  # libcst only for the annotation: a fully cached run never loads it
    import libcst as cst

    from streamlint.checked_file import CheckedFile
    from streamlint.fixes.model import Fix


@dataclass(frozen=True)
class Finding:
    """A rule's answer: the node to point at, the message to show and, when the rule
    knows one, a fix."""

    node: cst.CSTNode
    message: str
    fix: Optional["Fix"] = None
    # The fix idiom in one short line (ruff's `help:`), so the message can stay short.
    help: Optional[str] = None


# The loop placement policy the hot-path rules share (readings/hot_paths.repeating_loops), as their docs say it.
LOOP_POLICY = """\
- a loop of a few passes written out in the code (`for t in [fp32, fp16]:`,
  `for _ in range(3):`, a written count up to 8) is judged by the loop
  around it, if any;
- a loop that waits for a person every iteration (`input()`), draws a
  figure on every pass (a call of matplotlib, seaborn, plotly or bokeh), or
  reads or writes a file on every pass (`open`, `cv2.imwrite`, `imageio`,
  `np.save`, `torch.save`, not under a test that picks some passes),
  itself or through a function of the project it calls, is no hot path: the
  host's wait for the person, the drawing or the file is the cost; nor is a
  hot entry that does so on every call (a dataset's `__getitem__` that
  loads an image);
- a loop whose every pass makes current the device its item names
  (`for gpu in gpus: with cupy.cuda.Device(gpu.index):`) runs once per
  device, and is judged by the loop around it;
- a pass that leaves the loop after the operation (a `return`, a `raise`
  or a `break` later in the pass: a loop that tries items until one
  works; or the `return` or `raise` the operation is part of: an error
  message's values) runs it once, and is judged by the loop around it;
- in a training loop that steps its optimizer only every N passes
  (gradient accumulation: `if (i + 1) % accum == 0: opt.step()`, or
  `if (i + 1) % accum: continue` before the update), that test marks the
  real step: what it lets through runs on every optimizer step, and is
  reported so; a scheduler or a log line every N passes of a loop that
  steps on every pass stays now and then;
- nothing repeats in a function that runs at checkpoint, restore or print
  time: `state_dict`, `load_state_dict` and the like of a module or an
  optimizer, a module-level function named for a checkpoint's state
  (`load_optimizer_state_dict`), a warm-up function or method (`warmup`,
  `warm_up`), a teardown method of any class (`terminate`, `close`,
  `shutdown`, `finalize`, `__exit__`), or a function only those call; nor in one that every call
  site in sight calls only now and then (under `if step % 100 == 0:`, in
  warm-up passes, in an `except` handler; not a switch such as `if
  args.log:`, on or off for the whole run), directly or through helpers;
- a helper with no loop of its own is on the hot path of each loop that
  calls it unconditionally on every pass (directly, through helpers, or as
  a method handed in: `run(trainer.step, loader)`), in its own file or in
  another module of the project (`for layer in self.layers:
  layer.forward(...)` in `model.py`), and the message names that loop's
  function and the call's line (and file); not a helper
  cached with `functools.lru_cache` (it runs once per argument), not one a
  measurement loop calls (one that reads a host timer and trains nothing),
  and not a host read whose value the helper returns (the caller's use
  decides whether the wait is needed);"""

class Rule:
    """Base class. Subclasses set `code`, `name`, `summary` and document themselves.

    The class docstring is the rule's user documentation, in ruff's form:
    ``## What it does`` / ``## Why is this bad?`` / ``## Example`` / ``## Use instead``.
    `streamlint rule CODE`, SARIF and docs/rules/ all render that one text.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    # A meta rule checks streamlint's own comments rather than GPU code: it has no
    # query over the stream model (the engine runs it after suppression), no GPU
    # behaviour and so no runtime fixture pair.
    meta: ClassVar[bool] = False
    # "always" or "sometimes" when findings carry a fix (ruff's wording), "none" otherwise.
    fix_availability: ClassVar[str] = "none"

    def check(self, analysis: "CheckedFile") -> Iterable[Finding]:
        raise NotImplementedError

    @classmethod
    def docs(cls) -> str:
        # (the loop policy SL103, SL201, SL501 and SL502 share, written once: `{loop_policy}` in their docstrings)
        return inspect.cleandoc(cls.__doc__ or "").replace("{loop_policy}", LOOP_POLICY)
