"""The solve: every configuration predicted, the best first
(`pipeline.py`, step 4).

A configuration (`Candidate`) is a mesh, its device order, a layout and
levers. `candidates()` predicts all of them from the profile: each
profiled (mesh, layout) in each device order with each micro-batch
count, each remat choice it has figures for, and for each pair of
neighbouring choices the blend with the fewest heavier blocks that fits
(memory is on a line in their number). The order is the search's: those
predicted to fit by their objective, then fewer levers, then less
memory; the others by memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..cost.recompute import Levers
from ..remat.choice import blend
from .arguments import Settings, Space


@dataclass(frozen=True)
class Candidate:
    """A configuration: mesh and layout (their places in the space),
    device order (None for a mesh's own) and levers."""

    mesh: int
    layout: int
    order: str | None
    levers: Levers


@dataclass(frozen=True)
class Prediction:
    """A candidate's predicted memory per device, objective per global
    batch and whether it fits the budget."""

    candidate: Candidate
    memory: float
    value: float
    fits: bool

    @property
    def key(self) -> tuple:
        """The search's order (lower first)."""
        lv = self.candidate.levers
        if self.fits:
            return (0, self.value, lv.rank, self.memory, self._where)
        return (1, self.memory, lv.rank, self.value, self._where)

    @property
    def _where(self) -> tuple:
        c = self.candidate
        return (c.mesh, c.layout, c.order or "")


def _blends(settings: Settings, predictor, p, k: int) -> list[Levers]:
    """For each pair of neighbouring remat choices profiled: the blend with
    the fewest heavier blocks that fits the budget, where one lies
    strictly between the two choices."""
    blocks, budget = settings.blocks, settings.budget
    out = []
    if not blocks or budget is None:
        return out
    for heavy, light in settings.levers.pairs():
        if not (predictor.has(p, heavy) and predictor.has(p, light)):
            continue
        m_light = predictor.memory(p, Levers(light, k))
        m_heavy = predictor.memory(p, Levers(heavy, k))
        if m_light <= budget or m_heavy > budget or m_light <= m_heavy:
            continue
        n = math.ceil((m_light - budget) * blocks / (m_light - m_heavy))
        if 0 < n < blocks:
            out.append(Levers(blend(n, blocks, heavy, light), k))
    return out


def candidates(settings: Settings, space: Space, predictor,
               profiles: dict) -> list[Prediction]:
    """Every configuration the profile predicts, the best first."""
    first = settings.levers.remats[0]
    out = []
    for (m, layout), p in sorted(profiles.items()):
        if p.failed or not predictor.has(p, first):
            continue
        mesh = space.meshes[m]
        orders = mesh.orders()
        for k in settings.levers.ks(mesh.option.shape[0]):
            levers = [Levers(r, k) for r in settings.levers.remats
                      if predictor.has(p, r)]
            for lv in levers + _blends(settings, predictor, p, k):
                memory = predictor.memory(p, lv)
                fits = settings.fits(memory)
                for order, nodes in orders.items():
                    out.append(Prediction(
                        Candidate(m, layout, order, lv), memory,
                        predictor.value(p, nodes, lv), fits))
    return sorted(out, key=lambda c: c.key)


def solve(settings: Settings, space: Space, profiler) -> list[Prediction]:
    """`candidates()` on a profiler's figures."""
    return candidates(settings, space, profiler.predictor,
                      profiler.profiles)
