"""`search_layout()`: the configuration that trains fastest and fits.

On a mesh, the search chooses the layout map and the levers (remat,
micro-batches); on a topology, the mesh too: its shape (`meshes.py`) and
its device order. The rounds are `configs.run()`'s, each candidate costed
as `candidates.py` says; the best candidates are then compiled at full
depth (`verify.Verifier`): only that figure decides whether a
configuration fits `memory`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..core.errors import KerasmeshError, warn
from ..core import kinds
from ..core.placement import model_variables
from ..cost import layout_cost as cost
from ..cost.compare import build_model
from ..cost.deadline import timeout_error
from ..mesh.device_mesh import check_batch_dim_name, check_same_mesh
from ..mesh.devices import list_devices
from ..plan import planner
from ..topology.machine import Topology, as_topology
from .builds import check_depths, check_rebuild
from .candidates import Context, Search
from .configs import run, structured_starts
from .levers import lever_space
from .meshes import AXES, given_mesh, mesh_options, rebind
from .result import result
from .space import SearchSpace
from .verify import Verifier

# The share of `timeout` the rounds may use; the rest is the verification's
# (at reduced depth: a few full-depth compiles, a blend among them).
WALK_SHARE = {"whole": 0.85, "reduced": 0.6}

OBJECTIVES = ("traffic", "time")


def _check(objective: Any, memory: Any, bandwidth: Any, flop_rate: Any,
           sizes: dict | None) -> None:
    if objective not in OBJECTIVES:
        raise KerasmeshError(kinds.ARGUMENT, '`objective` must be "traffic" or '
                             '"time".', received=objective)
    if memory is not None and not (isinstance(memory, (int, float)) and
                                   memory > 0):
        raise KerasmeshError(kinds.ARGUMENT, "`memory` must be a positive "
                             "number of bytes.", received=memory)
    if objective != "time" or sizes is None:
        return
    if not isinstance(bandwidth, dict) or set(bandwidth) != set(sizes) or \
            not all(isinstance(b, (int, float)) and b > 0
                    for b in bandwidth.values()):
        raise KerasmeshError(
            kinds.ARGUMENT, "`bandwidth` must give bytes per second for each "
            "mesh axis.", received=bandwidth,
            i=f"The mesh's axes are {', '.join(sizes)}; or search a "
              "`device_topology()`, whose links give the time.")
    if not (isinstance(flop_rate, (int, float)) and flop_rate > 0):
        raise KerasmeshError(kinds.ARGUMENT, "`flop_rate` must be a positive "
                             "number of FLOPs per second.", received=flop_rate)


def _layout_of(start: Any) -> Any:
    """The LayoutMap of a LayoutMap or a distribution."""
    from keras.distribution import LayoutMap

    if start is None:
        return None
    return start if isinstance(start, LayoutMap) else \
        cost.distribution_layout(start)[0]


def _batch_axis(mesh: Any, start: Any, fixed: Any,
                batch_dim_name: Any) -> str:
    """The batch axis of a given mesh (`batch_dim_name`, by default its
    first), once `start` and `fixed` are known to be of `mesh`; "data"
    on a topology.

    Raises:
        KerasmeshError: kinds `mesh_mismatch`, `batch_dim_name`.
    """
    if mesh is None:
        if batch_dim_name not in (None, AXES[0]):
            raise KerasmeshError(
                kinds.BATCH_DIM_NAME, "On a topology, `batch_dim_name` "
                f'must be "{AXES[0]}".', received=batch_dim_name,
                i=f'Every mesh searched on a topology has the axes '
                  f'"{AXES[0]}" (the batch axis) and "{AXES[1]}".')
        return AXES[0]
    for arg, value in (("start", start), ("fixed", fixed)):
        if value is not None:
            check_same_mesh(mesh, value.device_mesh, arg)
    if batch_dim_name is None:
        return str(mesh.axis_names[0])
    return check_batch_dim_name(batch_dim_name, list(mesh.axis_names))


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


def slot_ratio(model: Any, mesh: Any, optimizer: Any, batch_dim: str
               ) -> float:
    """The optimizer's bytes over the weights' (replicated), from the
    plan: what `Search.floor()` adds to a layout's weights."""
    import keras

    planned, _ = planner.plan_placement(
        model, keras.distribution.LayoutMap(mesh), None, optimizer,
        batch_dim)
    s = planned["summary"]
    return s["device_optimizer"] / s["device_weights"] \
        if s["device_weights"] else 0.0


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


