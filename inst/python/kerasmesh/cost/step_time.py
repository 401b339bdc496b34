"""A compiled step's modeled seconds per global batch, in parts.

`step_time()` walks the compiled step with the topology's time model
(`schedule.walk()`, `topology/time.py`). A GPU compile has its own
schedule: its asynchronous collectives overlap the compute between their
start and their end. A CPU compile has none, so collectives that move
weights or their gradients (an all-gather of a weight split over
devices, the reduction of its gradient: `attribution.moves_weights()`)
are hidden behind the compute as a GPU's scheduler hides them
(`schedule.overlap_by_class()`), and the others stay exposed. With
`accumulation_steps`, the compiled step is one micro-batch, and every
part is paid once per micro-batch.
"""

from __future__ import annotations

from collections.abc import Sequence

from .hlo import Module
from .schedule import overlap_by_class, trace, walk
from ..topology.machine import Topology
from ..topology.time import ATTENTION, MATMUL, MEMORY, Rates, rates


def _weight_seconds(ops: Sequence[dict], weight_ops: Sequence[bool],
                    rate: Rates) -> dict[str, float]:
    """Seconds of the collectives that move weights or their gradients,
    by their mesh axes ("+"-joined)."""
    out: dict[str, float] = {}
    for op, moves in zip(ops, weight_ops):
        if moves:
            key = "+".join(op["axes"])
            out[key] = out.get(key, 0.0) + rate.collective(op)
    return out


def step_time(module: Module, ops: Sequence[dict], weight_ops: Sequence[bool],
              machine: Topology, nodes: Sequence[int], dtype: str,
              by_class: bool, recompute_share: float = 0.0,
              accumulation_steps: int = 1) -> dict:
    """Modeled seconds per global batch of one compiled step.

    Args:
        module: the compiled step, parsed.
        ops: its collectives (`collectives.parse_collectives()`).
        weight_ops: for each of `ops`, whether it moves weights or their
            gradients.
        machine: the topology; nodes: the node of each mesh position.
        dtype: the model's compute dtype, for its FLOP/s.
        by_class: whether collectives are overlapped by class (a CPU
            compile) rather than by the compiled schedule.
        recompute_share: the share of the step's operations spent
            recomputing (rematerialization).
        accumulation_steps: micro-batches per global batch.

    Returns:
        Plain values: `total`; `compute` (seconds of operations, less
        recomputation) and `recompute`; `parts` (compute by what bounds it:
        `matmul`, `attention`, `memory`); `communication` (`axes`,
        `exposed` and `hidden` seconds, one entry per set of mesh axes,
        joined with "+", most exposed first); `overlap` ("schedule" or
        "class"); `compute_dtype`, `flop_rate` (matrix products'),
        `accumulation_steps`.

    Raises:
        KerasmeshError: kind `topology` for a dtype without peak FLOP/s.
    """
    rate = rates(machine, dtype, nodes)
    result = walk(trace(module, ops), ops, rate)
    if by_class:
        result = overlap_by_class(result,
                                  _weight_seconds(ops, weight_ops, rate))
    k = int(accumulation_steps)
    compute = sum(result.compute.values())
    again = compute * float(recompute_share)
    axes = sorted(set(result.exposed) | set(result.hidden),
                  key=lambda a: (-result.exposed.get(a, 0.0), a))
    return {
        "total": k * result.total,
        "compute": k * (compute - again),
        "recompute": k * again,
        "parts": {kind: k * result.compute.get(kind, 0.0)
                  for kind in (MATMUL, ATTENTION, MEMORY)},
        "communication": {
            "axes": axes,
            "exposed": [k * result.exposed.get(a, 0.0) for a in axes],
            "hidden": [k * result.hidden.get(a, 0.0) for a in axes]},
        "overlap": "class" if by_class else "schedule",
        "compute_dtype": str(dtype),
        "flop_rate": rate.matmul,
        "accumulation_steps": k,
    }
