"""The end of a search: full-depth compiles decide, plain values out.

A candidate fits `memory` only when XLA's figure for the full model says
so (`Verifier`): the search's own figures, extrapolated from reduced
models, rank candidates but never decide a fit.
"""

from __future__ import annotations

import time
from typing import Any

from ..core.errors import KerasmeshError, warn
from ..layout_map.rules import describe_layout_map
from ..cost import layout_cost as cost
from ..cost.compare import build_model
from .builds import check_depths
from ..core import kinds

RUNNERS_UP = 2
# Candidates compiled at full depth before giving up on the budget.
MAX_VERIFIED = 6
# How far an extrapolated figure may be off before the result says so.
LINEAR_WITHIN = 0.05


def figures(r: dict) -> dict:
    """The figures a candidate is judged by, from one `layout_cost()`."""
    by_axes: dict[str, float] = {}
    for axes, b in zip(r["collectives"]["axes"], r["collectives"]["bytes"]):
        by_axes[axes] = by_axes.get(axes, 0.0) + b
    return {"memory": r["need"], "traffic": sum(by_axes.values()),
            "by_axes": by_axes, "flops": r.get("flops", 0.0)}


class Verifier:
    """Full-depth costs of choices: one compile each of the full model
    (built at `full` blocks, or the search's own model), with XLA's
    default options, within `deadline`."""

    def __init__(self, search: Any, model: Any, full: int | None,
                 deadline: float, timeout: float | None = None):
        self.search, self.model, self.full = search, model, full
        self.deadline, self.timeout = deadline, timeout
        self.built = next(iter(search.models.values())) if full is None \
            else None
        self.costs: dict[tuple, dict | None] = {}
        self.longest = 0.0

    def __call__(self, choice: tuple) -> dict | None:
        if choice not in self.costs:
            began = time.monotonic()
            self.costs[choice] = self._compile(choice)
            self.longest = max(self.longest, time.monotonic() - began)
        return self.costs[choice]

    def has_time(self) -> bool:
        """Whether another compile like the longest so far fits in time."""
        return self.deadline - time.monotonic() > 1.25 * self.longest

    def _compile(self, choice: tuple) -> dict | None:
        from keras.distribution import ModelParallel

        s = self.search
        if self.built is None:
            self.built = build_model(lambda: self.model(self.full),
                                     self.deadline - time.monotonic())
            check_depths({**s.models, self.full: self.built})
        d = ModelParallel(layout_map=s.space.layout_map(choice),
                          batch_dim_name=s.step["batch_dim"])
        try:
            return cost.layout_cost(
                self.built, d, s.step["batch_size"], s.step["optimizer"],
                s.step["loss"], s.step["input_shapes"],
                max(self.deadline - time.monotonic(), 0.01))
        except KerasmeshError as e:
            if e.kind != kinds.COMPILE:
                raise
            return None


def _ranked(search: Any) -> list[tuple]:
    return sorted((c for c, f in search.seen.items() if f is not None),
                  key=lambda c: search.score(search.seen[c]))


def pick(search: Any, verify: Verifier) -> tuple[tuple, list[tuple]]:
    """The best candidate that fits by its full-depth cost, and up to
    `RUNNERS_UP` more verified ones, as time allows.

    A candidate the search costed at full depth and found over budget is
    not compiled again; extrapolated ones are, up to `MAX_VERIFIED`.

    Raises:
        KerasmeshError: kind `memory_budget` when none of the candidates
            compiled at full depth fits.
    """
    chosen: list[tuple] = []
    for c in _ranked(search):
        if len(chosen) > RUNNERS_UP or len(verify.costs) >= MAX_VERIFIED or \
                (chosen and not verify.has_time()):
            break
        if search.depth is None and search.score(search.seen[c])[0] != 0:
            break
        try:
            r = verify(c)
        except KerasmeshError as e:
            # Out of time for a runner-up: the winner stands; for the
            # winner: the best by the search's own figures.
            if e.kind != kinds.TIMEOUT:
                raise
            if not chosen:
                return _unverified(search, verify, c), []
            break
        if r is not None and search.score(figures(r))[0] == 0:
            chosen.append(c)
    if not chosen:
        _nothing_fits(search, verify)
    chosen.sort(key=lambda c: search.score(figures(verify(c))))
    return chosen[0], chosen[1:]


def _unverified(search: Any, verify: Verifier, c: tuple) -> tuple:
    """`c`, the best candidate, when the time ran out before its
    full-depth compile, if the search's own figures say it fits.

    Raises:
        KerasmeshError: kind `timeout`, naming the search's `timeout`,
            when they don't.
    """
    if search.score(search.seen[c])[0] == 0:
        return c
    spent = f"{verify.timeout:g} s" if verify.timeout else "its time"
    raise KerasmeshError(
        kinds.TIMEOUT, f"The search found no layout that fits `memory` in "
        f"{spent}.",
        x="The time ran out before XLA compiled the best candidates for "
          "the full model.",
        i="Raise `timeout`, or search with `blocks` or a smaller space "
          "(pin rules with `fixed`).")


