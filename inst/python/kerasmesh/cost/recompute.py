"""The step's memory levers besides the layout, and what recomputing costs.

`Levers` is a step's rematerialization choice and micro-batch count, the
one value a cost and a search both name a configuration's levers by;
`StepLevers` holds them for one cost, with what the cost measures.
`recompute_share()` measures the part of a step's
floating-point operations that rematerialization adds: the step with
remat and the same step without it are lowered (traced, not compiled),
and the operations of each unoptimized program are counted
(`operations.py`); the difference, over the count with remat, is the share. A
cost's `recompute_flops` is that share of the compiled step's own count
(per device, after XLA partitioned the step over the mesh), so it is what
the recomputation adds to one device's work where the blocks' work is
split over the devices as the rest of the step is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..plan.accumulation import check_accumulation_steps, micro_batch_size
from ..remat.choice import NONE, check_remat, remat_scope
from ..remat.choice import rank as remat_rank
from . import hlo
from .operations import step_flops
from .step import StepSpecs, lower_step


@dataclass(frozen=True)
class Levers:
    """What each block recomputes and how many micro-batches make a batch.

    Attributes:
        remat: a choice of `remat.choice.CHOICES`, or one per block.
        accumulation_steps: micro-batches per optimizer update.
    """

    remat: str | tuple = NONE
    accumulation_steps: int = 1

    @property
    def rank(self) -> tuple:
        """Fewer first: the remat's place in `CHOICES`
        (`choice.rank()`), then the micro-batches."""
        return (remat_rank(self.remat), self.accumulation_steps)


@dataclass
class StepLevers:
    """One cost's rematerialization and micro-batches.

    Attributes:
        remat: the choice asked for (None: the model's own), then the one
            in effect.
        accumulation_steps: micro-batches per optimizer update (1 when
            the optimizer is kept as compiled).
        batch_size: the global batch, samples per optimizer update.
        micro_batch_size: samples per compiled step.
        recompute_share: the share of the step's operations spent
            recomputing (`recompute_share()`).
        sets_optimizer: whether the optimizer's own accumulation is
            replaced by `accumulation_steps` (False when it was None: the
            optimizer as compiled, `batch_size` one step's batch).
        measure: whether `recompute_share` is measured (not for the
            search's quick compiles, which need only the total).
    """

    remat: str | None
    accumulation_steps: int
    batch_size: int
    micro_batch_size: int
    recompute_share: float = 0.0
    sets_optimizer: bool = True
    # Whether to measure `recompute_share` (one more lowering); a
    # search's quick compiles need only the total of operations.
    measure: bool = True

    @classmethod
    def of(cls, remat: Any, accumulation_steps: Any, batch_size: int,
           ways: int | None, batch_dim: str) -> StepLevers:
        """The levers of a step of `batch_size` samples, checked.

        Raises:
            KerasmeshError: kind `remat` or `accumulation_steps` (None:
                the optimizer's own setting)
                (`plan/accumulation.py`'s checks, for a batch axis
                `batch_dim` of `ways` devices).
        """
        steps = (1 if accumulation_steps is None else
                 check_accumulation_steps(accumulation_steps))
        return cls(check_remat(remat, allow_none=True), steps, batch_size,
                   micro_batch_size(batch_size, steps, ways, batch_dim),
                   sets_optimizer=accumulation_steps is not None)

    def report(self, flops: float) -> dict:
        """Plain values for the cost, given the compiled step's flops."""
        remat = self.remat or NONE
        return {"remat": remat if isinstance(remat, str) else list(remat),
                "accumulation_steps": self.accumulation_steps,
                "micro_batch_size": self.micro_batch_size,
                "recompute_flops": float(self.recompute_share * flops)}


def xla_flops(stage: Any, text: str | None = None) -> float:
    """The floating-point operations of a lowered (unoptimized) or compiled
    (per device) step, every loop trip counted, as `operations.py` counts
    them from the HLO. `text`: the stage's HLO text, when the caller has
    it."""
    if text is None:
        text = (stage.as_text(dialect="hlo") if hasattr(stage, "compile")
                else stage.as_text())
    return step_flops(hlo.parse(text))


def recompute_share(model: Any, distribution: Any, step: StepSpecs,
                    lowered: Any, remat: str) -> float:
    """The share of `lowered`'s operations that rematerialization adds
    (0 for "none"): one more lowering, of the step without remat."""
    if remat == NONE:
        return 0.0
    with remat_scope(model, NONE):
        plain = xla_flops(lower_step(model, distribution, step))
    total = xla_flops(lowered)
    return max(total - plain, 0.0) / total if total > 0 else 0.0
