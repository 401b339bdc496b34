"""The end of a search: the verified configuration as plain values.

`result()` picks the winner (`verify.pick()`: full-depth compiles
decide) and describes it for R: the mesh in its device order, the layout
map, the levers, the verified cost with its time and memory, and what
the search saw on the way (every candidate, each mesh's best, each
class's alternatives).
"""

from __future__ import annotations

import time
from typing import Any

from ..core.errors import warn
from ..layout_map.rules import describe_layout_map
from ..mesh.device_mesh import describe_mesh
from ..core import kinds
from ..cost.layout_cost import distribution_layout
from ..remat.choice import SAVE_MATMULS, label
from .figures import figures
from .verify import Verifier, distribution_of, pick

# How far an extrapolated figure may be off before the result says so.
LINEAR_WITHIN = 0.05


def _plain(f: dict | None) -> dict | None:
    return None if f is None else {k: v for k, v in f.items()}


def _rules(space: Any, choice: tuple) -> list[list]:
    """Every rule a choice's layout map holds (the fixed and the block
    output rules too), as [pattern, axes]."""
    return [[k, list(a)] for k, a in space.all_rules(choice)]


def _choice_facts(searches: list, key: tuple, verify: Verifier) -> dict:
    i, c, lv = key
    s = searches[i]
    return {"rules": _rules(s.space, c),
            "mesh": s.option.label, "remat": label(lv[0]),
            "accumulation_steps": lv[1],
            "predicted": _plain(s.seen.get((c, lv))),
            "verified": _plain(verify.figures(key))}


def _classes(s: Any, winner: tuple, levers: tuple) -> list[dict]:
    """Per class: its placement in the winner, and what each other
    placement costed (the winner with this class changed)."""
    space, out = s.space, []
    for i, c in enumerate(space.classes):
        alternatives = []
        for k, axes in enumerate(c.options):
            alt = winner[:i] + (k,) + winner[i + 1:]
            f = s.seen.get((alt, levers))
            if k != winner[i] and f is not None:
                alternatives.append({"axes": list(axes),
                                     "memory": f["memory"],
                                     "traffic": f["traffic"]})
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


def _candidates(searches: list) -> list[dict]:
    ctx = searches[0].ctx
    return [{"memory": f["memory"], "traffic": f["traffic"],
             "value": ctx.value(f), "seconds": e["seconds"],
             "rules": len(s.space.rules(e["choice"])),
             "mesh": s.option.label, "remat": label(e["levers"][0]),
             "accumulation_steps": e["levers"][1],
             "reshardings": f["reshardings"]}
            for s in searches for e in s.log if (f := e["figures"])]


def _meshes(searches: list) -> list[dict]:
    """Each mesh searched: its shape, orders and best candidate."""
    ctx = searches[0].ctx
    out = []
    for s in searches:
        costed = [f for f in s.seen.values() if f is not None]
        best = min(costed, key=ctx.score) if costed else None
        out.append({"mesh": s.option.label, "shape": list(s.option.shape),
                    "orders": list(s.option.nodes), "costed": len(costed),
                    "pruned": len(s.pruned),
                    "fits": bool(best is not None and ctx.fits(best)),
                    "memory": None if best is None else best["memory"],
                    "value": None if best is None else ctx.value(best)})
    return out


def _winner_cost(searches: list, verify: Verifier, winner: tuple
                 ) -> tuple[dict | None, bool]:
    full = verify.costs.get(winner)
    best = searches[0].ctx.best_cost
    if full is None and best is not None and best[0] == winner:
        return best[1], False  # the search's quick compile, full depth
    return full, full is not None


def result(searches: list, verify: Verifier, data_parallel: tuple | None,
           start: tuple | None, began: float) -> dict:
    """The search as plain values for R."""
    ctx = searches[0].ctx
    winner, runners = pick(searches, verify)
    i, choice, levers = winner
    s = searches[i]
    full, verified = _winner_cost(searches, verify, winner)
    order = verify.orders.get(winner)
    dist = distribution_of(searches, winner, order)
    base = ctx.levers.base(searches[0].data)
    predicted = s.seen.get((choice, levers))
    return {
        "layout_map": describe_layout_map(distribution_layout(dist)[0]),
        "mesh": describe_mesh(dist.device_mesh),
        "device_order": order if order in ("model", "data") else None,
        "batch_dim_name": ctx.step["batch_dim"],
        "remat": levers[0] if isinstance(levers[0], str) else
        list(levers[0]),
        "accumulation_steps": levers[1],
        "micro_batch_size": ctx.step["batch_size"] // levers[1],
        "rules": _rules(s.space, choice),
        "cost": full, "predicted": _plain(predicted), "verified": verified,
        "linearity": linearity(predicted if ctx.depth is not None and
                               verified else None, full),
        "runners_up": [_choice_facts(searches, k, verify) for k in runners],
        "data_parallel": None if data_parallel is None else
        _plain(searches[0].seen.get((data_parallel, base))),
        "start": None if start is None else
        _plain(s.seen.get((start, levers))),
        "classes": _classes(s, choice, levers if isinstance(levers[0], str)
                            else (SAVE_MATMULS, levers[1])),
        "candidates": _candidates(searches),
        "meshes": _meshes(searches),
        "compiles": sum(len(x.log) for x in searches) * len(ctx.models) +
        len(verify.costs),
        "pruned": sum(len(x.pruned) for x in searches),
        "space_size": sum(x.space.size() for x in searches),
        "method": s.method,
        "depths": [d for d in ctx.models if d is not None],
        "blocks": ctx.depth,
        "stopped": "timeout" if ctx.out_of_time or not verified else None,
        "budget": ctx.budget, "objective": ctx.objective,
        "seconds": time.monotonic() - began,
    }
