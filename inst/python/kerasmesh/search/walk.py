"""The walk over one mesh's layouts, at fixed levers.

`walk()` hill-climbs from the best of its starts: each step takes the
first move that improves (in the order `moves.ordered()` gives) among
tied moves and moves of one class, until none does or the time is up;
candidates whose weights and optimizer state alone break the budget are
not compiled. `exhaust()` costs every layout of a small space instead.
"""

from __future__ import annotations

import itertools

from .candidates import Search
from .moves import class_moves, ordered, tied_moves


def walk(search: Search, starts: list[tuple], levers: tuple) -> None:
    """Hill-climb from the best start: the first improving tied move, else
    the first improving class move, until none improves or time is up."""
    ctx = search.ctx
    current, key = search.best_of(starts, levers)
    if current is None:
        return
    while not ctx.out_of_time:
        best = None
        moves = ordered(search.space, key[0] == 0, current,
                        tied_moves(search.space, current) +
                        class_moves(search.space, current))
        for c in moves:
            if search.hopeless(c):
                continue
            k = ctx.score(search.evaluate(c, levers))
            if k < key:
                best, key = c, k
                break
        if best is None:
            return
        current = best


def exhaust(search: Search, levers: tuple) -> None:
    """Cost every layout of the space (but those that can't fit)."""
    space = search.space
    search.method = "exhaustive"
    options = [range(len(c.options)) if c.fixed is None else [0]
               for c in space.classes]
    for choice in itertools.product(*options):
        if not search.hopeless(tuple(choice)):
            search.evaluate(tuple(choice), levers)
        if search.ctx.out_of_time:
            return
