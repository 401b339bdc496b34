"""The batches a call to `fit()`, `evaluate()` or `predict()` will feed.

Keras splits every batch over the distribution's batch axis, and JAX
fails when the axis can't divide one ("IndivisibleError"): at the first
step for a batch size, at the end of an epoch for a last partial batch,
and at the end of the first epoch for validation data. The guard reads
the call's arguments here, bound to Keras's own signature, and checks
every batch the call will feed before it runs (`plan.batches`'s
problems): the training data (after `validation_split`), the validation
data (`validation_split` or `validation_data`, at `validation_batch_size`
or `batch_size`) and the data to evaluate or predict.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

DEFAULT_BATCH_SIZE = 32


@dataclass(frozen=True)
class Feed:
    """Data a call feeds in batches.

    Attributes:
        what: the data, in words ("the training data", "the validation
            data", ...).
        batch_size: the batch size Keras uses for it.
        samples: the number of samples, or None for one batch (`*_on_batch`)
            or a call that stops after a number of steps.
        argument: the argument that sets `batch_size`.
    """

    what: str
    batch_size: int
    samples: int | None
    argument: str = "batch_size"


def first_shape(x: Any) -> Any:
    """The shape of an array, or of the first array of a list or dict."""
    shape = getattr(x, "shape", None)
    if shape is None and isinstance(x, (list, tuple)) and x:
        shape = getattr(x[0], "shape", None)
    if shape is None and isinstance(x, dict) and x:
        shape = getattr(next(iter(x.values())), "shape", None)
    return shape


def sample_count(x: Any) -> int | None:
    """The number of samples in arrays `x`; None for a dataset or
    generator (Keras batches those itself)."""
    shape = first_shape(x)
    if shape is None or not len(shape) or shape[0] is None:
        return None
    return int(shape[0])


def bind_call(name: str, args: tuple, kwargs: dict,
              function: Callable | None = None, model: Any = None
              ) -> dict | None:
    """The call's arguments by name, bound to the signature of `function`
    (Keras's own method by default); None when they don't bind (Keras
    then raises its own error)."""
    import keras

    function = function or getattr(keras.Model, name)
    function = getattr(function, "__wrapped__", function)
    try:
        return dict(inspect.signature(function).bind(
            model, *args, **kwargs).arguments)
    except TypeError:
        return None


def call_feeds(name: str, args: tuple, kwargs: dict,
               function: Callable | None = None, model: Any = None
               ) -> list[Feed]:
    """Every batch a training or inference call will feed, as `Feed`s.

    Empty when the call does not bind or feeds a dataset or generator.
    """
    bound = bind_call(name, args, kwargs, function, model)
    if bound is None:
        return []
    samples = sample_count(bound.get("x"))
    if samples is None:
        return []
    if name.endswith("_on_batch"):
        return [Feed("the batch", samples, None)]
    batch_size = bound.get("batch_size") or DEFAULT_BATCH_SIZE
    steps = bound.get("steps_per_epoch" if name == "fit" else "steps")
    if name != "fit":
        data = "the data to predict" if name == "predict" else \
            "the data to evaluate"
        return [Feed(data, int(batch_size),
                     samples if steps is None else None)]
    return _fit_feeds(bound, samples, int(batch_size), steps)


def _fit_feeds(bound: dict, samples: int, batch_size: int,
               steps: Any) -> list[Feed]:
    """The training data and the validation data of a `fit()` call."""
    validation_batch = int(bound.get("validation_batch_size") or batch_size)
    argument = "validation_batch_size" if \
        bound.get("validation_batch_size") else "batch_size"
    split = bound.get("validation_split") or 0.0
    data = bound.get("validation_data")
    validation = None
    if split and data is None:
        # Keras's own split (`array_slicing.train_validation_split()`).
        train = int(math.floor(samples * (1.0 - float(split))))
        if 0 < train < samples:
            validation = Feed(f"the validation split ({split:g})",
                              validation_batch, samples - train, argument)
            samples = train
    elif isinstance(data, (list, tuple)) and data:
        n = sample_count(data[0])
        if n is not None:
            validation = Feed("the validation data", validation_batch, n,
                              argument)
    if validation is not None and bound.get("validation_steps") is not None:
        validation = Feed(validation.what, validation_batch, None, argument)
    training = Feed("the training data", batch_size,
                    samples if steps is None else None)
    return [training] + ([validation] if validation else [])
