"""Full-depth compiles decide: the found configuration fits by XLA.

A candidate fits `memory` only when XLA's figure for the full model says
so (`Verifier`): the search's own figures, extrapolated from reduced
models, rank candidates but never decide a fit. A candidate is
`(mesh index, choice, levers)`; it is compiled on its mesh in the device
order with the least modeled time, with its levers, on the topology, as
`layout_cost()` would cost it.
"""

from __future__ import annotations

import time
from typing import Any

from ..core.errors import KerasmeshError
from ..cost import layout_cost as cost
from ..cost.compare import build_model
from ..core import kinds
from .builds import check_depths
from .configs import every_candidate
from .figures import best_order, figures
from ..remat.choice import label
from .refit import refit_verified
from .meshes import ORDERS, rebind_to

RUNNERS_UP = 2
# Candidates compiled at full depth before giving up on the budget.
MAX_VERIFIED = 6


def distribution_of(searches: list, key: tuple, order: str | None) -> Any:
    """The ModelParallel of candidate `key` on its mesh in `order`."""
    from keras.distribution import ModelParallel

    i, choice, _ = key
    s = searches[i]
    lm = s.space.layout_map(choice)
    if order in ORDERS and order != ORDERS[0]:
        lm = rebind_to(lm, s.option.keras_mesh(order))
    return ModelParallel(layout_map=lm,
                         batch_dim_name=s.ctx.step["batch_dim"])


class Verifier:
    """Full-depth costs of candidates: one compile each of the full model
    (built at `full` blocks, or the search's own model), within
    `deadline`. Compiled quick (`deadline.QUICK`: the same memory and
    collectives as XLA's default options, in about half the time and
    less of this process's memory), with the recomputed operations
    measured."""

    def __init__(self, searches: list, model: Any, full: int | None,
                 deadline: float, timeout: float | None = None):
        self.searches, self.model, self.full = searches, model, full
        self.ctx = searches[0].ctx
        self.deadline, self.timeout = deadline, timeout
        self.built = next(iter(self.ctx.models.values())) if full is None \
            else None
        self.costs: dict[tuple, dict | None] = {}
        self.orders: dict[tuple, str | None] = {}
        self.longest = 0.0

    def figures(self, key: tuple) -> dict | None:
        r = self(key)
        if r is None:
            return None
        nodes = self.searches[key[0]].option.nodes
        order = self.orders[key]
        return figures(r, self.ctx.topology,
                       {order: nodes[order]} if order in nodes else None)

    def __call__(self, key: tuple) -> dict | None:
        if key not in self.costs:
            began = time.monotonic()
            self.costs[key] = self._compile(key)
            self.longest = max(self.longest, time.monotonic() - began)
        return self.costs[key]

    def has_time(self) -> bool:
        """Whether another compile like the longest so far fits in time."""
        return self.deadline - time.monotonic() > 1.25 * self.longest

    def _compile(self, key: tuple) -> dict | None:
        ctx = self.ctx
        if self.built is None:
            self.built = build_model(lambda: self.model(self.full),
                                     self.deadline - time.monotonic())
            check_depths({**ctx.models, self.full: self.built})
        i, choice, levers = key
        seen = self.searches[i].seen
        like = seen.get((choice, levers)) or next(
            (f for (c, _), f in seen.items() if c == choice and f), {})
        order = best_order(like)
        self.orders[key] = order
        step = ctx.step
        try:
            return cost.layout_cost(
                self.built, distribution_of(self.searches, key, order),
                step["batch_size"], step["optimizer"], step["loss"],
                step["input_shapes"],
                max(self.deadline - time.monotonic(), 0.01),
                quick=True, remat=levers[0], accumulation_steps=levers[1],
                topology=ctx.topology, measure=True)
        except KerasmeshError as e:
            if e.kind != kinds.COMPILE:
                raise
            return None


def _ranked(searches: list) -> list[tuple]:
    ctx = searches[0].ctx
    return [(i, c, lv) for i, c, lv, f in
            sorted(every_candidate(searches), key=lambda e: ctx.score(e[3]))]


def pick(searches: list, verify: Verifier) -> tuple[tuple, list[tuple]]:
    """The best candidate that fits by its full-depth cost, and up to
    `RUNNERS_UP` more verified ones, as time allows.

    A candidate the search costed at full depth and found over budget is
    not compiled again; extrapolated ones are, up to `MAX_VERIFIED`,
    those likely to miss the budget as one of their mesh and levers did
    last (`_in_turn()`). When
    the best candidate is a "save_matmuls" or blended one, the blend that
    just fits by XLA's figures is verified before going on
    (`refit_verified()`); when it misses, the same layout recomputing
    more (`more_remat()`).

    Raises:
        KerasmeshError: kind `search_no_fit` when none of the candidates
            compiled at full depth fits.
    """
    ctx = verify.ctx
    chosen: list[tuple] = []
    missed: dict[tuple, float] = {}
    for key in _in_turn(searches, missed, ctx.budget):
        i, c, lv = key
        if len(chosen) > RUNNERS_UP or len(verify.costs) >= MAX_VERIFIED or \
                (chosen and not verify.has_time()):
            break
        if ctx.depth is None and not ctx.fits(searches[i].seen[(c, lv)]):
            break
        try:
            verify(key)
            _note_miss(missed, searches, verify, key)
            if not chosen:
                key = refit_verified(verify, key)
                if not ctx.fits(verify.figures(key)):
                    key = more_remat(verify, key)
        except KerasmeshError as e:
            # Out of time for a runner-up: the winner stands; for the
            # winner: XLA's figures once it compiled it (a refit or more
            # remat ran out), else the best by the search's own figures.
            if e.kind != kinds.TIMEOUT:
                raise
            if not chosen:
                if key not in verify.costs:
                    return _unverified(searches, verify, key), []
                if ctx.fits(verify.figures(key)):
                    chosen.append(key)
            break
        if ctx.fits(verify.figures(key)):
            chosen.append(key)
    if not chosen:
        nothing_fits(searches, verify)
    chosen.sort(key=lambda k: ctx.score(verify.figures(k)))
    return chosen[0], chosen[1:]


