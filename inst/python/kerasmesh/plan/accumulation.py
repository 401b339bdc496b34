"""Micro-batches: a global batch cut into `accumulation_steps` pieces.

`batch_size` is always the global batch, the samples of one optimizer
update. With `accumulation_steps` k, one compiled step processes
`batch_size / k` samples (the micro-batch) and the optimizer, built with
Keras's `gradient_accumulation_steps = k`, sums k steps' gradients in
accumulators (one per trainable variable, placed as the variable is, as
every optimizer slot is) and updates the weights every k-th step.
"""

from __future__ import annotations

from typing import Any

from ..core.checks import divisors, is_whole
from ..core.errors import KerasmeshError
from ..core.scopes import no_distribution
from ..core import kinds, text
from .batches import MAX_WHOLE
from .slots import fresh_optimizer


def check_accumulation_steps(steps: Any) -> int:
    """`steps` as an int.

    Raises:
        KerasmeshError: kind `accumulation_steps` unless a whole number
            from 1 to 2^31 - 1.
    """
    if not is_whole(steps, 1) or steps > MAX_WHOLE:
        raise KerasmeshError(
            kinds.ACCUMULATION_STEPS,
            "`accumulation_steps` must be a positive whole number.",
            received=steps,
            i="It is the number of micro-batches per optimizer update; 1 "
              "for none.")
    return int(steps)


def micro_batch_size(batch_size: int, steps: int, ways: int | None = None,
                     batch_dim_name: str | None = None) -> int:
    """The samples of one micro-batch: `batch_size / steps`.

    Args:
        ways: the devices of the batch axis `batch_dim_name`, which must
            split the micro-batch evenly; None to skip that check (skipped
            too for one step: the planner checks the batch itself).

    Raises:
        KerasmeshError: kind `accumulation_steps` when `steps` does not
            divide `batch_size`, or the micro-batch is not a multiple of
            `ways`.
    """
    steps = check_accumulation_steps(steps)
    if batch_size % steps:
        raise KerasmeshError(
            kinds.ACCUMULATION_STEPS,
            f"`accumulation_steps` ({steps}) must divide `batch_size` "
            f"({batch_size}).",
            x=f"A batch of {text.plural(batch_size, 'sample')} can't make "
              f"{steps} equal micro-batches.",
            i=f"Divisors of {batch_size}: " +
              ", ".join(map(str, divisors(batch_size)[:12])) + ".")
    micro = batch_size // steps
    if steps > 1 and ways and micro % ways:
        fit = [d for d in divisors(batch_size)
               if (batch_size // d) % ways == 0]
        raise KerasmeshError(
            kinds.ACCUMULATION_STEPS,
            f"A micro-batch of {text.plural(micro, 'sample')} can't be split "
            f"evenly over "
            f'batch axis "{batch_dim_name}" ({ways}).',
            x=f"`batch_size` {batch_size} / `accumulation_steps` {steps} "
              f"= {micro}, not a multiple of {ways}.",
            i=("`accumulation_steps` that work here: " +
               ", ".join(map(str, fit[:12])) + ".") if fit else
              f"Use a `batch_size` that is a multiple of {ways}.")
    return micro


def accumulating_optimizer(optimizer: Any, model: Any,
                           steps: int | None) -> Any:
    """`optimizer` (a name, an optimizer or None for the model's) set to
    accumulate `steps` micro-batches' gradients: a fresh copy with
    Keras's `gradient_accumulation_steps` set (None for 1, whatever the
    optimizer's own setting). `steps` None keeps the optimizer's own
    setting. A name with `steps` 1 or None stays as it is.

    Raises:
        KerasmeshError: kind `optimizer` for something Keras can't use.
    """
    if steps in (None, 1) and isinstance(optimizer, str):
        return optimizer
    opt = fresh_optimizer(optimizer, model)
    if steps is None:
        return opt
    wanted = steps if steps > 1 else None
    if opt is None or opt.gradient_accumulation_steps == wanted:
        return opt
    config = dict(opt.get_config(), gradient_accumulation_steps=wanted)
    with no_distribution():
        # Counters are created from values: outside any distribution.
        return type(opt).from_config(config)
