"""Batches the batch axis must split: the batch size and the last batch."""

from __future__ import annotations

from typing import Any

from ..core.checks import is_whole
from ..core.errors import KerasmeshError
from ..core.kinds import ERROR
from ..core.layout_problems import problem
from ..core.text import listing, plural
from ..core import kinds

MAX_WHOLE = 2**31 - 1


def batch_problems(batch_dim_name: str, batch_size: int | None,
                   sizes: dict[str, int], samples: int | None = None,
                   what: str | None = None, argument: str = "batch_size"
                   ) -> list[dict]:
    """Errors for a batch axis the mesh lacks, or a batch (or the last
    batch of `samples`) that the batch axis can't split evenly.

    Args:
        what: the data the batches hold ("the validation data"), for the
            message; None for a plan's batch size.
        argument: the argument that sets `batch_size`, for the fix.
    """
    if batch_dim_name not in sizes:
        return [problem(
            kinds.LAYOUT_AXES, ERROR, None, None,
            f'Batch axis "{batch_dim_name}" is not an axis of the mesh.',
            [("x", f"The mesh's axes are {listing(list(sizes))}; Keras "
                   "fails when it splits the first batch."),
             ("i", "Pass one of them as `batch_dim_name`.")],
            "unknown batch axis")]
    ways = sizes[batch_dim_name]
    if batch_size is None:
        return []
    last = samples % batch_size if samples else 0
    if batch_size % ways == 0 and last % ways == 0:
        return []
    axis = f'batch axis "{batch_dim_name}" ({ways})'
    if batch_size % ways == 0:
        return [_last_batch_problem(axis, ways, batch_size, samples, what)]
    lower = (batch_size // ways) * ways
    options = [str(n) for n in (lower, lower + ways) if n > 0]
    left = batch_size % ways
    subject = f"Batch size {batch_size}" + (f" of {what}" if what else "")
    use = f"`{argument}`" if what else "a batch size"
    return [problem(
        kinds.BATCH_SIZE, ERROR, None, None,
        f"{subject} can't be split evenly over {axis}.",
        [("x", f"{batch_size} is not a multiple of {ways} ({left} left "
               "over); JAX fails when Keras splits the first batch."),
         ("i", f"Use a multiple of {ways} as {use}, such as "
               f"{' or '.join(options)}; the last batch of an epoch must be "
               "a multiple too.")],
        "batch size")]


def _last_batch_problem(axis: str, ways: int, batch_size: int, samples: int,
                        what: str | None) -> dict:
    """The last batch of `samples` (batch_size a multiple of `ways`): only
    a sample count that `ways` divides can fix it."""
    last = samples % batch_size
    extra = ways - samples % ways
    bullets = [
        ("x", f"{plural(samples, 'sample')} in batches of {batch_size} "
              "leave a last "
              f"batch of {last}, not a multiple of {ways}; JAX fails at the "
              "end of the first epoch."),
        ("i", f"Use a sample count that {ways} divides: drop "
              f"{samples % ways} (to {samples - samples % ways}) or add "
              f"{extra} (to {samples + extra}). No batch size can help: "
              f"each must be a multiple of {ways}.")]
    if what and what.startswith("the validation split"):
        bullets.append(("i", "Or pass `validation_data` with a multiple of "
                             f"{ways} samples instead of `validation_split`."))
    return problem(
        kinds.BATCH_SIZE, ERROR, None, None,
        f"The last batch{' of ' + what if what else ''} can't be split "
        f"evenly over {axis}.", bullets, "last batch")


def check_batch_size(batch_size: Any) -> int | None:
    """`batch_size` as an int (None stays None).

    Raises:
        KerasmeshError: kind `argument` unless a whole number from 1 to
            2^31 - 1 (R's integers).
    """
    if batch_size is None:
        return None
    if not is_whole(batch_size, 1):
        raise KerasmeshError(
            kinds.ARGUMENT, "`batch_size` must be a positive whole number.",
            received=batch_size)
    if batch_size > MAX_WHOLE:
        # R's integers (and reticulate 1.28's conversion) stop there.
        raise KerasmeshError(
            kinds.ARGUMENT, f"`batch_size` must be at most {MAX_WHOLE:,}.",
            x=f"Received {int(batch_size):,}.")
    return int(batch_size)