def _note_miss(missed: dict, searches: list, verify: Verifier,
               key: tuple) -> None:
    """When XLA finds `key` over budget at full depth: how far the
    search's figure for its mesh and levers fell short (XLA's memory /
    the search's)."""
    i, c, lv = key
    f, own = verify.figures(key), searches[i].seen.get((c, lv))
    if f is not None and own and own["memory"] > 0 and \
            not verify.ctx.fits(f):
        missed[(i, lv)] = max(missed.get((i, lv), 0.0),
                              f["memory"] / own["memory"])


def _in_turn(searches: list, missed: dict, budget: float | None):
    """The candidates by the search's figures (`_ranked()`), but for those
    that would miss the budget as a verified one of their mesh and levers
    did, by what `missed` says when their turn comes: they come last."""
    later = []
    for key in _ranked(searches):
        if _missed_too(missed, searches, key, budget):
            later.append(key)
        else:
            yield key
    yield from later


def _missed_too(missed: dict, searches: list, key: tuple,
                budget: float | None) -> bool:
    """Whether `key` would miss the budget as a verified candidate of its
    mesh and levers did: its own figure, scaled by that miss, is over."""
    i, c, lv = key
    own = searches[i].seen.get((c, lv))
    scale = missed.get((i, lv))
    return budget is not None and scale is not None and own is not None \
        and own["memory"] * scale > budget


def more_remat(verify: Verifier, key: tuple) -> tuple:
    """`key`, which XLA finds over budget at full depth, with the levers'
    next remat choices in turn (its layout and micro-batches kept): the
    first that fits by XLA's figures ("save_matmuls" refitted as
    `refit_verified()` does), while time allows; else `key`."""
    ctx = verify.ctx
    i, c, (remat, k) = key
    remats = ctx.levers.remats
    if not isinstance(remat, str) or remat not in remats:
        return key
    for later in remats[remats.index(remat) + 1:]:
        if not verify.has_time() or len(verify.costs) >= MAX_VERIFIED:
            break
        tried = refit_verified(verify, (i, c, (later, k)))
        if ctx.fits(verify.figures(tried)):
            return tried
    return key


def _unverified(searches: list, verify: Verifier, key: tuple) -> tuple:
    """`key`, the best candidate, when the time ran out before its
    full-depth compile, if the search's own figures say it fits.

    Raises:
        KerasmeshError: kind `timeout`, naming the search's `timeout`,
            when they don't.
    """
    i, c, lv = key
    if verify.ctx.fits(searches[i].seen[(c, lv)]):
        return key
    spent = f"{verify.timeout:g} s" if verify.timeout else "its time"
    raise KerasmeshError(
        kinds.TIMEOUT, f"The search found no layout that fits `memory` in "
        f"{spent}.",
        x="The time ran out before XLA compiled the best candidates for "
          "the full model.",
        i="Raise `timeout`, or search with `blocks` or a smaller space "
          "(pin rules with `fixed`).")


def describe(searches: list, key: tuple) -> str:
    """A candidate in words: mesh, levers and rules."""
    i, c, lv = key
    s = searches[i]
    rules = "; ".join(f'"{k}" = ({", ".join(str(a) for a in axes)})'
                      for k, axes in s.space.rules(c)) or \
        "none (data parallel)"
    mesh = " x ".join(f"{a} = {n}" for a, n in s.space.sizes.items())
    return (f"mesh {mesh}, remat \"{label(lv[0])}\", {lv[1]} micro-batch"
            f"{'es' if lv[1] != 1 else ''}, rules {rules}")


def nothing_fits(searches: list, verify: Verifier) -> None:
    """Raise the error that names the smallest memory reached.

    Raises:
        KerasmeshError: kind `search_no_fit`; kind `compile` when XLA
            compiled nothing.
    """
    ctx = verify.ctx
    costed = [(k, verify.figures(k)) for k, r in verify.costs.items()
              if r is not None]
    if ctx.depth is None:
        costed += [((i, c, lv), f) for i, c, lv, f in
                   every_candidate(searches)]
    where = "XLA reported"
    if not costed:
        floors = [((i, c, ctx.levers.base(s.data)), {"memory": s.floor(c)})
                  for i, s in enumerate(searches) for c in s.pruned]
        if not floors:
            raise KerasmeshError(
                kinds.COMPILE, "XLA compiled none of the best candidates "
                "for the full model.", i="Call `layout_cost()` on the start "
                "layout to see XLA's error.")
        costed = floors
        where = ("that the weights and optimizer state alone need (nothing "
                 "was compiled)")
    key, f = min(costed, key=lambda kf: kf[1]["memory"])
    raise KerasmeshError(
        kinds.SEARCH_NO_FIT, "No configuration the search costed fits "
        "`memory`.",
        x=f"The budget is {ctx.budget:.6g} bytes per device; the smallest "
          f"memory {where} is {f['memory']:.6g} bytes, with "
          f"{describe(searches, key)}.",
        i="Raise `memory`, use more devices, a smaller batch, an optimizer "
          "with fewer slots, or allow more `remat` and "
          "`accumulation_steps`.")
