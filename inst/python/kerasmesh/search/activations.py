"""The layout of each block's output: split over the batch axis.

Keras lays the batch out over the batch axis and each weight as its rule
says; XLA's sharding propagation decides the activations in between. When
weights are split over the batch axis too (fully sharded, with tensor
parallelism over the other axis), XLA can split a block's activations
over the batch axis on another dimension, and all-reduce them over it in
every block: a Llama-3-70B-sized backbone on 4 x 8 devices, its weights
split over both axes, moved 387 GB of activations per device per step
over the batch axis so, and 5 MB with each block's output kept split over
the batch.

So the search lays every block's output out as data parallelism has it,
by one rule (Keras re-lays a layer's output out by the rule its
"<path>/output" matches: `plan.outputs`): the batch dimension on the
batch axis, the others unsplit. Rules of the user's own (`fixed`) for
those outputs stand instead.
"""

from __future__ import annotations

from typing import Any

from ..core.errors import KerasmeshError
from ..core import kinds
from ..core.resolve import RuleResolver, exact_key, rule_keys
from ..plan.outputs import layer_outputs
from ..remat.blocks import find_blocks


def _rank(layer: Any) -> int | None:
    """The rank of a layer's one output in its model, or None (called
    more than once, or several outputs)."""
    try:
        shape = layer.output.shape
    except (AttributeError, ValueError, RuntimeError):
        return None
    return len(shape) if isinstance(shape, tuple) else None


def block_output_rules(model: Any, sizes: dict[str, int], batch_dim: str,
                       fixed: Any = None) -> list[tuple[str, list]]:
    """The rule that keeps each block's output split over `batch_dim` as
    `(key, axes)`, or none: no blocks, a batch axis of one device, blocks
    whose outputs are not one tensor of one rank, or `fixed` rules that
    already lay them out."""
    if sizes.get(batch_dim, 1) <= 1:
        return []
    try:
        blocks = find_blocks(model)
    except KerasmeshError as e:
        if e.kind != kinds.REMAT_BLOCKS:
            raise
        return []
    ranks = {_rank(b) for b in blocks}
    outputs = layer_outputs(model)
    by_layer = {id(layer): path for layer, path in outputs}
    paths = [by_layer.get(id(b)) for b in blocks]
    if None in paths or len(ranks) != 1 or None in ranks or ranks == {0}:
        return []
    if fixed is not None and rule_keys(fixed):
        pinned = RuleResolver(rule_keys(fixed))
        if any(pinned.resolve(p)[0] is not None for p in paths):
            return []
    every = [path for _, path in outputs]
    return [(exact_key(paths, every), [batch_dim] + [None] * (ranks.pop() - 1))]
