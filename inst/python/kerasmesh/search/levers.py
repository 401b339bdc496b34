"""The levers a search may use with the layout: remat and micro-batches.

A configuration's levers (`cost.recompute.Levers`) are what each block
recomputes in the backward pass (`remat.choice.CHOICES`, or one per
block), and how many micro-batches make the global batch, each split
evenly over the data axis. `lever_space()` checks what the user allows;
how the search uses them is `pipeline.py`'s docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import KerasmeshError
from ..core import kinds, text
from ..plan.accumulation import check_accumulation_steps
from ..remat.blocks import find_blocks
from ..cost.recompute import Levers
from ..remat.choice import CHOICES, NONE, check_remat



@dataclass(frozen=True)
class LeverSpace:
    """The levers a search may use.

    Attributes:
        remats: remat choices, fewest recomputed first.
        steps: allowed accumulation steps, or None for every divisor of
            the batch.
        batch_size: the global batch.
        blocks: the model's blocks at full depth (what a blend spans), or
            None when it has none.
    """

    remats: tuple[str, ...]
    steps: tuple[int, ...] | None
    batch_size: int
    blocks: int | None = None

    def ks(self, data: int) -> list[int]:
        """Accumulation steps whose micro-batch `data` devices split."""
        b = self.batch_size
        out = [k for k in range(1, b + 1)
               if b % k == 0 and (b // k) % data == 0]
        return [k for k in out if self.steps is None or k in self.steps]

    def base(self, data: int) -> Levers | None:
        """The levers that cost least: the first remat, fewest steps."""
        ks = self.ks(data)
        return Levers(self.remats[0], ks[0]) if ks else None

    def pairs(self) -> list[tuple[str, str]]:
        """Neighbouring remat choices that blend over the blocks: (the one
        that recomputes more, the one that recomputes less)."""
        if not self.blocks:
            return []
        return [(b, a) for a, b in zip(self.remats, self.remats[1:])
                if CHOICES.index(b) == CHOICES.index(a) + 1]


def lever_space(model: Any, remat: Any, accumulation_steps: Any,
                batch_size: int, depth: int | None = None) -> LeverSpace:
    """The levers of a search, checked.

    Args:
        model: the built model (its blocks decide whether remat helps).
        remat: None (every choice the model's blocks allow: only "none"
            for a model without blocks), or one choice or a list.
        accumulation_steps: None (every divisor), a whole number or a list.
        batch_size: the global batch.
        depth: the full model's blocks, when `model` is a reduced one.

    Raises:
        KerasmeshError: kind `remat` for an unknown choice, `remat_blocks`
            for a choice other than "none" on a model without blocks,
            `accumulation_steps` for steps that don't divide the batch.
    """
    blocks = None
    if remat is None:
        try:
            blocks = len(find_blocks(model))
            remats = CHOICES
        except KerasmeshError as e:
            if e.kind != kinds.REMAT_BLOCKS:
                raise
            remats = (NONE,)
    else:
        asked = [remat] if isinstance(remat, str) else list(remat)
        asked = [check_remat(r) for r in asked]
        if any(r != NONE for r in asked):
            blocks = len(find_blocks(model))
        remats = tuple(r for r in CHOICES if r in asked)
    steps = None
    if accumulation_steps is not None:
        asked = accumulation_steps if isinstance(
            accumulation_steps, (list, tuple)) else [accumulation_steps]
        steps = tuple(sorted({check_accumulation_steps(k) for k in asked}))
        bad = [k for k in steps if batch_size % k]
        if bad:
            raise KerasmeshError(
                kinds.ACCUMULATION_STEPS,
                f"`accumulation_steps` ({bad[0]}) must divide `batch_size` "
                f"({batch_size}).",
                x=f"A batch of {text.plural(batch_size, 'sample')} can't "
                  f"make {bad[0]} equal micro-batches.")
    if blocks is not None and depth is not None:
        blocks = int(depth)
    return LeverSpace(remats, steps, int(batch_size), blocks)
