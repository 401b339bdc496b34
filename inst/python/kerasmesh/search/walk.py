"""`search_layout()`: the layout with the least traffic that fits.

Candidates are choices in a `SearchSpace` (one placement per class of
variables), costed as `candidates.py` says. The walk starts from the best
of data parallel, `start` and a tensor-parallel start
(`moves.tensor_parallel()`), and takes the first move that improves (in
the order `moves.ordered()` gives) among tied moves and moves of one
class, until none does or the time is up; candidates whose weights alone
break the budget are not compiled. A space of at most `exhaustive`
layouts is enumerated instead. The best candidates are then compiled at
full depth with XLA's default options (`result.Verifier`): only that
figure decides whether a layout fits `memory`.
"""

from __future__ import annotations

import itertools
import time
from typing import Any
from collections.abc import Callable

from ..core.errors import KerasmeshError, warn
from ..mesh.device_mesh import check_batch_dim_name, check_same_mesh
from ..core.placement import model_variables
from ..cost import layout_cost as cost
from ..cost.compare import build_model
from ..cost.deadline import timeout_error
from .builds import check_depths, check_rebuild
from .candidates import Search
from .moves import class_moves, ordered, tensor_parallel, tied_moves
from .result import Verifier, result
from .space import SearchSpace
from ..core import kinds

# The share of `timeout` the walk may use; the rest is the verification's.
WALK_SHARE = {"whole": 0.85, "reduced": 0.75}

OBJECTIVES = ("traffic", "time")


def walk(search: Search, starts: list[tuple]) -> None:
    """Hill-climb from the best start: the first improving tied move, else
    the first improving class move, until none improves or time is up."""
    current, key = search.best_of(starts)
    if current is None:
        return
    while not search.out_of_time:
        best = None
        moves = ordered(search.space, key[0] == 0, current,
                        tied_moves(search.space, current) +
                        class_moves(search.space, current))
        for c in moves:
            if search.hopeless(c):
                continue
            k = search.score(search.evaluate(c))
            if k < key:
                best, key = c, k
                break
        if best is None:
            return
        current = best


def exhaust(search: Search) -> None:
    """Cost every layout of the space (but those that can't fit)."""
    space = search.space
    options = [range(len(c.options)) if c.fixed is None else [0]
               for c in space.classes]
    for choice in itertools.product(*options):
        if not search.hopeless(tuple(choice)):
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


def _batch_axis(mesh: Any, start: Any, fixed: Any,
                batch_dim_name: Any) -> str:
    """The batch axis (`batch_dim_name`, by default the mesh's first),
    once it, `start` and `fixed` are known to be of `mesh`.

    Raises:
        KerasmeshError: kinds `mesh_mismatch`, `batch_dim_name`.
    """
    for arg, value in (("start", start), ("fixed", fixed)):
        if value is not None:
            check_same_mesh(mesh, _layout_of(value).device_mesh, arg)
    if batch_dim_name is None:
        return str(mesh.axis_names[0])
    return check_batch_dim_name(batch_dim_name, list(mesh.axis_names))


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
    models = {d: build_model(lambda d=d: model(d), timeout, spent)
              for d in depths}
    check_depths(models)
    return models


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


def check_paths_stable(model: Any, models: dict, rules: list,
                       deadline: float) -> None:
    """Warn when a builder gives its variables other paths on its next
    run (Keras numbers unnamed layers): the rules found would match
    nothing in the user's next build. Other shapes are an error
    (`builds.check_rebuild()`)."""
    depth, first = next(iter(models.items()))
    if not rules or first is model or deadline - time.monotonic() < 1:
        return
    try:
        again = build_model(model if depth is None else
                            (lambda: model(depth)),
                            deadline - time.monotonic())
    except KerasmeshError as e:
        if e.kind == kinds.TIMEOUT:
            return
        raise
    check_rebuild(first, again)
    moved = [(a, b) for a, b in zip(model_variables(first),
                                    model_variables(again))
             if a.path != b.path]
    if not moved:
        return
    a, b = moved[0]
    warn(kinds.SEARCH_UNSTABLE_PATHS,
         "The model's variables get other paths each time it is built.",
         [("x", f'The search built "{a.path}"; the next build has '
                f'"{b.path}", which the found rules don\'t match.'),
          ("i", "Name the model and its layers (`name =`) so that the "
                "rules match every build, and search again.")])


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
        KerasmeshError: kinds `memory_budget` (the smallest memory
            reached and its rules), `search_fixed`, `search_builder`,
            `mesh_mismatch`, `batch_dim_name`, `timeout`, `argument`, and
            the planner's and cost's kinds.
    """
    began, timeout = time.monotonic() - float(spent or 0), float(timeout)
    sizes = {str(a): int(s) for a, s in zip(mesh.axis_names, mesh.shape)}
    memory = device_memory() if memory == "device" else memory
    _check(objective, memory, bandwidth, flop_rate, sizes)
    step = {"batch_size": batch_size, "optimizer": optimizer or "sgd",
            "loss": loss, "input_shapes": input_shapes,
            "batch_dim": _batch_axis(mesh, start, fixed, batch_dim_name)}
    models = _models(model, blocks, timeout, time.monotonic() - began)
    space = SearchSpace(list(models.values())[-1], mesh, fixed)
    full = None if blocks is None or blocks <= 2 else int(blocks)
    share = WALK_SHARE["whole" if full is None else "reduced"]
    search = Search(models, full, space, step, memory, objective, bandwidth,
                    flop_rate, began + share * timeout, progress)
    starts, start_choice = _starts(space, start, step["batch_dim"])
    if space.size() <= exhaustive:
        search.method = "exhaustive"
        exhaust(search)
    else:
        walk(search, starts)
    if not search.log or all(f is None for f in search.seen.values()):
        raise timeout_error(timeout, "The time ran out before any layout "
                            "was costed.")
    verify = Verifier(search, model, full, began + timeout, timeout)
    found = result(search, verify, starts[0], start_choice, began)
    check_paths_stable(model, models, found["rules"], began + timeout)
    return found
