"""How the search costs a candidate: a layout on one mesh, with levers.

Each candidate is costed by XLA itself, through `cost.layout_cost()` with
its quick compiler options (the same HLO passes, so the same memory and
collectives, in about half the time):

* at the model's own depth when no reduced builder is given or the model
  has at most two blocks;
* otherwise at 1 and 2 blocks, and every figure extrapolated linearly to
  the full depth (`figures.extrapolate()`);
* a remat blended over the blocks (`choice.blend()`: "full" on the first
  of them and "save_matmuls" on the rest, or "save_matmuls" and "none")
  is not compiled: its figures lie
  between those of its two choices (`figures.between()`), and only the
  full-depth compile of `verify.py` says what it needs.

A candidate is `(choice, levers)`: one option per class of the mesh's
`SearchSpace`, and `(remat, accumulation_steps)` (`levers.py`). A
candidate whose weights and optimizer state alone, at full depth, exceed
the budget can't fit (XLA's total counts every argument), so it is not
compiled: `floor()` is that bound, and it is checked against every
compile's own figure (`Context.bound_holds`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import KerasmeshError
from ..core import fits, kinds
from ..cost import layout_cost as cost
from ..topology.machine import Topology
from ..remat.choice import blend_parts
from .figures import (RESHARD_PENALTY, between, bandwidth_time,
                      extrapolate, figures)
from .levers import LeverSpace
from .meshes import MeshOption
from .space import SearchSpace, variable_classes

# The full-depth compile takes about this many times the quick compile
# extrapolated to full depth (the build, the lowering without remat that
# measures recomputation, a margin).
VERIFY_FACTOR = 2.0
# The floor counts this share of the optimizer's bytes (slots in another
# dtype than their variable's make the ratio approximate).
SLOT_SHARE = 0.9


def _at(counts: tuple[int, int], depth: int | None) -> int:
    """How many variables a class has at `depth` blocks, from its counts
    at the two depths searched (equal when the model is searched whole)."""
    n1, n2 = counts
    return n2 if depth is None else n1 + (depth - 1) * (n2 - n1)


def class_counts(space: SearchSpace, models: dict) -> list[tuple[int, int]]:
    """Each class's variable count in the first and the last model
    searched: a class of one block's variables grows by one a block."""
    if len(models) == 1:
        return [(len(c.paths), len(c.paths)) for c in space.classes]
    first = list(models.values())[0]
    counts = {(c.template, tuple(c.shape), c.dtype): len(c.paths)
              for c in variable_classes(first, space.sizes, options=False)}
    return [(counts.get((c.template, tuple(c.shape), c.dtype), 0),
             len(c.paths)) for c in space.classes]


@dataclass
class Context:
    """What every mesh's search shares: the models, the step, the budget,
    the objective, the clock and the progress report."""

    models: dict
    depth: int | None
    step: dict
    budget: float | None
    objective: str
    deadline: float
    levers: LeverSpace
    topology: Topology | None = None
    bandwidth: dict | None = None
    flop_rate: float | None = None
    progress: Callable | None = None
    slot_ratio: float = 0.0
    count: int = 0
    out_of_time: bool = False
    bound_holds: bool = True
    best: float | None = None
    # (candidate, cost) of the best candidate costed at full depth: the
    # result's cost if the time runs out before it is verified.
    best_cost: tuple | None = None
    # When the whole search must end (0: no end but `deadline`), and the
    # longest quick compile seen at each depth.
    end: float = 0.0
    compile_seconds: dict = field(default_factory=dict)

    def reserve(self) -> float:
        """Seconds to keep for the full-depth compile: the quick compiles
        at 1 and 2 blocks extrapolated to the full depth, times
        `VERIFY_FACTOR` (0 when the model is searched whole)."""
        t = self.compile_seconds
        if self.depth is None or 1 not in t or 2 not in t:
            return 0.0
        full = t[2] + (self.depth - 2) * max(t[2] - t[1], 0.0)
        return VERIFY_FACTOR * full

    def left(self) -> float:
        """Seconds left for candidates: to `deadline`, or, once a
        candidate is known to fit, sooner when the full-depth compile needs
        more of what remains to `end` (before, a fit by the search's own
        figures beats none)."""
        stop = self.deadline
        if self.end and self.best is not None:
            stop = min(stop, self.end - self.reserve())
        return stop - time.monotonic()

    def value(self, f: dict) -> float:
        """The objective per global batch (lower is better)."""
        if self.topology is not None and f.get("times"):
            v = min(f["times"].values())
        elif self.objective == "time":
            v = bandwidth_time(f, self.bandwidth, self.flop_rate)
        else:
            v = f["traffic"] * f["steps"]
        return v * (1 + RESHARD_PENALTY) if f.get("reshardings") else v

    def fits(self, f: dict | None) -> bool:
        return f is not None and (self.budget is None or
                                  fits.fits(f["memory"], self.budget))

    def score(self, f: dict | None) -> tuple:
        """Lower is better: fitting candidates by the objective, then the
        fewest levers; the others by memory."""
        if f is None:
            return (2, 0.0, (), 0.0)
        rank = LeverSpace.rank((f["remat"], f["steps"]))
        if self.fits(f):
            return (0, self.value(f), rank, f["memory"])
        return (1, f["memory"], rank, self.value(f))


