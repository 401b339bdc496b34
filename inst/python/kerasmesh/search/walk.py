"""`search_layout()`: the layout with the least traffic that fits.

Candidates are choices in a `SearchSpace` (one placement per class of
variables). Each is costed by XLA itself, through `cost.layout_cost()`:

* at the model's own depth when no reduced builder is given or the model
  has at most two blocks;
* otherwise at 1 and 2 blocks, and every figure (XLA's memory, each
  collective's bytes, FLOPs) extrapolated linearly to the full depth:
  `f(L) = f(1) + (L - 1) * (f(2) - f(1))`.

The walk starts from the best of data parallel, `start` and a
tensor-parallel start (`tensor_parallel()`), and takes the first move that
improves (in the order `_ordered()` gives) among *tied* moves (every
dimension of one size, in every class, onto one axis or unsplit: heads, MLP
columns or the vocabulary at once) and moves of one class, until none does
or the time is up. A space of at most `exhaustive`
layouts is enumerated instead. The best candidates are then compiled at
full depth (the verification): only XLA's figure for the full model
decides whether a layout fits `memory`.
"""

from __future__ import annotations

import itertools
import time
from typing import Any
from collections.abc import Callable

from ..core.errors import KerasmeshError
from ..cost import layout_cost as cost
from ..cost.compare import build_model
from ..cost.deadline import timeout_error
from .result import Verifier, figures, result
from .space import SearchSpace
from ..core import kinds

OBJECTIVES = ("traffic", "time")


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
        self.costs: dict[tuple, dict] = {}
        self.log: list[dict] = []
        self.out_of_time = False
        self.method = "walk"

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
        if self.budget is None or f["memory"] <= self.budget:
            return (0, self.value(f), f["memory"])
        return (1, f["memory"], self.value(f))

    def _cost(self, model: Any, choice: tuple) -> dict:
        from keras.distribution import ModelParallel

        d = ModelParallel(layout_map=self.space.layout_map(choice),
                          batch_dim_name=self.step["batch_dim"])
        return cost.layout_cost(model, d, self.step["batch_size"],
                                self.step["optimizer"], self.step["loss"],
                                self.step["input_shapes"],
                                max(self.left(), 0.01))

    def evaluate(self, choice: tuple) -> dict | None:
        """The (extrapolated) figures of a choice, costed once."""
        if choice in self.seen:
            return self.seen[choice]
        if self.out_of_time or self.left() <= 0:
            self.out_of_time = True
            return None
        start = time.monotonic()
        try:
            results = [self._cost(m, choice) for m in self.models.values()]
            figs = [figures(r) for r in results]
            if len(results) == 1:
                self.costs[choice] = results[0]
        except KerasmeshError as e:
            if e.kind == kinds.TIMEOUT:
                self.out_of_time = True
                return None
            if e.kind != kinds.COMPILE:
                raise
            figs = None
        f = None if figs is None else figs[0] if len(figs) == 1 else \
            _extrapolate(figs[0], figs[1], self.depth)
        self.seen[choice] = f
        self.log.append({"choice": choice, "figures": f,
                         "seconds": time.monotonic() - start})
        if self.progress is not None:
            best = min(self.score(g) for g in self.seen.values())
            self.progress(len(self.log), best[1] if best[0] == 0 else None,
                          *((f["memory"], f["traffic"]) if f else ()))
        return f

    def best_of(self, choices: list[tuple]) -> tuple[tuple | None, tuple]:
        best, key = None, (3,)
        for c in choices:
            k = self.score(self.evaluate(c))
            if k < key:
                best, key = c, k
        return best, key


# --------------------------------------------------------------------------
# Moves


def _tied(space: SearchSpace, choice: tuple, size: int, axis: Any) -> tuple:
    """Every free class's dimensions of `size` onto `axis` (None: unsplit),
    the axis taken off the class's other dimensions; a class keeps its
    placement where the result is not one of its options."""
    new = list(choice)
    for i in space.free:
        c = space.classes[i]
        dims = [d for d, s in enumerate(c.shape) if s == size]
        if not dims:
            continue
        axes = [None if a == axis else a for a in c.options[choice[i]]]
        # A square kernel: only its last dimension of the size (columns).
        axes[dims[-1]] = axis
        if tuple(axes) in c.options:
            new[i] = c.options.index(tuple(axes))
    return tuple(new)


