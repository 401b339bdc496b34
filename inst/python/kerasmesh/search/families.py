"""The layouts a search profiles on one mesh, and their floors.

`layouts()` gives a mesh's layouts as (label, choice), in a fixed order:
every layout of a small space (`tuning.EXHAUSTIVE`), or the structured
ones (`pipeline.py`, step 1): data parallel, fully sharded over the
batch axis, tensor parallel over the model axis (`tensor_parallel()`:
the width most classes share stays whole, every other size goes on the
axis, larger sizes first, so that within a variable heads win over the
head width), both, and the user's start. `floor()` is what a layout's
weights and optimizer state alone need per device at full depth.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from .space import SearchSpace, variable_classes
from .tuning import EXHAUSTIVE, SLOT_SHARE

DATA_PARALLEL = "data parallel"
FULLY_SHARDED = "fully sharded"
TENSOR_PARALLEL = "tensor parallel"
BOTH = "tensor parallel, fully sharded"
START = "start"


def _tied(space: SearchSpace, choice: tuple, size: int, axis: str) -> tuple:
    """Every free class's dimensions of `size` onto `axis`, the axis taken
    off the class's other dimensions; a class keeps its placement where
    the result is not one of its options."""
    new = list(choice)
    for i in space.free:
        c = space.classes[i]
        dims = [d for d, s in enumerate(c.shape) if s == size]
        if not dims:
            continue
        axes = [None if a == axis else a for a in c.options[choice[i]]]
        # A square kernel: only its last dimension of the size (columns).
        axes[dims[-1]] = axis
        if tuple(axes) in c.options:
            new[i] = c.options.index(tuple(axes))
    return tuple(new)


def tensor_parallel(space: SearchSpace, choice: tuple, axis: str) -> tuple:
    """Megatron's layout over `axis` (see the module's docstring)."""
    counts: dict[int, int] = {}
    for i in space.free:
        for s in set(space.classes[i].shape):
            counts[s] = counts.get(s, 0) + 1
    if not counts:
        return choice
    width = max(counts, key=lambda s: (counts[s], s))
    for size in sorted((s for s in counts if s not in (1, width)),
                       reverse=True):
        choice = _tied(space, choice, size, axis)
    return choice


def fully_sharded(space: SearchSpace, choice: tuple, axis: str) -> tuple:
    """Weights and optimizer state sharded over `axis` (as FSDP and ZeRO-3
    shard them over the data axis): each free class not yet on `axis`
    gets its largest unsplit dimension that `axis` divides onto it."""
    new = list(choice)
    for i in space.free:
        c = space.classes[i]
        axes = list(c.options[choice[i]])
        if axis in axes:
            continue
        for d in sorted(range(len(c.shape)), key=lambda d: -c.shape[d]):
            if axes[d] is not None:
                continue
            trial = tuple(axes[:d] + [axis] + axes[d + 1:])
            if trial in c.options:
                new[i] = c.options.index(trial)
                break
    return tuple(new)


def layouts(space: SearchSpace, batch_dim: str,
            start: tuple | None = None) -> list[tuple[str, tuple]]:
    """The layouts profiled on one mesh, as (label, choice), each once."""
    dp = tuple([0] * len(space.classes))
    out = _every_layout(space, dp) if space.size() <= EXHAUSTIVE else \
        _families(space, batch_dim, dp)
    if start is not None:
        out.append((START, start))
    seen: set = set()
    return [(label, c) for label, c in out if not (c in seen or seen.add(c))]


def _every_layout(space: SearchSpace, dp: tuple) -> list[tuple[str, tuple]]:
    """Every layout of a small space: data parallel, then "layout 2" on."""
    free = space.free
    out = []
    for n, picks in enumerate(itertools.product(
            *[range(len(space.classes[i].options)) for i in free])):
        choice = list(dp)
        for i, k in zip(free, picks):
            choice[i] = k
        out.append((DATA_PARALLEL if n == 0 else f"layout {n + 1}",
                    tuple(choice)))
    return out


def _families(space: SearchSpace, batch_dim: str, dp: tuple
              ) -> list[tuple[str, tuple]]:
    """The layouts people train with (the module's docstring)."""
    model_axes = [a for a, n in space.sizes.items()
                  if a != batch_dim and n > 1]
    tp = tensor_parallel(space, dp, model_axes[-1]) if model_axes else None
    batch_split = space.sizes.get(batch_dim, 1) > 1
    out = [(DATA_PARALLEL, dp)]
    if batch_split:
        out.append((FULLY_SHARDED, fully_sharded(space, dp, batch_dim)))
    if tp is not None:
        out.append((TENSOR_PARALLEL, tp))
        if batch_split:
            out.append((BOTH, fully_sharded(space, tp, batch_dim)))
    return out


class Floor:
    """Weights and (most of) the optimizer state per device under a
    choice at full depth: a floor under XLA's total.

    Args:
        space: the mesh's space (of the deepest model searched).
        first: the shallowest model searched (its class counts with the
            space's give each class's count at `depth`), or None.
        depth: the full model's blocks, or None (the model searched).
        slot_ratio: the optimizer's bytes per weight byte.
    """

    def __init__(self, space: SearchSpace, first: object | None,
                 depth: int | None, slot_ratio: float):
        self.space, self.depth = space, depth
        self.factor = 1 + SLOT_SHARE * slot_ratio
        self.counts = _class_counts(space, first)

    def __call__(self, choice: tuple) -> float:
        total = 0.0
        for b, (n1, n2) in zip(self.space.shard_bytes(choice), self.counts):
            n = n2 if self.depth is None else n1 + (self.depth - 1) * (
                n2 - n1)
            total += b * n
        return total * self.factor


def _class_counts(space: SearchSpace, first: object | None
                  ) -> Sequence[tuple[int, int]]:
    """Each class's variable count in the shallowest and the deepest model
    searched: a class of one block's variables grows by one a block."""
    if first is None:
        return [(len(c.paths), len(c.paths)) for c in space.classes]
    counts = {(c.template, tuple(c.shape), c.dtype): len(c.paths)
              for c in variable_classes(first, space.sizes, options=False)}
    return [(counts.get((c.template, tuple(c.shape), c.dtype), 0),
             len(c.paths)) for c in space.classes]
