"""The end of a search: the winner and why it won, as plain values.

`result()` describes for R the configuration `verify.py` picked (its
mesh in its device order, layout map, levers, full-depth cost and
predicted figures), why it won (`why()`), and what the search saw: every
configuration predicted, each mesh's best, each variable class's
placement and the compiles it made or read from the cache.
"""

from __future__ import annotations

import time
from typing import Any

from ..core.errors import warn
from ..core import kinds
from ..cost.layout_cost import distribution_layout
from ..layout_map.rules import describe_layout_map
from ..mesh.device_mesh import describe_mesh
from .arguments import Settings, Space
from .families import DATA_PARALLEL
from .figures import Figures
from .solve import Candidate, Prediction
from .tuning import EXHAUSTIVE, LINEAR_WITHIN
from .verify import distribution_of

# The levers `why()` varies one at a time, with how a candidate names it.
LEVERS = ("mesh", "device_order", "layout", "remat", "accumulation_steps")


def _remat(remat: Any) -> Any:
    """A remat as facts (a choice, or one per block) for R to word."""
    return remat if isinstance(remat, str) else list(remat)


def facts(space: Space, c: Candidate) -> dict:
    """A candidate as plain facts: mesh, device order, layout, levers."""
    mesh = space.meshes[c.mesh]
    return {"mesh": mesh.option.label,
            "device_order": c.order if c.order in ("model", "data") else
            None,
            "layout": mesh.layouts[c.layout][0],
            "remat": _remat(c.levers.remat),
            "accumulation_steps": c.levers.accumulation_steps}


def _only(a: Candidate, b: Candidate, lever: str) -> bool:
    """Whether `b` differs from `a` in `lever` and (but for the mesh,
    which changes what a layout is) in nothing else."""
    if lever == "mesh":
        return a.mesh != b.mesh
    same = {"device_order": a.order == b.order,
            "layout": a.layout == b.layout,
            "remat": a.levers.remat == b.levers.remat,
            "accumulation_steps":
            a.levers.accumulation_steps == b.levers.accumulation_steps}
    return a.mesh == b.mesh and not same[lever] and \
        all(v for k, v in same.items() if k != lever)


def _entry(space: Space, p: Prediction, best: Prediction) -> dict:
    return {**facts(space, p.candidate), "value": p.value,
            "memory": p.memory, "fits": p.fits,
            "ratio": p.value / best.value if best.value else None}


def why(space: Space, winner: Prediction, ranked: list[Prediction]
        ) -> dict:
    """What binds the winner and its nearest rivals.

    Returns:
        `binds`: "memory" when a configuration predicted faster (or with
        less traffic, or as fast with fewer levers) breaks the budget,
        else "objective"; `faster`: the best of those, or None; `levers`: for each lever, the best
        configuration that differs from the winner in it alone (another
        mesh: any layout and levers), or None where there is none.
    """
    w = winner.candidate
    def order(p: Prediction) -> tuple:
        return (p.value, p.candidate.levers.rank)

    faster = min((p for p in ranked if not p.fits and
                  order(p) < order(winner)), key=order, default=None)
    levers = {}
    for lever in LEVERS:
        rival = next((p for p in ranked if _only(w, p.candidate, lever)),
                     None)
        levers[lever] = None if rival is None else \
            _entry(space, rival, winner)
    return {"binds": "memory" if faster else "objective",
            "faster": None if faster is None else
            _entry(space, faster, winner),
            "levers": levers}


def _plain_cost(r: dict | None) -> dict | None:
    """A full-depth cost without what only the search reads."""
    if r is None:
        return None
    out = {k: v for k, v in r.items() if k != "trace"}
    out["ops"] = [{k: v for k, v in op.items() if k != "weights"}
                  for op in r["ops"]]
    return out


def linearity(predicted: dict, full: dict, compiled_k: int) -> dict:
    """How far the predicted memory and traffic (per global batch) were
    off the full-depth compile's (relative errors). At the micro-batches
    the profile compiled, the prediction is the line through the blocks
    alone, and a figure off by more than `LINEAR_WITHIN` is a warning;
    at others it also scales the temporaries with the micro-batch, which
    only the full-depth compile decides."""
    k = int(full["accumulation_steps"])
    actual = {"memory": float(full["need"]),
              "traffic": k * Figures.of(full).plain()["traffic"]}
    off = {key: abs(predicted[key] - actual[key]) / max(actual[key], 1.0)
           for key in actual}
    if k == compiled_k and max(off.values()) > LINEAR_WITHIN:
        warn(kinds.SEARCH_EXTRAPOLATION,
             "Per-block cost is not linear in the number of blocks.",
             [("x", f"Extrapolated from 1 and 2 blocks, memory was off by "
                    f"{100 * off['memory']:.1f}% and traffic by "
                    f"{100 * off['traffic']:.1f}% of the full model's."),
              ("i", "The result's cost is the full model's own; other "
                    "configurations were ranked by the extrapolation.")])
    return off