def tied_moves(space: SearchSpace, choice: tuple) -> list[tuple]:
    """Choices one tied move from `choice`, largest dimensions first."""
    sizes = sorted({s for i in space.free for s in space.classes[i].shape
                    if s > 1}, reverse=True)
    out = []
    for size in sizes:
        for axis in [None] + list(space.sizes):
            new = _tied(space, choice, size, axis)
            if new != choice and new not in out:
                out.append(new)
    return out


def class_moves(space: SearchSpace, choice: tuple) -> list[tuple]:
    """Choices that differ from `choice` in one class, largest first."""
    out = []
    for i in space.free:
        for k in range(len(space.classes[i].options)):
            if k != choice[i]:
                out.append(choice[:i] + (k,) + choice[i + 1:])
    return out


def tensor_parallel(space: SearchSpace, choice: tuple, axis: str) -> tuple:
    """A Megatron-like start: the dimension size most classes share (the
    residual width) stays whole; every other size goes on `axis`, larger
    sizes first, so that within a variable the smaller one (heads rather
    than the head width) wins."""
    counts: dict[int, int] = {}
    for i in space.free:
        for s in set(space.classes[i].shape):
            counts[s] = counts.get(s, 0) + 1
    if not counts:
        return choice
    width = max(counts, key=lambda s: (counts[s], s))
    for size in sorted((s for s in counts if s not in (1, width)),
                       reverse=True):
        choice = _tied(space, choice, size, axis)
    return choice


def split_bytes(space: SearchSpace, choice: tuple) -> float:
    """Bytes of weights that a choice takes off each device."""
    total = 0.0
    for c, axes in zip(space.classes, space.axes(choice)):
        ways = 1
        for a in axes:
            ways *= space.sizes.get(a, 1) if a is not None else 1
        total += c.bytes * (1 - 1 / ways)
    return total


def _ordered(search: Search, fits: bool, current: tuple,
             moves: list[tuple]) -> list[tuple]:
    """Moves to try first. While the current layout fits: those that
    split less, the smallest change first (they cost memory and usually
    save traffic); otherwise those that split more, the largest saving
    first. Among equals, tied moves before class moves."""
    now = split_bytes(search.space, current)

    def key(c: tuple) -> tuple:
        delta = split_bytes(search.space, c) - now
        if fits:
            return (delta >= 0, abs(delta))
        return (delta <= 0, -delta)

    return sorted(moves, key=key)


def walk(search: Search, starts: list[tuple]) -> None:
    """Hill-climb from the best start: the first improving tied move, else
    the first improving class move, until none improves or time is up."""
    current, key = search.best_of(starts)
    if current is None:
        return
    while not search.out_of_time:
        best = None
        moves = _ordered(search, key[0] == 0, current,
                         tied_moves(search.space, current) +
                         class_moves(search.space, current))
        for c in moves:
            k = search.score(search.evaluate(c))
            if k < key:
                best, key = c, k
                break
        if best is None:
            return
        current = best


def exhaust(search: Search) -> None:
    """Cost every layout of the space."""
    space = search.space
    options = [range(len(c.options)) if c.fixed is None else [0]
               for c in space.classes]
    for choice in itertools.product(*options):
        search.evaluate(tuple(choice))
        if search.out_of_time:
            return


# --------------------------------------------------------------------------
# The call


def _check(objective: Any, memory: Any, bandwidth: Any, flop_rate: Any,
           sizes: dict) -> None:
    if objective not in OBJECTIVES:
        raise KerasmeshError(kinds.ARGUMENT, '`objective` must be "traffic" or '
                             '"time".', received=objective)
    if memory is not None and not (isinstance(memory, (int, float)) and
                                   memory > 0):
        raise KerasmeshError(kinds.ARGUMENT, "`memory` must be a positive "
                             "number of bytes.", received=memory)
    if objective != "time":
        return
    if not isinstance(bandwidth, dict) or set(bandwidth) != set(sizes) or \
            not all(isinstance(b, (int, float)) and b > 0
                    for b in bandwidth.values()):
        raise KerasmeshError(
            kinds.ARGUMENT, "`bandwidth` must give bytes per second for each "
            "mesh axis.", received=bandwidth,
            i=f"The mesh's axes are {', '.join(sizes)}.")
    if not (isinstance(flop_rate, (int, float)) and flop_rate > 0):
        raise KerasmeshError(kinds.ARGUMENT, "`flop_rate` must be a positive "
                             "number of FLOPs per second.", received=flop_rate)