@dataclass
class Search:
    """The candidates of one mesh: its space, and what was costed."""

    space: SearchSpace
    ctx: Context
    option: MeshOption
    seen: dict = field(default_factory=dict)
    log: list = field(default_factory=list)
    pruned: set = field(default_factory=set)
    method: str = "walk"
    index: int = 0

    def __post_init__(self):
        self.counts = class_counts(self.space, self.ctx.models)

    @property
    def data(self) -> int:
        return self.option.shape[0]

    def weight_bytes(self, choice: tuple, depth: int | None = None) -> float:
        """Bytes of weights per device under `choice` at `depth` blocks
        (default: the full model)."""
        depth = self.ctx.depth if depth is None else depth
        return sum(b * _at(n, depth) for b, n in
                   zip(self.space.shard_bytes(choice), self.counts))

    def floor(self, choice: tuple, depth: int | None = None) -> float:
        """Weights and (most of) the optimizer state per device: a floor
        under XLA's total."""
        return self.weight_bytes(choice, depth) * \
            (1 + SLOT_SHARE * self.ctx.slot_ratio)

    def hopeless(self, choice: tuple) -> bool:
        """Whether `choice` can't fit: its weights and optimizer state
        alone break the budget. Kept in `pruned`."""
        ctx = self.ctx
        if ctx.budget is None or not ctx.bound_holds:
            return False
        if choice in self.pruned or self.floor(choice) > ctx.budget:
            self.pruned.add(choice)
            return True
        return False

    def _cost(self, depth: int | None, model: Any, choice: tuple,
              levers: tuple) -> dict:
        from keras.distribution import ModelParallel

        ctx = self.ctx
        d = ModelParallel(layout_map=self.space.layout_map(choice),
                          batch_dim_name=ctx.step["batch_dim"])
        r = cost.layout_cost(model, d, ctx.step["batch_size"],
                             ctx.step["optimizer"], ctx.step["loss"],
                             ctx.step["input_shapes"],
                             max(ctx.left(), 0.01), quick=True,
                             remat=levers[0], accumulation_steps=levers[1])
        if depth is not None:
            ctx.compile_seconds[depth] = max(
                ctx.compile_seconds.get(depth, 0.0),
                float(r.get("compile_seconds", 0.0)))
        if r["need"] < self.weight_bytes(choice, depth) * (1 - 1e-6):
            ctx.bound_holds = False
        return r

    def _figures(self, costs: list[dict]) -> dict:
        ctx = self.ctx
        figs = [figures(r, ctx.topology, self.option.nodes) for r in costs]
        return figs[0] if len(figs) == 1 else \
            extrapolate(figs[0], figs[1], ctx.depth)

    def evaluate(self, choice: tuple, levers: tuple) -> dict | None:
        """The (extrapolated) figures of a candidate, costed once."""
        key = (choice, levers)
        if key in self.seen:
            return self.seen[key]
        if not isinstance(levers[0], str):
            return self._blended(choice, levers)
        ctx = self.ctx
        if ctx.out_of_time or ctx.left() <= 0:
            ctx.out_of_time = True
            return None
        start = time.monotonic()
        try:
            costs = [self._cost(d, m, choice, levers)
                     for d, m in ctx.models.items()]
        except KerasmeshError as e:
            if e.kind == kinds.TIMEOUT:
                ctx.out_of_time = True
                return None
            if e.kind != kinds.COMPILE:
                raise
            costs = None
        f = None if costs is None else self._figures(costs)
        self._keep_best(key, f, costs)
        self.seen[key] = f
        self.log.append({"choice": choice, "levers": levers, "figures": f,
                         "seconds": time.monotonic() - start})
        self._report(f)
        return f

    def _blended(self, choice: tuple, levers: tuple) -> dict | None:
        """The figures of a blended remat, between its choices' at the
        same micro-batches."""
        remat, k = levers
        more, less, n = blend_parts(remat)
        lighter = self.evaluate(choice, (less, k))
        heavier = self.evaluate(choice, (more, k))
        if lighter is None or heavier is None:
            return None
        f = between(lighter, heavier, n / len(remat))
        f["remat"] = remat
        self.seen[(choice, levers)] = f
        return f

    def _keep_best(self, key: tuple, f: dict | None,
                   costs: list | None) -> None:
        ctx = self.ctx
        if costs is None or len(costs) != 1:
            return
        best = ctx.best_cost
        if best is None or ctx.score(f) < ctx.score(best[2]):
            ctx.best_cost = ((self.index,) + key, costs[0], f)

    def _report(self, f: dict | None) -> None:
        ctx = self.ctx
        ctx.count += 1
        if ctx.fits(f):
            v = ctx.value(f)
            ctx.best = v if ctx.best is None else min(ctx.best, v)
        if ctx.progress is not None:
            ctx.progress(ctx.count, ctx.best,
                         *((f["memory"], f["traffic"]) if f else ()))

    def best_of(self, choices: list[tuple], levers: tuple
                ) -> tuple[tuple | None, tuple]:
        best, key = None, (3,)
        for c in choices:
            if self.hopeless(c):
                continue
            k = self.ctx.score(self.evaluate(c, levers))
            if k < key:
                best, key = c, k
        return best, key
