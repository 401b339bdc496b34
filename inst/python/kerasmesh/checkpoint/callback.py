"""A `fit()` callback that writes sharded checkpoints (see store.py)."""

from __future__ import annotations

import functools
from typing import Any

from . import background as pending_saves
from .store import current_step, save_step
from .arguments import check_count, check_directory
from .files import scan
from ..core.errors import KerasmeshError
from ..core import kinds
from ..core.text import listing, noun

UNITS = ("epoch", "step")


def callback(directory: Any, every: Any = 1, unit: Any = "epoch",
             keep: Any = None, background: bool = True,
             timeout: Any = None) -> Any:
    """A Keras callback that saves a checkpoint every `every` epochs or
    steps, keeping the last `keep` (None: all); with `background`, training
    goes on while a save is written (see `background.py`), and `fit()`
    waits for the last one when it ends. `timeout`: the seconds each save
    call may take (waiting for the pending save included), and the end of
    `fit()` may wait.

    Steps are the optimizer's iterations, counted across `fit()` calls and
    restores, so a run resumed from step s saves at the same steps as the
    run it resumes, and its first save deletes kerasmesh's steps after s
    (the abandoned run's). With `unit = "step"`, `every` must be a multiple
    of the model's `steps_per_execution` (checked when `fit()` starts); an
    execution cut short at the end of an epoch that passes a multiple of
    `every` saves where it ends. A background save's error is raised by
    the next save or when `fit()` ends.

    Raises:
        KerasmeshError: kind `argument` for a `unit` other than "epoch" or
            "step"; when `fit()` starts, for an `every` that is not a
            multiple of `steps_per_execution`.
    """
    directory = check_directory(directory, writing=True)
    if unit not in UNITS:
        raise KerasmeshError(
            kinds.ARGUMENT, '`unit` must be "epoch" or "step".',
            received=unit)
    return _callback_class()(directory, check_count(every, "every", False),
                             unit, check_count(keep, "keep"),
                             {"background": bool(background),
                              "timeout": timeout})


@functools.cache
def _callback_class() -> type:
    """The callback's class, made once Keras is imported."""
    import keras

    class CheckpointCallback(keras.callbacks.Callback):
        """Saves sharded checkpoints with Orbax while `fit()` runs."""

        def __init__(self, directory: str, every: int, unit: str,
                     keep: int | None, how: dict):
            super().__init__()
            self.directory = directory
            self.every = every
            self.unit = unit
            self.keep = keep
            self.background = how["background"]
            self.timeout = how["timeout"]
            self.saved: list[int] = []
            self._epoch = 0
            self._start = None  # the step this fit() started from
            self._last = 0

        def _save(self, epoch: int) -> None:
            step = current_step(self.model)
            if self.saved and self.saved[-1] == step:
                return
            deadline = pending_saves.deadline_of(self.timeout)
            pending_saves.wait(deadline)  # raises a failed save's error
            save_step(self.model, self.directory, step, epoch=epoch,
                      overwrite=True, keep=self.keep, start=self._start,
                      background=self.background, deadline=deadline)
            self._start = None  # the steps beyond it are gone now
            self.saved.append(step)

        def on_train_begin(self, logs=None):
            if self.unit == "step":
                check_execution(self.every, self.model)
            self._start = self._last = current_step(self.model)
            check_resumed(self.directory, self._start)

        def on_epoch_begin(self, epoch, logs=None):
            self._epoch = int(epoch)

        def on_train_batch_end(self, batch, logs=None):
            step = current_step(self.model)
            passed = step // self.every > self._last // self.every
            self._last = step
            if self.unit == "step" and passed:
                self._save(epoch=self._epoch)

        def on_epoch_end(self, epoch, logs=None):
            if self.unit == "epoch" and (epoch + 1) % self.every == 0:
                self._save(epoch=int(epoch) + 1)

        def on_train_end(self, logs=None):
            pending_saves.wait(pending_saves.deadline_of(self.timeout))

    return CheckpointCallback


def check_resumed(directory: str, start: int) -> None:
    """A run whose first save would delete newer steps must have resumed
    from a step of `directory` (restored it): one starting from any other
    step (a new model, `weights_only`) is refused before it trains.

    Raises:
        KerasmeshError: `checkpoint_stale`, naming the newer steps.
    """
    steps = [s for s in scan(directory, deep=False) if s["complete"]]
    newer = [s["step"] for s in steps
             if s["writer"] == "kerasmesh" and s["step"] > start]
    if not newer or any(s["step"] == start for s in steps):
        return
    shown = listing(newer, quote=False)
    raise KerasmeshError(
        kinds.CHECKPOINT_STALE, "The run must resume from a step of `dir` "
        "to replace its newer steps.",
        x=f"{directory} holds {noun(len(newer), 'step')} {shown}; this run "
          f"starts at step {start}, which is none of its steps (a new "
          "model, or one restored with `weights_only = TRUE`): its first "
          f"save would delete {'it' if len(newer) == 1 else 'them'}.",
        i="Restore a step of it with `restore_checkpoint()` to resume, or "
          "save into another directory.")


def check_execution(every: int, model: Any) -> None:
    """With `unit = "step"`, the callback sees the model after every
    `steps_per_execution` steps only: `every` must be a multiple of it.

    Raises:
        KerasmeshError: `argument`, naming `every` and both values.
    """
    per = int(getattr(model, "steps_per_execution", 1) or 1)
    if every % per:
        raise KerasmeshError(
            kinds.ARGUMENT, '`every` must be a multiple of the model\'s '
            '`steps_per_execution` when `unit` is "step".',
            x=f"`every` is {every}; `steps_per_execution` is {per}, so the "
              f"callback sees steps {per}, {2 * per}, {3 * per}, ... only.",
            i=f"Pass `every = {per}` or a multiple of it, or "
              f'`unit = "epoch"`.')
