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

One rule keeps every block's output as data parallelism has it (Keras
re-lays a layer's output out by the rule its "<path>/output" matches:
`outputs.py`): the batch dimension on the batch axis, the others unsplit.
The search adds it to every layout it costs; the planner warns about a
layout map that splits weights so without it, and offers it as the fix.
Rules of the user's own for those outputs stand instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core import kinds
from ..core.errors import KerasmeshError
from ..core.kinds import WARNING
from ..core.layout_problems import problem
from ..core.resolve import RuleResolver, exact_key, rule_keys
from ..core.text import listing, plural, string
from ..remat.blocks import find_blocks
from .outputs import layer_outputs


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
    whose outputs are not one tensor of one rank, or `fixed` rules (a
    LayoutMap) that already lay them out."""
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


def _axis_names(axes: Sequence[Any]) -> set[str]:
    """The mesh axes a layout uses, an entry of several axes ("a+b") as
    each of them."""
    names: set[str] = set()
    for a in axes:
        if isinstance(a, (list, tuple)):
            names.update(str(x) for x in a)
        elif a is not None:
            names.add(str(a))
    return names


def block_output_problems(model: Any, paths: Sequence[str],
                          axes: Sequence[Sequence[Any]],
                          sizes: dict[str, int], batch_dim: str,
                          layout_map: Any) -> list[dict]:
    """A warning when variables (`paths`, each placed on `axes`) are split
    over `batch_dim` and over another axis of more than one device, and no
    rule of `layout_map` lays the blocks' outputs out. Its `facts` carry
    the rule that would, as a fix (`problems.py` checks it)."""
    split = [(p, _axis_names(a)) for p, a in zip(paths, axes)]
    on_batch = [p for p, names in split if batch_dim in names]
    others = sorted({n for _, names in split for n in names
                     if n != batch_dim and sizes.get(n, 1) > 1})
    if not on_batch or not others:
        return []
    rules = block_output_rules(model, sizes, batch_dim, layout_map)
    if not rules:
        return []
    [(key, rule_axes)] = rules
    other = listing(others)
    return [problem(
        kinds.BLOCK_OUTPUTS, WARNING, None, None,
        f'Weights are split over the batch axis "{batch_dim}" and over '
        f"{other}, and no rule lays the blocks' outputs out.",
        [("x", f"{plural(len(on_batch), 'variable')} (such as "
               f'"{on_batch[0]}") split over "{batch_dim}": XLA can split '
               "a block's activations over it on another dimension and "
               "all-reduce them in every block."),
         ("i", f'A rule for {string(key)} keeps each block\'s output split by '
               "the batch, as data parallelism has it.")],
        "blocks' outputs not split by the batch",
        {"fix": {"remove": [], "add": [[key, rule_axes]]}})]
