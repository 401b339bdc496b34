"""The verification: full-depth compiles decide (`pipeline.py`, step 5).

`Verifier.pick()` compiles the best prediction that fits at full depth,
as `layout_cost()` costs it (quick, with what remat recomputes measured,
on the topology). XLA's figure decides the fit: a miss feeds what the
prediction lacked back into the profile it came from (`_correct()`); a
fit's modeled time, where it differs from the prediction, likewise
(`_correct_time()`). The solve then runs again, and the next best
prediction is compiled while it promises less than the best verified
configuration, up to `tuning.MAX_VERIFIED` compiles; the best verified
wins. When the time runs out first, the best prediction stands,
unverified.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.errors import KerasmeshError
from ..core import kinds
from ..core.text import bytes_text, plural, r_axes
from ..cost import layout_cost as cost
from ..cost.compare import build_model
from ..cost.deadline import SEARCHING
from ..remat.choice import label
from .arguments import Settings, Space
from .builds import check_depths
from ..mesh.device_mesh import describe_mesh
from .meshes import rebind_to
from .predict import MEMORY, TIME
from .profile import model_signature
from .solve import Candidate, Prediction
from .tuning import MAX_VERIFIED


def distribution_of(settings: Settings, space: Space, c: Candidate) -> Any:
    """The ModelParallel of a candidate: its layout on its mesh in its
    device order."""
    from keras.distribution import ModelParallel

    mesh = space.meshes[c.mesh]
    lm = mesh.space.layout_map(mesh.layouts[c.layout][1])
    if c.order == "data":
        lm = rebind_to(lm, mesh.option.keras_mesh("data"))
    return ModelParallel(layout_map=lm, batch_dim_name=settings.step.batch_dim)


def describe(space: Space, c: Candidate) -> str:
    """A candidate in words: mesh, layout and levers."""
    mesh = space.meshes[c.mesh]
    shape = " x ".join(f"{a} = {n}" for a, n in mesh.space.sizes.items())
    where = "" if c.order in (None, "given") else \
        f" ({c.order} axis fastest over device ids)"
    k = c.levers.accumulation_steps
    name, choice = mesh.layouts[c.layout]
    rules = mesh.space.rules(choice)
    placed = "" if not rules else " (" + "; ".join(
        f"{key} = {r_axes(axes)}" for key, axes in rules[:3]) + \
        (f"; {plural(len(rules) - 3, 'more rule')}" if len(rules) > 3
         else "") + ")"
    return (f"mesh {shape}{where}, layout \"{name}\"{placed}, "
            f"remat \"{label(c.levers.remat)}\", {k} micro-batch"
            f"{'es' if k != 1 else ''}")


class Verifier:
    """The full-depth compiles of one search.

    Attributes:
        costs: by candidate: `layout_cost()`'s result (None when XLA
            refused it).
        predicted: by candidate compiled: its predicted figures before
            the compile (`Predictor.described()`).
        compiles: the full-depth compiles made (not read from the cache).
        verified: whether the winner was compiled at full depth.
    """

    def __init__(self, settings: Settings, space: Space, profiler: Any):
        self.settings, self.space, self.profiler = settings, space, profiler
        self.costs: dict[Candidate, dict | None] = {}
        self.predicted: dict[Candidate, dict] = {}
        self.compiles = 0
        self.verified = False
        self._model: Any = None

    def _full_model(self) -> Any:
        s = self.settings
        if self._model is None:
            if s.blocks is None:
                self._model = list(s.models.values())[-1]
            else:
                self._model = build_model(
                    lambda: s.model(s.blocks), s.timeout,
                    s.timeout - max(s.left(), 0.01), SEARCHING)
                check_depths({**s.models, s.blocks: self._model})
        return self._model

    def cost(self, c: Candidate) -> dict | None:
        """`layout_cost()` of a candidate at full depth, once, or as the
        cache kept it."""
        if c not in self.costs:
            s = self.settings
            model = self._full_model()
            dist = distribution_of(s, self.space, c)
            mesh = self.space.meshes[c.mesh]
            key = self.profiler.key(
                {**model_signature(model), "full": True}, mesh,
                mesh.layouts[c.layout][1], dist.device_mesh,
                c.levers.remat, c.levers.accumulation_steps)
            found = self.profiler.cache.get(
                key, lambda v: {**v, "mesh": describe_mesh(dist.device_mesh)})
            if found is None:
                try:
                    found = cost.layout_cost(
                        model, dist, s.step.batch_size, s.step.optimizer,
                        s.step.loss, s.step.input_shapes,
                        max(s.left(), 0.01), quick=True,
                        remat=c.levers.remat,
                        accumulation_steps=c.levers.accumulation_steps,
                        topology=s.machine, measure=True, trace=True)
                except KerasmeshError as e:
                    if e.kind != kinds.COMPILE:
                        raise
                    found = None
                else:
                    self.compiles += 1
                    self.profiler.cache.put(
                        key, {k: v for k, v in found.items() if k != "mesh"})
            self.costs[c] = found
        return self.costs[c]

    def pick(self, ranked: list[Prediction],
             resolve: Callable[[], list[Prediction]]
             ) -> tuple[Prediction, list[Prediction]]:
        """The winner and the predictions it was chosen from (see the
        module's docstring).

        Raises:
            KerasmeshError: kind `search_no_fit` when nothing fits; kind
                `timeout` when the time ran out before anything was
                predicted to fit; kind `compile` when XLA compiled
                nothing.
        """
        s = self.settings
        winner: tuple[float, Prediction] | None = None
        while len(self.costs) < MAX_VERIFIED:
            best = next((p for p in ranked if p.fits and
                         p.candidate not in self.costs), None)
            if best is None or (winner and best.value >= winner[0]):
                break
            if s.left() <= 0:
                return winner[1] if winner else best, ranked
            self._keep_prediction(best)
            try:
                r = self.cost(best.candidate)
            except KerasmeshError as e:
                if e.kind != kinds.TIMEOUT:
                    raise
                return winner[1] if winner else best, ranked
            if r is not None and s.fits(r["need"]):
                self.verified = True
                value = self._correct_time(best, r)
                if winner is None or value < winner[0]:
                    winner = (value, best)
            elif r is not None:
                self._correct(best, r["need"])
            ranked = resolve()
        if winner is not None:
            return winner[1], ranked
        return self._nothing_fits(ranked)

    def _keep_prediction(self, p: Prediction) -> None:
        c = p.candidate
        self.predicted[c] = self.profiler.predictor.described(
            self.profiler.profiles[(c.mesh, c.layout)],
            self.space.meshes[c.mesh].orders()[c.order], c.levers)

    def _correct_time(self, p: Prediction, r: dict) -> float:
        """Feed the seconds `p`'s predicted time lacked (per micro-batch,
        against its full-depth cost's) back into its profile
        (`Predictor.learn`). Returns the verified objective (`p.value`
        where the cost has no time, or the objective is traffic)."""
        time = (r.get("time") or {}).get("total")
        if self.settings.objective != "time" or time is None:
            return p.value
        c = p.candidate
        predictor = self.profiler.predictor
        profile = self.profiler.profiles[(c.mesh, c.layout)]
        nodes = self.space.meshes[c.mesh].orders()[c.order]
        k = c.levers.accumulation_steps
        penalty = predictor.penalty(profile)
        short = float(time) / k - predictor.micro_step(profile, nodes,
                                                       c.levers)
        s = predictor.scale(profile, k)
        whole = predictor.step(profile, nodes, c.levers.remat, 1.0)
        predictor.learn(profile, TIME, c.levers.remat, short, s, whole)
        return float(time) * penalty

    def _correct(self, p: Prediction, memory: float) -> None:
        """Feed the bytes `p`'s memory lacked back into its profile
        (`Predictor.learn`)."""
        c = p.candidate
        predictor = self.profiler.predictor
        profile = self.profiler.profiles[(c.mesh, c.layout)]
        short = max(memory - p.memory, 0.0)
        s = predictor.scale(profile, c.levers.accumulation_steps)
        predictor.learn(profile, MEMORY, c.levers.remat, short, s,
                        predictor.temp(profile, c.levers.remat))

    def _nothing_fits(self, ranked: list[Prediction]) -> Any:
        s = self.settings
        verified = [(c, r["need"], "XLA reported") for c, r in
                    self.costs.items() if r is not None]
        if verified and any(p.fits for p in ranked):
            seen = verified  # MAX_VERIFIED compiles, each over the budget
        else:
            seen = verified + [(p.candidate, p.memory, "predicted")
                               for p in ranked]
        if not seen:
            seen = self._floors()
        c, least, where = min(seen, key=lambda e: (e[1], e[2]))
        raise KerasmeshError(
            kinds.SEARCH_NO_FIT, "No configuration the search found fits "
            "`memory`.",
            x=f"The budget is {bytes_text(s.budget)} per device; the "
              f"least memory {where} is {bytes_text(least)}, with "
              f"{describe(self.space, c)}.",
            i="Raise `memory`, use more devices, a smaller batch, an "
              "optimizer with fewer slots, or allow more `remat` and "
              "`accumulation_steps`.")

    def _floors(self) -> list[tuple]:
        """The least floor among layouts pruned without a compile.

        Raises:
            KerasmeshError: kind `timeout` when the profile ran out of time
                before any compile; kind `compile` when XLA refused every
                layout.
        """
        s = self.settings
        if self.profiler.stopped:
            raise KerasmeshError(
                kinds.TIMEOUT, f"The search compiled no layout in "
                f"{s.timeout:g} s.", i=SEARCHING[1])
        if not self.profiler.pruned:
            raise KerasmeshError(
                kinds.COMPILE, "XLA compiled none of the layouts searched.",
                i="Call `layout_cost()` on the start layout to see XLA's "
                  "error.")
        out = []
        for m, layout in self.profiler.pruned:
            mesh = self.space.meshes[m]
            base = s.levers.base(mesh.option.shape[0])
            out.append((Candidate(m, layout, None, base),
                        mesh.floor(mesh.layouts[layout][1]),
                        "that weights and optimizer state alone need "
                        "(nothing was compiled)"))
        return out