def _layout_of(start: Any) -> Any:
    """The LayoutMap of a LayoutMap or a distribution."""
    from keras.distribution import LayoutMap

    return start if isinstance(start, LayoutMap) else \
        cost.distribution_layout(start)[0]


def device_memory() -> float | None:
    """The smallest device memory limit JAX reports, or None (CPUs)."""
    import jax

    limits = []
    for d in jax.devices():
        stats = d.memory_stats() if hasattr(d, "memory_stats") else None
        if stats and stats.get("bytes_limit"):
            limits.append(float(stats["bytes_limit"]))
    return min(limits) if limits else None


def _models(model: Any, blocks: int | None, timeout: float,
            spent: float) -> dict:
    """The models costed during the search, by depth."""
    if blocks is None:
        return {None: build_model(model, timeout, spent)}
    depths = [int(blocks)] if blocks <= 2 else [1, 2]
    return {d: build_model(lambda d=d: model(d), timeout, spent)
            for d in depths}


def _starts(space: SearchSpace, start: Any, batch_dim: str
            ) -> tuple[list[tuple], tuple | None]:
    """Data parallel, `start`'s choice (also returned), tensor parallel."""
    starts = [tuple([0] * len(space.classes))]
    start_choice = None
    if start is not None:
        start_choice = space.start_choice(_layout_of(start))
        starts.append(start_choice)
    model_axis = [a for a in space.sizes if a != batch_dim]
    if model_axis:
        starts.append(tensor_parallel(space, starts[0], model_axis[-1]))
    return starts, start_choice


def search_layout(model: Any, mesh: Any, batch_size: Any, optimizer: Any = None,
                  loss: Any = None, input_shapes: dict | None = None,
                  memory: float | None = None, start: Any = None,
                  fixed: Any = None, objective: str = "traffic",
                  bandwidth: dict | None = None, flop_rate: Any = None,
                  blocks: int | None = None, batch_dim_name: str | None = None,
                  timeout: float = 600, spent: float = 0,
                  exhaustive: int = 64, progress: Callable | None = None
                  ) -> dict:
    """Search the layout with the least traffic (or time) that fits.

    Args:
        model: a built model or a builder of no arguments; or, with
            `blocks`, a builder of one argument, the number of blocks.
        mesh: a Keras DeviceMesh.
        memory: bytes per device (XLA's total), "device" or None.
        start: a LayoutMap or distribution to start from, or None.
        fixed: a LayoutMap of rules never changed, or None.
        objective: "traffic" or "time" (with `bandwidth`, bytes/s per
            mesh axis, and `flop_rate`, FLOPs/s: see `step_time()`).
        blocks: the model's depth when `model` builds any depth.
        exhaustive: enumerate spaces of at most this many layouts.
        progress: called with (layouts costed, best objective or None).
        Others as for `cost.layout_cost()`.

    Returns:
        Plain values: see `search_result.result()`.

    Raises:
        KerasmeshError: kinds `memory_budget` (nothing fits: the smallest
            memory reached and its rules), `search_fixed`, `timeout`,
            `argument`, and the planner's and cost's kinds.
    """
    began = time.monotonic() - float(spent or 0)
    timeout = float(timeout)
    sizes = {str(a): int(s) for a, s in zip(mesh.axis_names, mesh.shape)}
    memory = device_memory() if memory == "device" else memory
    _check(objective, memory, bandwidth, flop_rate, sizes)
    step = {"batch_size": batch_size, "optimizer": optimizer or "sgd",
            "loss": loss, "input_shapes": input_shapes,
            "batch_dim": batch_dim_name or mesh.axis_names[0]}
    models = _models(model, blocks, timeout, time.monotonic() - began)
    space = SearchSpace(list(models.values())[-1], mesh, fixed)
    full = None if blocks is None or blocks <= 2 else int(blocks)
    # A reduced search leaves a quarter of the time for the full compiles.
    ends = began + (timeout if full is None else 0.75 * timeout)
    search = Search(models, full, space, step, memory, objective, bandwidth,
                    flop_rate, ends, progress)
    starts, start_choice = _starts(space, start, step["batch_dim"])
    if space.size() <= exhaustive:
        search.method = "exhaustive"
        exhaust(search)
    else:
        walk(search, starts)
    if not search.log or all(f is None for f in search.seen.values()):
        raise timeout_error(timeout, "The time ran out before any layout "
                            "was costed.")
    verify = Verifier(search, model, full, began + timeout)
    return result(search, verify, starts[0], start_choice, began)
