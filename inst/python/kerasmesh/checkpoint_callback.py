"""A `fit()` callback that writes sharded checkpoints (see checkpoint.py)."""

from __future__ import annotations

import functools
from typing import Any

from .checkpoint import (check_directory, current_step, new_checkpointer,
                         save_step)
from .errors import KerasmeshError

UNITS = ("epoch", "step")


def callback(directory: Any, every: Any = 1, unit: Any = "epoch",
             keep: Any = None) -> Any:
    """A Keras callback that saves a checkpoint every `every` epochs or
    steps, keeping the last `keep` (None: all).

    Steps are the optimizer's iterations, counted across `fit()` calls and
    restores, so a run resumed from step s saves at the same steps as the
    run it resumes. Saves are synchronous: `fit()` goes on once the step
    is committed.

    Raises:
        KerasmeshError: kind `argument` for a `unit` other than "epoch" or
            "step".
    """
    directory = check_directory(directory)
    if unit not in UNITS:
        raise KerasmeshError(
            "argument", '`unit` must be "epoch" or "step".',
            received=unit)
    return _callback_class()(directory, int(every), unit,
                             None if keep is None else int(keep))


@functools.lru_cache(maxsize=None)
def _callback_class() -> type:
    """The callback's class, made once Keras is imported."""
    import keras

    class CheckpointCallback(keras.callbacks.Callback):
        """Saves sharded checkpoints with Orbax while `fit()` runs."""

        def __init__(self, directory: str, every: int, unit: str,
                     keep: int | None):
            super().__init__()
            self.directory = directory
            self.every = every
            self.unit = unit
            self.keep = keep
            self.saved: list[int] = []
            self._checkpointer = None
            self._epoch = 0

        def _save(self, epoch: int) -> None:
            if self._checkpointer is None:
                self._checkpointer = new_checkpointer(self.directory,
                                                      self.keep)
            step = current_step(self.model)
            if step in self.saved:
                return
            save_step(self._checkpointer, self.model, self.directory, step,
                      epoch=epoch, overwrite=True)
            self.saved.append(step)

        def on_epoch_begin(self, epoch, logs=None):
            self._epoch = int(epoch)

        def on_train_batch_end(self, batch, logs=None):
            if self.unit == "step" and \
                    current_step(self.model) % self.every == 0:
                self._save(epoch=self._epoch)

        def on_epoch_end(self, epoch, logs=None):
            if self.unit == "epoch" and (epoch + 1) % self.every == 0:
                self._save(epoch=int(epoch) + 1)

        def on_train_end(self, logs=None):
            if self._checkpointer is not None:
                self._checkpointer.close()
                self._checkpointer = None

    return CheckpointCallback
