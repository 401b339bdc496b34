"""A configuration's memory and objective, predicted from the profile.

How (the lines through the blocks, the micro-batch's scaling, the walk
of the schedule per device order) is `pipeline.py`'s docstring, step 4.
`Predictor` keeps each walk it makes: a profile's schedule is walked once
per device order and micro-batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..cost.recompute import Levers
from ..cost.schedule import overlap_by_class, walk
from ..topology.time import rates
from .arguments import Settings
from .figures import Figures
from .tuning import RESHARD_PENALTY


MEMORY, TIME = "memory", "time"


@dataclass
class Lessons:
    """What full-depth compiles taught of one figure (memory or time) of
    one profile (`Predictor.learn`).

    Attributes:
        correction: by remat, what a full-depth compile at the profile's
            micro-batch found the prediction short by (bytes, or seconds
            of a micro-batch's step).
        share: the share of the figure that does not shrink with the
            micro-batch (of the temporaries, or of a micro-batch's step
            time), as a full-depth compile at a smaller micro-batch found
            it, or None.
    """

    correction: dict = field(default_factory=dict)
    share: float | None = None


@dataclass
class Profile:
    """One (mesh, layout) profiled.

    Attributes:
        mesh, layout: their places in the search's space.
        figures: by (remat, depth): what each compile said.
        failed: XLA's refusal of the layout, or None.
        taught: `Lessons` by figure (`MEMORY`, `TIME`).
    """

    mesh: int
    layout: int
    figures: dict = field(default_factory=dict)
    failed: str | None = None
    taught: dict = field(default_factory=lambda: {MEMORY: Lessons(),
                                                  TIME: Lessons()})


class Predictor:
    """Predictions for one search.

    Args:
        settings: the search's settings.
        dtype: the model's compute dtype (for the topology's FLOP/s).

    Attributes:
        shares: by figure, the largest share found not to shrink with the
            micro-batch (`Lessons.share`), taken for every profile that has
            none of its own: 0 until a full-depth compile says otherwise.
    """

    def __init__(self, settings: Settings, dtype: str):
        self.settings = settings
        self.dtype = dtype
        self.first = settings.levers.remats[0]
        self.shares = {MEMORY: 0.0, TIME: 0.0}
        self._walks: dict[tuple, float] = {}

    def depths(self, remat: str) -> list:
        """The depths a remat choice is profiled at: every one (1 and 2
        blocks with `blocks`)."""
        return list(self.settings.models)

    def has(self, p: Profile, remat: str | tuple) -> bool:
        """Whether `p` holds the figures `remat` is predicted from."""
        choices = {remat} if isinstance(remat, str) else set(remat)
        need = {(self.first, d) for d in self.depths(self.first)} if \
            self.settings.blocks is not None else set()
        for r in choices:
            need |= {(r, d) for d in self.depths(r)}
        return need <= set(p.figures)

    def _full(self, p: Profile, remat: str | tuple,
              get: Callable[[Figures], float]) -> float:
        """One figure of the full model: each remat choice's line through
        its 1 and 2 blocks, the largest intercept of the choices present
        (what a step holds once, such as the one block's gathered weights
        that "full" recomputes with) and each choice's slope for its
        blocks."""
        blocks = self.settings.blocks
        if blocks is None:
            return get(p.figures[(remat, self.depths(remat)[-1])])
        counts = {remat: blocks} if isinstance(remat, str) else {
            r: remat.count(r) for r in set(remat)}
        lines = {r: (get(p.figures[(r, 1)]), get(p.figures[(r, 2)]))
                 for r in counts}
        intercept = max(2 * one - two for one, two in lines.values())
        return intercept + sum(n * (lines[r][1] - lines[r][0])
                               for r, n in counts.items())

    def _compiled(self, p: Profile) -> Figures:
        any_depth = self.depths(self.first)[0]
        return p.figures[(self.first, any_depth)]

    def scale(self, p: Profile, k: int) -> float:
        """The micro-batch at `k` micro-batches over the one compiled."""
        return self.settings.step.batch_size / k / \
            self._compiled(p).micro_batch

    def reshardings(self, p: Profile) -> int:
        """Tensors XLA replicates to reshard under `p`'s layout."""
        return self._compiled(p).reshardings

    def memory(self, p: Profile, levers: Levers) -> float:
        """Bytes per device (`pipeline.py`, step 4)."""
        k = levers.accumulation_steps
        s = self.scale(p, k)
        r = levers.remat
        compiled_k = self.settings.step.batch_size // \
            self._compiled(p).micro_batch
        fixed = self.share(p, MEMORY)
        memory = self._full(p, r, lambda f: f.static) + \
            self.temp(p, r) * (fixed + (1 - fixed) * s) + \
            s * self._full(p, r, lambda f: f.inputs)
        if k > 1 and compiled_k == 1:
            memory += self._full(p, r, lambda f: f.gradients)
        return memory + self._correction(p, MEMORY, r)

    def temp(self, p: Profile, remat: str | tuple) -> float:
        """XLA's temporaries at full depth, at the micro-batch profiled."""
        return self._full(p, remat, lambda f: f.temp)

    def share(self, p: Profile, figure: str) -> float:
        """The share of `p`'s `figure` that does not shrink with the
        micro-batch: its own, or the search's."""
        own = p.taught[figure].share
        return self.shares[figure] if own is None else own

    def learn(self, p: Profile, figure: str, remat: str | tuple,
              short: float, s: float, whole: float) -> None:
        """Feed what a full-depth compile found `figure`'s prediction short
        by (`short`) back into `p`. At the micro-batch profiled (scale `s`
        1), as a correction of `remat`'s; at a smaller one, as a larger
        share of `whole` (the figure's part that scales with the
        micro-batch, at the micro-batch profiled) that does not shrink
        with it: `p`'s, and the largest found for every profile without
        its own."""
        lessons = p.taught[figure]
        if s >= 1 or whole <= 0:
            lessons.correction[remat] = \
                lessons.correction.get(remat, 0.0) + short
            return
        lessons.share = min(1.0, max(0.0, self.share(p, figure) +
                                     short / (whole * (1 - s))))
        self.shares[figure] = max(self.shares[figure], lessons.share)

    @staticmethod
    def _correction(p: Profile, figure: str, remat: str | tuple) -> float:
        """What full-depth compiles added to `remat`'s prediction of
        `figure`: its own, or a blend's choices' by their share of the
        blocks."""
        corrections = p.taught[figure].correction
        if remat in corrections or isinstance(remat, str):
            return corrections.get(remat, 0.0)
        return sum(corrections.get(c, 0.0) * remat.count(c) / len(remat)
                   for c in set(remat))

    def _walk(self, f: Figures, nodes: list[int], scale: float) -> float:
        key = (id(f), tuple(nodes), scale)
        if key not in self._walks:
            rate = rates(self.settings.timing, self.dtype, nodes)
            result = walk(f.trace, f.ops, rate, scale)
            if f.by_class:
                weights: dict[str, float] = {}
                for op in f.ops:
                    if op.get("weights"):
                        key_axes = "+".join(op["axes"])
                        weights[key_axes] = weights.get(key_axes, 0.0) + \
                            rate.collective(op)
                result = overlap_by_class(result, weights)
            self._walks[key] = result.total
        return self._walks[key]

    def step(self, p: Profile, nodes: list[int], remat: str | tuple,
             scale: float) -> float:
        """Seconds of one micro-batch's step at full depth, as the
        schedule's walk has it (no correction)."""
        return self._full(p, remat, lambda f: self._walk(f, nodes, scale))

    def penalty(self, p: Profile) -> float:
        """The factor on a layout's time for the tensors XLA reshards."""
        return 1 + (RESHARD_PENALTY if self.reshardings(p) else 0.0)

    def micro_step(self, p: Profile, nodes: list[int],
                   levers: Levers) -> float:
        """Seconds of one micro-batch's step, with what full-depth compiles
        taught (`pipeline.py`, step 5)."""
        s = self.scale(p, levers.accumulation_steps)
        r = levers.remat
        step = self.step(p, nodes, r, s)
        share = self.share(p, TIME)
        if share and s < 1:
            step += share * (1 - s) * self.step(p, nodes, r, 1.0)
        return step + self._correction(p, TIME, r)

    def time(self, p: Profile, nodes: list[int], levers: Levers) -> float:
        """Seconds per global batch on the search's machine."""
        return levers.accumulation_steps * \
            self.micro_step(p, nodes, levers) * self.penalty(p)

    def traffic(self, p: Profile, levers: Levers) -> float:
        """Collective bytes per device per global batch."""
        k = levers.accumulation_steps
        s = self.scale(p, k)

        def moved(f: Figures) -> float:
            return sum(v["weights"] + s * v["activations"]
                       for v in f.by_axes.values())
        return k * self._full(p, levers.remat, moved)

    def value(self, p: Profile, nodes: list[int], levers: Levers) -> float:
        """The objective per global batch (lower is better)."""
        if self.settings.objective == "time":
            return self.time(p, nodes, levers)
        return self.traffic(p, levers)

    def described(self, p: Profile, nodes: list[int], levers: Levers
                  ) -> dict:
        """`figures_at()` with the objective (`value`, and `time` where
        the objective is time), for the result."""
        out = self.figures_at(p, levers)
        out["value"] = self.value(p, nodes, levers)
        if self.settings.objective == "time":
            out["time"] = out["value"]
        return out

    def figures_at(self, p: Profile, levers: Levers) -> dict:
        """Plain figures of a prediction, per global batch (for the
        result): memory, traffic, traffic by mesh axes, FLOPs and the
        tensors XLA reshards."""
        k = levers.accumulation_steps
        s = self.scale(p, k)
        axes = sorted({a for f in p.figures.values() for a in f.by_axes})

        def moved(f: Figures, axis: str) -> float:
            v = f.by_axes.get(axis, {"weights": 0.0, "activations": 0.0})
            return v["weights"] + s * v["activations"]
        return {"memory": self.memory(p, levers),
                "traffic": self.traffic(p, levers),
                "by_axes": {a: k * self._full(p, levers.remat,
                                              lambda f, a=a: moved(f, a))
                            for a in axes},
                "flops": k * s * self._full(p, levers.remat,
                                            lambda f: f.flops),
                "reshardings": self.reshardings(p)}