class _Described:
    """Plain figures of predictions, for the result."""

    def __init__(self, settings: Settings, space: Space, profiler: Any):
        self.settings, self.space = settings, space
        self.predictor = profiler.predictor
        self.profiles = profiler.profiles

    def figures(self, m: int, layout: int, order: str | None,
                levers: Any) -> dict | None:
        p = self.profiles.get((m, layout))
        if p is None or p.failed or not self.predictor.has(p, levers.remat):
            return None
        orders = self.space.meshes[m].orders()
        nodes = orders.get(order, next(iter(orders.values())))
        return self.predictor.described(p, nodes, levers)

    def candidates(self, ranked: list[Prediction]) -> list[dict]:
        out = []
        for p in ranked:
            c = p.candidate
            mesh = self.space.meshes[c.mesh]
            profile = self.profiles[(c.mesh, c.layout)]
            out.append({
                **facts(self.space, c), "memory": p.memory,
                "value": p.value, "fits": p.fits,
                "traffic": self.predictor.traffic(profile, c.levers),
                "rules": len(mesh.space.rules(mesh.layouts[c.layout][1])),
                "reshardings": self.predictor.reshardings(profile)})
        return out

    def meshes(self, ranked: list[Prediction], pruned: list) -> list[dict]:
        out = []
        for m, mesh in enumerate(self.space.meshes):
            best = next((p for p in ranked if p.candidate.mesh == m), None)
            out.append({
                "mesh": mesh.option.label, "shape": list(mesh.option.shape),
                "orders": [o for o in mesh.orders() if o is not None],
                "costed": sum(1 for (i, _) in self.profiles if i == m),
                "pruned": sum(1 for (i, _) in pruned if i == m),
                "fits": bool(best is not None and best.fits),
                "memory": None if best is None else best.memory,
                "value": None if best is None else best.value})
        return out

    def classes(self, c: Candidate) -> list[dict]:
        """Per class: its placement in the winner, and the predicted
        figures of each profiled layout that differs in it alone."""
        mesh = self.space.meshes[c.mesh]
        space, choice = mesh.space, mesh.layouts[c.layout][1]
        out = []
        for i, cls in enumerate(space.classes):
            alternatives = []
            for layout, (_, other) in enumerate(mesh.layouts):
                if other[i] == choice[i] or any(
                        a != b for j, (a, b) in enumerate(zip(other, choice))
                        if j != i):
                    continue
                f = self.figures(c.mesh, layout, c.order, c.levers)
                if f is not None:
                    alternatives.append({
                        "axes": list(cls.options[other[i]]),
                        "memory": f["memory"], "traffic": f["traffic"]})
            out.append({"template": cls.template, "count": len(cls.paths),
                        "shape": cls.shape, "dtype": cls.dtype,
                        "bytes": cls.bytes, "axes": list(space.axes(choice)[i]),
                        "fixed": cls.fixed is not None,
                        "alternatives": alternatives})
        return out


def _space_size(space: Space) -> float:
    n = sum(m.space.size() for m in space.meshes)
    return float(n) if n < 10 ** 300 else float("inf")


def _data_parallel(d: _Described, space: Space, settings: Settings
                   ) -> dict | None:
    mesh = space.meshes[0]
    if not mesh.layouts or mesh.layouts[0][0] != DATA_PARALLEL:
        return None
    order = next(iter(mesh.orders()))
    return d.figures(0, 0, order, settings.levers.base(mesh.option.shape[0]))


def _start(d: _Described, space: Space, c: Candidate) -> dict | None:
    mesh = space.meshes[c.mesh]
    if mesh.start is None:
        return None
    layout = next(i for i, (_, choice) in enumerate(mesh.layouts)
             if choice == mesh.start)
    return d.figures(c.mesh, layout, c.order, c.levers)


def result(settings: Settings, space: Space, profiler: Any, verifier: Any,
           picked: tuple[Prediction, list[Prediction]], began: float
           ) -> dict:
    """The search as plain values for R."""
    winner, ranked = picked
    c = winner.candidate
    mesh = space.meshes[c.mesh]
    choice = mesh.layouts[c.layout][1]
    dist = distribution_of(settings, space, c)
    full = verifier.costs.get(c)
    d = _Described(settings, space, profiler)
    predicted = verifier.predicted.get(c) or \
        d.figures(c.mesh, c.layout, c.order, c.levers)
    # The winner as the last solve predicts it, beside its rivals.
    winner = next((p for p in ranked if p.candidate == c), winner)
    compiles = sum(1 for e in profiler.log if not e["cached"])
    return {
        "layout_map": describe_layout_map(distribution_layout(dist)[0]),
        "mesh": describe_mesh(dist.device_mesh),
        "device_order": c.order if c.order in ("model", "data") else None,
        "batch_dim_name": settings.step.batch_dim,
        "remat": _remat(c.levers.remat),
        "accumulation_steps": c.levers.accumulation_steps,
        "micro_batch_size": settings.step.batch_size //
        c.levers.accumulation_steps,
        "rules": [[k, list(a)] for k, a in mesh.space.all_rules(choice)],
        "cost": _plain_cost(full) if verifier.verified else None,
        "predicted": predicted, "verified": verifier.verified,
        "linearity": linearity(
            predicted, full, settings.levers.base(
                mesh.option.shape[0]).accumulation_steps)
        if verifier.verified and settings.blocks is not None else None,
        "why": why(space, winner, ranked),
        "data_parallel": _data_parallel(d, space, settings),
        "start": _start(d, space, c),
        "classes": d.classes(c),
        "candidates": d.candidates(ranked),
        "meshes": d.meshes(ranked, profiler.pruned),
        "compiles": compiles + verifier.compiles,
        "profiled": len(profiler.log),
        "pruned": len(profiler.pruned),
        "unprofiled": [{"mesh": space.meshes[m].option.label,
                        "layout": space.meshes[m].layouts[layout][0],
                        "remat": r}
                       for m, layout, r in profiler.unprofiled],
        "space_size": _space_size(space),
        "method": "exhaustive" if mesh.space.size() <= EXHAUSTIVE else
        "families",
        "depths": [k for k in settings.models if k is not None],
        "blocks": settings.blocks,
        "stopped": "timeout" if profiler.stopped or not verifier.verified
        else None,
        "cache": profiler.cache.report(),
        "budget": settings.budget, "objective": settings.objective,
        "seconds": time.monotonic() - began,
    }
