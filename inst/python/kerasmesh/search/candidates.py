"""How the search costs a candidate layout.

Each candidate is costed by XLA itself, through `cost.layout_cost()` with
its quick compiler options (the same HLO passes, so the same memory and
collectives, in about half the time):

* at the model's own depth when no reduced builder is given or the model
  has at most two blocks;
* otherwise at 1 and 2 blocks, and every figure (XLA's memory, each
  collective's bytes, FLOPs) extrapolated linearly to the full depth:
  `f(L) = f(1) + (L - 1) * (f(2) - f(1))`.

A candidate whose weights alone, at full depth, exceed the budget can't
fit (XLA's total counts every argument), so it is not compiled while a
layout that fits is known: `weight_bytes()` is that bound, and it is
checked against every compile's own figure (`bound_holds`).
"""

from __future__ import annotations

import time
from typing import Any
from collections.abc import Callable

from ..core.errors import KerasmeshError
from ..core import fits
from ..cost import layout_cost as cost
from .result import figures
from .space import SearchSpace, variable_classes
from ..core import kinds


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


def _extrapolate(f1: dict, f2: dict, depth: int) -> dict:
    """Figures at `depth` blocks from those at 1 and 2 blocks."""
    def line(a: float, b: float) -> float:
        return a + (depth - 1) * (b - a)

    axes = set(f1["by_axes"]) | set(f2["by_axes"])
    by_axes = {a: line(f1["by_axes"].get(a, 0.0), f2["by_axes"].get(a, 0.0))
               for a in axes}
    return {"memory": line(f1["memory"], f2["memory"]),
            "traffic": sum(by_axes.values()), "by_axes": by_axes,
            "flops": line(f1["flops"], f2["flops"])}


def step_time(figures: dict, bandwidth: dict | None,
              flop_rate: float | None) -> float:
    """Seconds per step: each collective's bytes over the slowest of its
    axes' bandwidths (bytes/s), plus FLOPs over `flop_rate`."""
    seconds = 0.0
    for axes, b in figures["by_axes"].items():
        seconds += b / min(bandwidth[a] for a in axes.split("+"))
    return seconds + figures["flops"] / flop_rate


class Search:
    """One search: the models, the space, the costed candidates."""

    def __init__(self, models: dict, depth: int | None, space: SearchSpace,
                 step: dict, budget: float | None, objective: str,
                 bandwidth: dict | None, flop_rate: float | None,
                 deadline: float, progress: Callable | None):
        self.models, self.depth, self.space = models, depth, space
        self.step, self.budget, self.objective = step, budget, objective
        self.bandwidth, self.flop_rate = bandwidth, flop_rate
        self.deadline, self.progress = deadline, progress
        self.seen: dict[tuple, dict | None] = {}
        self.log: list[dict] = []
        self.out_of_time = False
        self.method = "walk"
        self.counts = class_counts(space, models)
        self.bound_holds = True
        self.pruned: set[tuple] = set()
        self.fits = False
        # (choice, cost) of the best candidate costed at full depth: the
        # result's cost if the time runs out before it is verified.
        self.best_cost: tuple[tuple, dict] | None = None

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def value(self, f: dict) -> float:
        if self.objective == "time":
            return step_time(f, self.bandwidth, self.flop_rate)
        return f["traffic"]

    def score(self, f: dict | None) -> tuple:
        """Lower is better: fitting layouts by the objective, then the
        others by memory."""
        if f is None:
            return (2, 0.0, 0.0)
        if self.budget is None or fits.fits(f["memory"], self.budget):
            return (0, self.value(f), f["memory"])
        return (1, f["memory"], self.value(f))

    def weight_bytes(self, choice: tuple, depth: int | None = None) -> float:
        """Bytes of weights per device under `choice` at `depth` blocks
        (default: the full model): a floor under XLA's total."""
        depth = self.depth if depth is None else depth
        return sum(b * _at(n, depth) for b, n in
                   zip(self.space.shard_bytes(choice), self.counts))

    def hopeless(self, choice: tuple) -> bool:
        """Whether `choice` can't beat a layout known to fit: its weights
        alone break the budget. Kept in `pruned`."""
        if choice in self.seen or self.budget is None or \
                not (self.fits and self.bound_holds):
            return False
        if choice in self.pruned or self.weight_bytes(choice) > self.budget:
            self.pruned.add(choice)
            return True
        return False

    def _cost(self, depth: int | None, model: Any, choice: tuple) -> dict:
        from keras.distribution import ModelParallel

        d = ModelParallel(layout_map=self.space.layout_map(choice),
                          batch_dim_name=self.step["batch_dim"])
        r = cost.layout_cost(model, d, self.step["batch_size"],
                             self.step["optimizer"], self.step["loss"],
                             self.step["input_shapes"],
                             max(self.left(), 0.01), quick=True)
        floor = self.weight_bytes(choice, depth)
        if r["need"] < floor * (1 - 1e-6):
            self.bound_holds = False
        return r

    def evaluate(self, choice: tuple) -> dict | None:
        """The (extrapolated) figures of a choice, costed once."""
        if choice in self.seen:
            return self.seen[choice]
        if self.out_of_time or self.left() <= 0:
            self.out_of_time = True
            return None
        start = time.monotonic()
        try:
            costs = [self._cost(d, m, choice) for d, m in self.models.items()]
        except KerasmeshError as e:
            if e.kind == kinds.TIMEOUT:
                self.out_of_time = True
                return None
            if e.kind != kinds.COMPILE:
                raise
            costs = None
        figs = None if costs is None else [figures(r) for r in costs]
        f = None if figs is None else figs[0] if len(figs) == 1 else \
            _extrapolate(figs[0], figs[1], self.depth)
        self._keep_best(choice, f, costs)
        self.seen[choice] = f
        self.fits = self.fits or self.score(f)[0] == 0
        self.log.append({"choice": choice, "figures": f,
                         "seconds": time.monotonic() - start})
        if self.progress is not None:
            best = min(self.score(g) for g in self.seen.values())
            self.progress(len(self.log), best[1] if best[0] == 0 else None,
                          *((f["memory"], f["traffic"]) if f else ()))
        return f

    def _keep_best(self, choice: tuple, f: dict | None,
                   costs: list | None) -> None:
        if costs is None or len(costs) != 1:
            return
        best = self.best_cost
        if best is None or self.score(f) < self.score(self.seen[best[0]]):
            self.best_cost = (choice, costs[0])

    def best_of(self, choices: list[tuple]) -> tuple[tuple | None, tuple]:
        best, key = None, (3,)
        for c in choices:
            k = self.score(self.evaluate(c))
            if k < key:
                best, key = c, k
        return best, key


