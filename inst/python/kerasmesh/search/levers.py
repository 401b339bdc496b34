"""The levers searched with the layout: remat and micro-batches.

A candidate's levers are `(remat, accumulation_steps)`: what each block
recomputes in the backward pass (`remat.choice.CHOICES`), and how many
micro-batches make the global batch, each split evenly over the data
axis. Both only cost time (recomputed operations; collectives paid once
per micro-batch), so the search takes the fewest that fit
(`choose()`): for each remat choice in order, the fewest micro-batches
that fit, where a later (more recomputing) choice is tried only with
fewer micro-batches than an earlier one needed; the modeled objective
then decides among those that fit. At each micro-batch count from the
fewest at which "full" fits to those "save_matmuls" needs, a blend of the
two over the blocks (`blend_levers()`) is one more: fewer collectives
than "save_matmuls", less recomputed than "full". (Where XLA finds room at
full depth, verification tries the blend of "save_matmuls" and "none":
`refit_parts()`.)

How many micro-batches to try is predicted from a compile at fewer: the
activations and the batch (XLA's temporaries and inputs) shrink with the
micro-batch, and accumulating adds one accumulator per trainable weight
(`predict_memory()`). The prediction picks what to compile; only
compiles decide.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.errors import KerasmeshError
from ..core import kinds
from ..plan.accumulation import check_accumulation_steps
from ..remat.blocks import find_blocks
from ..remat.choice import (CHOICES, FULL, NONE, SAVE_MATMULS, blend,
                            blend_parts, check_remat)
from ..remat.choice import rank as remat_rank

Levers = tuple  # (remat, accumulation_steps)
# Micro-batch counts compiled after a prediction, per remat choice.
TRIES = 2
# The share of the budget a prediction aims at (a compile decides).
MARGIN = 1.0
# A blend aims this far below the budget: memory is not quite linear in
# the blocks recomputed (the full-depth compile decides).
BLEND_SLACK = 0.02


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
        return (self.remats[0], ks[0]) if ks else None

    @staticmethod
    def rank(levers: Levers) -> tuple:
        """Fewer first: the remat's place in `CHOICES` (`choice.rank()`),
        then the steps."""
        return (remat_rank(levers[0]), levers[1])


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
                x=f"{batch_size} samples don't make {bad[0]} equal "
                  "micro-batches.")
    if blocks is not None and depth is not None:
        blocks = int(depth)
    return LeverSpace(remats, steps, int(batch_size), blocks)


def predict_memory(f: dict, k: int) -> float:
    """Memory per device at `k` micro-batches, from figures `f` at
    `f["steps"]`: activations scale with the micro-batch; accumulators
    (one per trainable weight) come with the first k above 1."""
    k0 = f["steps"]
    extra = f["gradients"] if k > 1 and k0 == 1 else 0.0
    return f["memory"] - f["activations"] * (1 - k0 / k) + extra


def choose(evaluate: Callable[[Levers], dict | None],
           fits: Callable[[dict | None], bool], space: LeverSpace,
           data: int, budget: float | None) -> list[Levers]:
    """The levers worth having for one layout: per remat choice, the
    fewest micro-batches that fit (compiled through `evaluate`).

    Returns:
        The levers that fit, in the order found (none: nothing did).
    """
    ks = space.ks(data)
    found: list[Levers] = []
    limit = len(ks)  # only fewer steps than an earlier choice needed
    for remat in space.remats:
        if limit == 0:
            break
        f = evaluate((remat, ks[0]))
        if f is None:
            continue
        if fits(f):
            found.append((remat, ks[0]))
            break
        if budget is None:
            continue
        tried = 0
        for i, k in enumerate(ks[1:limit], start=1):
            if predict_memory(f, k) > MARGIN * budget and i < limit - 1:
                continue
            g = evaluate((remat, k))
            tried += 1
            if g is not None and fits(g):
                found.append((remat, k))
                limit = i
                break
            if g is not None:
                f = g
            if tried >= TRIES:
                break
    for k in blend_steps(found, ks):
        blended = blend_levers(evaluate, fits, space, k, budget)
        if blended is not None:
            found.append(blended)
    return found


def blend_steps(found: list[Levers], ks: list[int]) -> list[int]:
    """The micro-batch counts a blend is tried at: from the fewest at which
    "full" fits up to (not including) those "save_matmuls" needs, since a
    blend keeps fewer activations than "save_matmuls" at the same count
    and recomputes less than "full"."""
    fewest: dict = {}
    for remat, k in found:
        fewest.setdefault(remat, k)
    if FULL not in fewest:
        return []
    upto = fewest.get(SAVE_MATMULS, math.inf)
    return [k for k in ks if fewest[FULL] <= k < upto]


def blend_levers(evaluate: Callable[[Levers], dict | None],
                 fits: Callable[[dict | None], bool], space: LeverSpace,
                 k: int, budget: float | None) -> Levers | None:
    """"full" on the fewest first blocks that make "save_matmuls" fit at
    `k` micro-batches (memory taken as linear in those blocks), when
    "full" fits there and "save_matmuls" does not; None otherwise."""
    if budget is None or not space.blocks or SAVE_MATMULS not in \
            space.remats:
        return None
    saved, full = evaluate((SAVE_MATMULS, k)), evaluate((FULL, k))
    if saved is None or full is None or fits(saved) or not fits(full):
        return None
    n = refit({0: saved["memory"], space.blocks: full["memory"]}, budget,
              space.blocks)
    if n is None:
        return None
    levers = (blend(n, space.blocks), k)
    return levers if fits(evaluate(levers)) else None


def refit_parts(remat: Any, fits: bool,
                blocks: int) -> tuple[str, str, int] | None:
    """The blend a full-depth refit of `remat` moves along, as `(more,
    less, n)` (`choice.blend(n, blocks, more, less)` is `remat`): for
    "save_matmuls" that does not fit, "full" on none of the first
    blocks; for "save_matmuls" that `fits`, "save_matmuls" on every block
    and "none" on none (room to recompute less); a blend of "full" and
    "save_matmuls", or of "save_matmuls" and "none", itself. None for
    any other remat."""
    if remat == SAVE_MATMULS:
        return (SAVE_MATMULS, NONE, blocks) if fits else \
            (FULL, SAVE_MATMULS, 0)
    return None if isinstance(remat, str) else blend_parts(remat)


def refit(points: dict[int, float], budget: float,
          blocks: int) -> int | None:
    """How many first blocks of `blocks` to make the choice that
    recomputes more (the others the one that recomputes less) for memory
    just under `budget` (`BLEND_SLACK` below it), from the memory known at
    some counts (`points`, {count: memory}; at `blocks`, the first choice
    on every block): on the line between the
    nearest counts over and under that aim, or along the two fewest under
    it when none is over (memory falls fastest on the first blocks, and
    recomputing on every block keeps a floor). None when no count lies
    between 0 and `blocks`, or the count is one already known."""
    aim = (1 - BLEND_SLACK) * budget
    under = sorted(n for n, m in points.items() if m <= aim)
    if not under:
        return None
    b = under[0]
    over = [n for n, m in points.items() if m > aim and n < b]
    if over:
        a = max(over)
        slope = (points[a] - points[b]) / (b - a)
        n = a + math.ceil((points[a] - aim) / slope) if slope > 0 else b
    elif len(under) > 1:
        c = under[1]
        slope = (points[b] - points[c]) / (c - b)
        n = b - math.floor((aim - points[b]) / slope) if slope > 0 else b
    else:
        return None
    n = max(min(n, b), 1 if b > 0 else 0)
    return None if n in points or n >= blocks else n
