"""The walk's moves: layouts near a layout, and where to start.

A choice is one option index per class of a `SearchSpace`. A *tied* move
puts every dimension of one size, in every free class, onto one mesh axis
(or unsplits them): heads, MLP columns or the vocabulary at once, as a
person writing a tensor-parallel map would. A *class* move changes one
class.
"""

from __future__ import annotations

from typing import Any

from .space import SearchSpace


def _tied(space: SearchSpace, choice: tuple, size: int, axis: Any) -> tuple:
    """Every free class's dimensions of `size` onto `axis` (None: unsplit),
    the axis taken off the class's other dimensions; a class keeps its
    placement where the result is not one of its options."""
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


def tied_moves(space: SearchSpace, choice: tuple) -> list[tuple]:
    """Choices one tied move from `choice`, largest dimensions first."""
    sizes = sorted({s for i in space.free for s in space.classes[i].shape
                    if s > 1}, reverse=True)
    out = []
    for size in sizes:
        for axis in [None] + list(space.sizes):
            new = _tied(space, choice, size, axis)
            if new != choice and new not in out:
                out.append(new)
    return out


def class_moves(space: SearchSpace, choice: tuple) -> list[tuple]:
    """Choices that differ from `choice` in one class, largest first."""
    out = []
    for i in space.free:
        for k in range(len(space.classes[i].options)):
            if k != choice[i]:
                out.append(choice[:i] + (k,) + choice[i + 1:])
    return out


def tensor_parallel(space: SearchSpace, choice: tuple, axis: str) -> tuple:
    """A Megatron-like start: the dimension size most classes share (the
    residual width) stays whole; every other size goes on `axis`, larger
    sizes first, so that within a variable the smaller one (heads rather
    than the head width) wins."""
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


def split_bytes(space: SearchSpace, choice: tuple) -> float:
    """Bytes of weights that a choice takes off each device."""
    return sum(c.bytes - len(c.paths) * b
               for c, b in zip(space.classes, space.shard_bytes(choice)))


def ordered(space: SearchSpace, fits: bool, current: tuple,
             moves: list[tuple]) -> list[tuple]:
    """Moves to try first. While the current layout fits: those that
    split less, the smallest change first (they cost memory and usually
    save traffic); otherwise those that split more, the largest saving
    first. Among equals, tied moves before class moves."""
    now = split_bytes(space, current)

    def key(c: tuple) -> tuple:
        delta = split_bytes(space, c) - now
        if fits:
            return (delta >= 0, abs(delta))
        return (delta <= 0, -delta)

    return sorted(moves, key=key)