def _nothing_fits(search: Any, verify: Verifier) -> None:
    costed = [(c, figures(r)) for c, r in verify.costs.items()
              if r is not None]
    if search.depth is None:
        costed += [(c, f) for c, f in search.seen.items() if f is not None]
    if not costed:
        raise KerasmeshError(
            kinds.COMPILE, "XLA compiled none of the best candidates for "
            "the full model.", i="Call `layout_cost()` on the start layout "
            "to see XLA's error.")
    c, f = min(costed, key=lambda cf: cf[1]["memory"])
    rules = "; ".join(f'"{k}" = ({", ".join(str(a) for a in axes)})'
                      for k, axes in search.space.rules(c)) or \
        "none (data parallel)"
    raise KerasmeshError(
        kinds.MEMORY_BUDGET, "No layout the search costed fits `memory`.",
        x=f"The budget is {search.budget:.6g} bytes per device; the "
          f"smallest memory XLA reported is {f['memory']:.6g} bytes, "
          f"with rules {rules}.",
        i="Raise `memory`, use more devices, a smaller batch, or an "
          "optimizer with fewer slots.")


def _choice_facts(search: Any, c: tuple, full: dict | None) -> dict:
    predicted = search.seen.get(c)
    return {"rules": [[k, list(a)] for k, a in search.space.rules(c)],
            "predicted": predicted,
            "verified": figures(full) if full is not None else None}


def _classes(search: Any, winner: tuple) -> list[dict]:
    """Per class: its placement in the winner, and what each other
    placement costed (the winner with this class changed)."""
    space, out = search.space, []
    for i, c in enumerate(space.classes):
        alternatives = []
        for k, axes in enumerate(c.options):
            alt = winner[:i] + (k,) + winner[i + 1:]
            f = search.seen.get(alt)
            if k != winner[i] and f is not None:
                alternatives.append({"axes": list(axes), **f})
        out.append({"template": c.template, "count": len(c.paths),
                    "shape": c.shape, "dtype": c.dtype, "bytes": c.bytes,
                    "axes": list(space.axes(winner)[i]),
                    "fixed": c.fixed is not None,
                    "alternatives": alternatives})
    return out


def linearity(predicted: dict | None, full: dict) -> dict | None:
    """How far the extrapolated figures were off the full compile's
    (relative errors), warning past `LINEAR_WITHIN`; None when the search
    compiled the full model itself."""
    if predicted is None:
        return None
    actual = figures(full)
    off = {k: abs(predicted[k] - actual[k]) / max(actual[k], 1.0)
           for k in ("memory", "traffic")}
    if max(off.values()) > LINEAR_WITHIN:
        warn(kinds.SEARCH_EXTRAPOLATION,
             "Per-block cost is not linear in the number of blocks.",
             [("x", f"Extrapolated from 1 and 2 blocks, memory was off by "
                    f"{100 * off['memory']:.1f}% and traffic by "
                    f"{100 * off['traffic']:.1f}% of the full model's."),
              ("i", "The result's cost is the full model's own; other "
                    "candidates were ranked by the extrapolation.")])
    return off


def result(search: Any, verify: Verifier, data_parallel: tuple,
           start: tuple | None, began: float) -> dict:
    """The search as plain values for R."""
    winner, runners = pick(search, verify)
    full = verify.costs.get(winner)
    verified = full is not None
    if not verified and search.best_cost and search.best_cost[0] == winner:
        full = search.best_cost[1]  # the search's quick compile, full depth
    return {
        "layout_map": describe_layout_map(search.space.layout_map(winner)),
        "rules": [[k, list(a)] for k, a in
                  search.space.fixed_rules() + search.space.rules(winner)],
        "cost": full,
        "predicted": search.seen.get(winner),
        "verified": verified,
        "linearity": linearity(search.seen.get(winner)
                               if search.depth is not None and verified
                               else None, full),
        "runners_up": [_choice_facts(search, c, verify(c)) for c in runners],
        "data_parallel": search.seen.get(data_parallel),
        "start": search.seen.get(start) if start is not None else None,
        "classes": _classes(search, winner),
        "candidates": [{"memory": f["memory"], "traffic": f["traffic"],
                        "value": search.value(f), "seconds": e["seconds"],
                        "rules": len(search.space.rules(e["choice"]))}
                       for e in search.log if (f := e["figures"])],
        "compiles": len(search.log) * len(search.models) +
        len(verify.costs),
        "pruned": len(search.pruned),
        "space_size": search.space.size(),
        "method": search.method,
        "depths": [d for d in search.models if d is not None],
        "blocks": search.depth,
        "stopped": "timeout" if search.out_of_time or not verified
        else None,
        "budget": search.budget,
        "objective": search.objective,
        "seconds": time.monotonic() - began,
    }