def _on(layout_map: Any, mesh: Any) -> Any:
    """`layout_map` on `mesh` (its rules copied to a mesh of the search's
    own), or None."""
    if layout_map is None or layout_map.device_mesh is mesh:
        return layout_map
    return rebind(layout_map, mesh)


def _batch_error(batch_size: int, option: Any, ctx: Context
                 ) -> KerasmeshError:
    ways = option.shape[0]
    return KerasmeshError(
        kinds.BATCH_SIZE,
        f"`batch_size` ({batch_size}) must be a multiple of the batch axis "
        f'"{ctx.step["batch_dim"]}" ({ways}).',
        x=f"{batch_size} samples don't split evenly over {ways} devices.",
        i=f"Use a multiple of {ways}, such as {ways * max(1, batch_size // ways)}.")


def _searches(ctx: Context, model: Any, options: list, start: Any,
              fixed: Any) -> tuple[list[Search], list[list[tuple]], Any]:
    """One Search per mesh whose levers and pinned rules work, with its
    starts, and the start's choice on the first.

    Raises:
        KerasmeshError: the first mesh's `search_fixed` error when pinned
            rules place no mesh; kind `accumulation_steps` when no mesh
            has a micro-batch its data axis divides.
    """
    searches, starts, first_error, start_choice = [], [], None, None
    for option in options:
        if ctx.levers.base(option.shape[0]) is None:
            if len(options) == 1 and ctx.levers.batch_size % option.shape[0]:
                raise _batch_error(ctx.levers.batch_size, option, ctx)
            continue
        try:
            space = SearchSpace(model, option.mesh, _on(fixed, option.mesh),
                                ctx.step["batch_dim"])
        except KerasmeshError as e:
            if e.kind != kinds.SEARCH_FIXED or len(options) == 1:
                raise
            first_error = first_error or e
            continue
        s = Search(space, ctx, option, index=len(searches))
        choice = None if start is None else space.start_choice(
            _on(start, option.mesh))
        start_choice = choice if not searches else start_choice
        searches.append(s)
        starts.append(structured_starts(s, choice, ctx.topology is None))
    if not searches:
        if first_error is not None:
            raise first_error
        b = ctx.levers.batch_size
        raise KerasmeshError(
            kinds.ACCUMULATION_STEPS,
            f"No micro-batch of `batch_size` ({b}) splits evenly over the "
            "data axis.",
            x=f"`accumulation_steps` {list(ctx.levers.steps or [])} leave "
              "micro-batches that no data axis divides.",
            i="Allow other `accumulation_steps`, or use a `batch_size` "
              "that is a multiple of the data axis.")
    return searches, starts, start_choice


