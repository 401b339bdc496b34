"""A winner's remat refitted to XLA's memory at full depth.

The search costs a blend of two remat choices between its choices'
figures (`figures.between()`), and extrapolates from reduced depth; only
the full-depth compile says what a blend needs. `refit_verified()`
moves the winner along its blend (`levers.refit_parts()`): more blocks
on the choice that recomputes more when XLA finds it over budget, fewer
when XLA leaves room, each step compiled.
"""

from __future__ import annotations

from typing import Any

from ..remat.choice import blend
from .levers import predict_memory, refit, refit_parts


def refit_verified(verify: Any, key: tuple) -> tuple:
    """The winner `key` refitted at full depth when it is a "save_matmuls"
    or blended candidate, along the blend `levers.refit_parts()` names:
    the choice that recomputes more on more first blocks when XLA finds
    it over budget, on fewer when XLA leaves room for them (for
    "save_matmuls" that fits: "none" on its last blocks), as XLA's
    figures for the counts compiled so far say (`levers.refit()`; each
    choice on every block as `_every_block()` has it), twice at most,
    while time allows. Returns the fitting key with the fewest such
    blocks, or `key`."""
    ctx = verify.ctx
    i, c, (remat, k) = key
    blocks = ctx.levers.blocks
    if ctx.budget is None or not blocks or not verify.has_time():
        return key
    f = verify.figures(key)
    fits = f is not None and ctx.fits(f)
    parts = None if f is None else refit_parts(remat, fits, blocks)
    if parts is None or not set(parts[:2]) <= set(ctx.levers.remats):
        return key
    more, less, n = parts
    if n == 0 and fits:
        return key
    points = _blend_ends(verify, (i, c, k), parts)
    if points is None:
        return key
    points[n] = f["memory"]
    best = n if fits else None
    for _ in range(2):
        m = refit(points, ctx.budget, blocks)
        if m is None or not verify.has_time() or \
                best is not None and m >= best:
            break
        f = verify.figures((i, c, (blend(m, blocks, more, less), k)))
        if f is None:
            break
        points[m] = f["memory"]
        if ctx.fits(f):
            best = m
    return key if best is None or best == n else \
        (i, c, (blend(best, blocks, more, less), k))


def _blend_ends(verify: Any, where: tuple,
                parts: tuple) -> dict[int, float] | None:
    """The memory at the far end of a refit's blend, {count: memory}:
    `more` on every block (which must fit) when the blend has fewer;
    else `less` on every block, which must not fit (the search would
    have had it), as `_lighter_end()` puts it. None when neither holds."""
    i, c, k = where
    more, less, n = parts
    blocks = verify.ctx.levers.blocks
    if n < blocks:
        f = _every_block(verify, (i, c, (more, k)))
        ok = f is not None and verify.ctx.fits(f)
        return {blocks: f["memory"]} if ok else None
    memory = _lighter_end(verify, (i, c, (less, k)), (i, c, (more, k)))
    ok = memory is not None and memory > verify.ctx.budget
    return {0: memory} if ok else None


def _lighter_end(verify: Any, lighter: tuple,
                 heavier: tuple) -> float | None:
    """Memory with the lighter remat on every block (`lighter`) at full
    depth, to aim a refit from the heavier one's (`heavier`, compiled):
    XLA's when compiled, else XLA's for `heavier` plus the difference the
    search's own figures see between the two (the lighter one's
    predicted from another micro-batch count where needed), else
    compiled now."""
    if lighter in verify.costs:
        return _memory(verify.figures(lighter))
    i, c, (less, k) = lighter
    seen = verify.searches[i].seen
    light = seen.get((c, (less, k))) or next(
        (f for (cc, (r, _)), f in seen.items() if cc == c and r == less and f),
        None)
    heavy = seen.get((c, heavier[2]))
    if light is not None and heavy is not None:
        return verify.figures(heavier)["memory"] + \
            predict_memory(light, k) - heavy["memory"]
    return _memory(verify.figures(lighter))


def _memory(f: dict | None) -> float | None:
    return None if f is None else f["memory"]


def _every_block(verify: Any, key: tuple) -> dict | None:
    """The figures of one choice on every block (`key`): XLA's at full depth
    when compiled, else the search's own when it costed them (they only
    aim a refit, whose blend is compiled), else compiled now."""
    i, c, levers = key
    if key in verify.costs:
        return verify.figures(key)
    return verify.searches[i].seen.get((c, levers)) or verify.figures(key)
