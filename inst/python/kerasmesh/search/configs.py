"""The search over meshes, levers and layouts.

One `Search` per mesh (a topology's every shape, or the user's mesh),
all sharing one `Context`, in three rounds:

1. *Starts*: every mesh's structured layouts (`structured_starts()`:
   data parallel, the user's start, tensor parallel over the model axis,
   weights fully sharded over the data axis, and both), at the cheapest
   levers, those whose weights and optimizer alone break the budget not
   compiled.
2. *Levers*: for the best start of each of the `PROMISING` best meshes,
   the fewest remat and micro-batches that fit (`levers.choose()`), the
   modeled objective deciding among them; while time allows.
3. *Layout*: from the best so far, a walk over that mesh's layouts at its
   levers (`walk.walk()`), or every layout of a small space
   (`walk.exhaust()`).
"""

from __future__ import annotations

from typing import Any

from .candidates import Context, Search
from .levers import choose
from .moves import fully_sharded, tensor_parallel
from .walk import exhaust, walk

# Meshes whose levers are chosen in round 2.
PROMISING = 3
# A mesh after the first gets its levers only while this share of the
# walk's time is left.
LEVER_SHARE = 0.5


def structured_starts(search: Search, start_choice: tuple | None,
                      with_data_parallel: bool) -> list[tuple]:
    """The layouts a person would write first, on one mesh."""
    space, batch = search.space, search.ctx.step["batch_dim"]
    dp = tuple([0] * len(space.classes))
    model_axes = [a for a, n in space.sizes.items() if a != batch and n > 1]
    starts = [dp] if with_data_parallel or not model_axes else []
    if start_choice is not None:
        starts.append(start_choice)
    tp = tensor_parallel(space, dp, model_axes[-1]) if model_axes else None
    if tp is not None:
        starts.append(tp)
    if space.sizes.get(batch, 1) > 1:
        starts.append(fully_sharded(space, dp, batch))
        if tp is not None:
            starts.append(fully_sharded(space, tp, batch))
    out: list[tuple] = []
    for s in starts:
        if s not in out:
            out.append(s)
    return out


def promise(ctx: Context, s: Search, f: dict | None) -> tuple:
    """How promising a candidate at the cheapest levers is (lower is
    better): fitting ones by the objective; then those the levers could
    make fit (their memory without the activations, with accumulators,
    fits) by the objective; then the others by that memory."""
    if f is None:
        return (3, 0.0)
    if ctx.fits(f):
        return (0, ctx.value(f))
    static = f["memory"] - f["activations"] + f["gradients"] \
        if len(ctx.levers.ks(s.data)) > 1 or len(ctx.levers.remats) > 1 \
        else f["memory"]
    if ctx.budget is not None and static <= ctx.budget:
        return (1, ctx.value(f))
    return (2, static)


def _starts_round(searches: list[Search], starts: list[list[tuple]]
                  ) -> list[tuple]:
    """Round 1: each mesh's most promising start, as (promise, score,
    mesh index, choice), the most promising mesh first."""
    best = []
    for i, (s, choices) in enumerate(zip(searches, starts)):
        ctx = s.ctx
        base = ctx.levers.base(s.data)
        keyed = []
        for c in choices:
            if s.hopeless(c):
                continue
            f = s.evaluate(c, base)
            keyed.append((promise(ctx, s, f), ctx.score(f), i, c))
            if ctx.out_of_time:
                break
        if keyed:
            best.append(min(keyed, key=lambda b: b[:2]))
        if ctx.out_of_time:
            break
    return [(k[1], k[2], k[3]) for k in sorted(best, key=lambda b: b[:2])]


def _levers_round(ctx: Context, searches: list[Search],
                  ranked: list[tuple]) -> list[tuple]:
    """Round 2: (score, mesh index, choice, levers) that fit."""
    span = max(ctx.left(), 1e-9)
    out = []
    for n, (key, i, choice) in enumerate(ranked[:PROMISING]):
        s = searches[i]
        base = ctx.levers.base(s.data)
        if n and ctx.left() < LEVER_SHARE * span or ctx.out_of_time:
            break
        if key[0] == 0:
            out.append((key, i, choice, base))
            continue
        if n and promise(ctx, s, s.seen.get((choice, base)))[0] > 1:
            continue  # no lever can make it fit
        for levers in choose(lambda lv, s=s, c=choice: s.evaluate(c, lv),
                             ctx.fits,
                             ctx.levers, s.data, ctx.budget):
            out.append((ctx.score(s.seen[(choice, levers)]), i, choice,
                        levers))
    return sorted(out, key=lambda b: b[0])


def _best_seen(s: Search, levers: tuple) -> tuple | None:
    """(score, choice) of the best layout `s` costed at `levers`."""
    costed = [(s.ctx.score(f), c) for (c, lv), f in s.seen.items()
              if lv == levers and f is not None]
    return min(costed, key=lambda b: b[0]) if costed else None


def run(ctx: Context, searches: list[Search], starts: list[list[tuple]],
        exhaustive: int) -> None:
    """The three rounds, within the context's deadline. A small space of
    the best mesh is costed whole at the cheapest levers before any
    lever is used, so that levers serve only where no layout fits."""
    ranked = _starts_round(searches, starts)
    if not ranked:
        return
    key, i, _ = ranked[0]
    top = searches[i]
    if top.space.size() <= exhaustive and key[0] != 0:
        exhaust(top, ctx.levers.base(top.data))
        key, choice = _best_seen(top, ctx.levers.base(top.data))
        ranked = [(key, i, choice)] + ranked[1:]
    chosen = _levers_round(ctx, searches, ranked)
    if chosen:
        _, i, choice, levers = chosen[0]
    else:
        _, i, choice = ranked[0]
        levers = ctx.levers.base(searches[i].data)
    s = searches[i]
    if ctx.out_of_time:
        return
    if s.space.size() <= exhaustive:
        exhaust(s, levers)
    else:
        walk(s, [choice], levers)


def every_candidate(searches: list[Search]) -> list[tuple[int, tuple,
                                                          tuple, Any]]:
    """(mesh index, choice, levers, figures) of every candidate costed."""
    return [(i, c, lv, f) for i, s in enumerate(searches)
            for (c, lv), f in s.seen.items() if f is not None]