def search_layout(model: Any, mesh: Any, batch_size: Any, optimizer: Any = None,
                  loss: Any = None, input_shapes: dict | None = None,
                  memory: Any = None, start: Any = None,
                  fixed: Any = None, objective: str | None = None,
                  bandwidth: dict | None = None, flop_rate: Any = None,
                  blocks: int | None = None, batch_dim_name: str | None = None,
                  timeout: float = 600, spent: float = 0,
                  exhaustive: int = 64, progress: Callable | None = None,
                  remat: Any = None, accumulation_steps: Any = None,
                  topology: Any = None) -> dict:
    """Search the configuration with the least time (or traffic) that fits.

    Args:
        model: a built model or a builder (with `blocks`, of one argument).
        mesh: a Keras DeviceMesh (its shape fixed), or None with a
            `topology` (R's plain values or a `Topology`): the search
            chooses the mesh.
        memory: bytes per device, "device" (the topology's, or JAX's
            smallest limit) or None; objective: "traffic", "time" or None
            ("time" with a topology); remat, accumulation_steps: the
            levers searched, None for all (`levers.lever_space()`).
        Others as R's `search_layout()` and `cost.layout_cost()` say.

    Returns:
        Plain values: see `result.result()`.

    Raises:
        KerasmeshError: kinds `search_no_fit`, `topology_devices`,
            `remat_blocks`, `accumulation_steps`, `batch_size`,
            `search_fixed`, `search_builder`, `mesh_mismatch`,
            `batch_dim_name`, `timeout`, `argument`, and the cost's.
    """
    began, timeout = time.monotonic() - float(spent or 0), float(timeout)
    machine, objective, memory = _machine(mesh, topology, objective,
                                          memory, bandwidth, flop_rate)
    start, fixed = _layout_of(start), _layout_of(fixed)
    step = {"batch_size": int(batch_size), "optimizer": optimizer,
            "loss": loss, "input_shapes": input_shapes,
            "batch_dim": _batch_axis(mesh, start, fixed, batch_dim_name)}
    options = [given_mesh(mesh, machine, step["batch_dim"])] \
        if mesh is not None else \
        mesh_options(machine, list_devices(), step["batch_size"])
    models = _models(model, blocks, timeout, time.monotonic() - began)
    full = None if blocks is None or blocks <= 2 else int(blocks)
    share = WALK_SHARE["whole" if full is None else "reduced"]
    ctx = _context(models, full, step, memory, objective, (began + share *
                   timeout, began + timeout), (remat, accumulation_steps),
                   machine, bandwidth, flop_rate, progress, options[0])
    searches, starts, start_choice = _searches(
        ctx, list(models.values())[-1], options, start, fixed)
    run(ctx, searches, starts, exhaustive)
    if ctx.count == 0 and not any(s.pruned for s in searches):
        raise timeout_error(timeout, "The time ran out before any layout "
                            "was costed.")
    verify = Verifier(searches, model, full, began + timeout, timeout)
    dp = tuple([0] * len(searches[0].space.classes)) \
        if machine is None or searches[0].option.shape[1] == 1 else None
    found = result(searches, verify, dp, start_choice, began)
    check_paths_stable(model, models, found["rules"], began + timeout)
    return found


def _machine(mesh: Any, topology: Any, objective: Any, memory: Any,
             bandwidth: Any, flop_rate: Any) -> tuple:
    """(the Topology or None, the objective, the budget), checked."""
    machine = None if topology is None else as_topology(topology)
    objective = objective or ("time" if machine is not None else "traffic")
    if memory == "device":
        memory = machine.memory if machine is not None else device_memory()
    sizes = None if mesh is None or machine is not None else \
        {str(a): int(s) for a, s in zip(mesh.axis_names, mesh.shape)}
    _check(objective, memory, bandwidth, flop_rate, sizes)
    return machine, objective, memory


def _context(models: dict, full: int | None, step: dict, memory: Any,
             objective: str, deadline: tuple, levers: tuple,
             machine: Topology | None, bandwidth: Any, flop_rate: Any,
             progress: Callable | None, first: Any) -> Context:
    """The search's shared context: the levers allowed (checked on the
    deepest model searched), the optimizer's bytes per weight byte, and
    `deadline`: (when candidates stop, when the search ends)."""
    last = list(models.values())[-1]
    return Context(models, full, step, memory, objective, deadline[0],
                   lever_space(last, levers[0], levers[1],
                               step["batch_size"], full),
                   machine, bandwidth, flop_rate, progress,
                   slot_ratio(last, first.mesh, step["optimizer"],
                              step["batch_dim"]), end=deadline[1])
