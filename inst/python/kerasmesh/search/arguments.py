"""A search's arguments, checked, as its settings and its space.

`search_settings()` turns `search_layout()`'s arguments into `Settings`
(what the search is asked, apart from anything it finds) and a `Space`
(the meshes, their layout spaces and the layouts profiled on each:
`pipeline.py`, step 1), raising the classed error of the first argument
that can't be searched.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..core.errors import KerasmeshError
from ..core.text import listing, plural
from ..core import kinds
from ..cost import layout_cost as cost
from ..cost.compare import build_model
from ..cost.deadline import SEARCHING
from ..mesh.device_mesh import check_batch_dim_name, check_same_mesh
from ..mesh.devices import list_devices
from ..plan import planner
from ..topology.machine import Topology, as_topology
from .builds import check_depths
from .families import Floor, layouts
from .levers import LeverSpace, lever_space
from .meshes import AXES, MeshOption, given_mesh, mesh_options, rebind_to
from .space import SearchSpace
from .tuning import PROFILE_SHARE

OBJECTIVES = ("traffic", "time")


@dataclass(frozen=True)
class Step:
    """The training step searched: its batch and what it optimizes."""

    batch_size: int
    optimizer: Any
    loss: Any
    input_shapes: dict | None
    batch_dim: str


@dataclass(frozen=True)
class Settings:
    """What a search is asked.

    Attributes:
        model: the builder (or built model) the user gave.
        models: the models profiled, by depth (1 and 2 blocks, or None:
            the model itself).
        blocks: the full model's blocks, or None (the model searched).
        step: the training step.
        budget: bytes per device, or None.
        objective: "time" or "traffic".
        machine: the topology a step is compiled and timed for, or None.
        timing: the topology the time is modeled on: `machine`, or a
            machine of the user's `bandwidth` and `flop_rate` on a mesh.
        levers: the levers allowed.
        slot_ratio: the optimizer's bytes per weight byte.
        profile_end, end: monotonic seconds when profiling, and the
            search, must end; timeout: the user's.
        cache_dir: where profile figures are kept, or None.
    """

    model: Any
    models: dict
    blocks: int | None
    step: Step
    budget: float | None
    objective: str
    machine: Topology | None
    timing: Topology | None
    levers: LeverSpace
    slot_ratio: float
    profile_end: float
    end: float
    timeout: float
    cache_dir: str | None

    def left(self, until: float | None = None) -> float:
        return (self.end if until is None else until) - time.monotonic()

    def fits(self, memory: float | None) -> bool:
        return memory is not None and (self.budget is None or
                                       memory <= self.budget)


@dataclass
class MeshLayouts:
    """One mesh of the search: its option, space, floor and layouts."""

    option: MeshOption
    space: SearchSpace
    floor: Floor
    layouts: list[tuple[str, tuple]]
    start: tuple | None = None

    def orders(self) -> dict[str | None, list[int]]:
        """{device order: node of each mesh position}: the topology's
        orders, or one node for a mesh alone (order None)."""
        if self.option.nodes:
            return dict(self.option.nodes)
        n = 1
        for s in self.option.shape:
            n *= int(s)
        return {None: [0] * n}


@dataclass
class Space:
    """The meshes searched, in order, each with its layouts."""

    meshes: list[MeshLayouts]


def _check(objective: Any, memory: Any, bandwidth: Any, flop_rate: Any,
           sizes: dict | None) -> None:
    if objective not in OBJECTIVES:
        raise KerasmeshError(kinds.ARGUMENT, '`objective` must be "traffic" '
                             'or "time".', received=objective)
    if memory is not None and (isinstance(memory, bool) or not (
            isinstance(memory, (int, float)) and memory > 0)):
        raise KerasmeshError(kinds.ARGUMENT, "`memory` must be a positive "
                             "number of bytes.", received=memory)
    if objective != "time" or sizes is None:
        return
    if not isinstance(bandwidth, dict) or set(bandwidth) != set(sizes) or \
            not all(isinstance(b, (int, float)) and b > 0
                    for b in bandwidth.values()):
        way_out = f"The mesh's axes are {', '.join(sizes)}; or search a " \
            "`device_topology()`, whose links give the time."
        what = "`bandwidth` must give bytes per second for each mesh axis."
        if not isinstance(bandwidth, dict):
            raise KerasmeshError(kinds.ARGUMENT, what, received=bandwidth,
                                 i=way_out)
        unknown = [a for a in bandwidth if a not in sizes]
        missing = [a for a in sizes if a not in bandwidth]
        if unknown or missing:
            found = []
            if unknown:
                verb = "is no axis" if len(unknown) == 1 else "are no axes"
                found.append(f"{listing(unknown)} {verb} of the mesh")
            if missing:
                verb = "has" if len(missing) == 1 else "have"
                found.append(f"{listing(missing)} {verb} no figure")
            raise KerasmeshError(kinds.ARGUMENT, what,
                                 x="; ".join(found) + ".", i=way_out)
        given = ", ".join(
            f"{axis} = {value:g}" if isinstance(value, (int, float)) and
            not isinstance(value, bool) else f"{axis} = {value!r}"
            for axis, value in bandwidth.items())
        raise KerasmeshError(kinds.ARGUMENT, what,
                             x=f"Received {given}.", i=way_out)
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
    """The batch axis: of a given mesh (`batch_dim_name`, by default its
    first), "data" on a topology."""
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


def timing_machine(mesh: Any, bandwidth: dict, flop_rate: float) -> Topology:
    """The machine of a mesh-only time objective: one node of the mesh's
    devices at `flop_rate` FLOP/s, each mesh axis's collectives at its
    `bandwidth`, nothing else counted."""
    n = 1
    for s in mesh.shape:
        n *= int(s)
    return Topology(nodes=1, devices_per_node=n, memory=1e300,
                    peak_flops={"*": float(flop_rate)},
                    intra_node_bandwidth=min(bandwidth.values()),
                    efficiency=1.0, attention_efficiency=1.0,
                    axis_bandwidth=dict(bandwidth), name="mesh")


def slot_ratio(model: Any, mesh: Any, optimizer: Any, batch_dim: str
               ) -> float:
    """The optimizer's bytes over the weights' (replicated), from the
    plan: what a floor adds to a layout's weights."""
    import keras

    planned, _ = planner.plan_placement(
        model, keras.distribution.LayoutMap(mesh), None, optimizer,
        batch_dim)
    s = planned["summary"]
    return s["device_optimizer"] / s["device_weights"] \
        if s["device_weights"] else 0.0


def _models(model: Any, blocks: int | None, timeout: float,
            spent: float) -> dict:
    """The models profiled, by depth."""
    if blocks is None:
        return {None: build_model(model, timeout, spent, SEARCHING)}
    depths = [int(blocks)] if blocks <= 2 else [1, 2]
    models = {d: build_model(lambda d=d: model(d), timeout, spent,
                             SEARCHING)
              for d in depths}
    check_depths(models)
    return models


def _on(layout_map: Any, mesh: Any) -> Any:
    """`layout_map` on `mesh` (its rules on the search's own mesh)."""
    if layout_map is None or layout_map.device_mesh is mesh:
        return layout_map
    return rebind_to(layout_map, mesh)


def _batch_error(batch_size: int, option: MeshOption,
                 batch_dim: str) -> KerasmeshError:
    ways = option.shape[0]
    return KerasmeshError(
        kinds.BATCH_SIZE,
        f"`batch_size` ({batch_size}) must be a multiple of the batch axis "
        f'"{batch_dim}" ({ways}).',
        x=f"A batch of {plural(batch_size, 'sample')} can't be split "
          f"evenly over {ways} devices.",
        i=f"Use a multiple of {ways}, such as "
          f"{ways * max(1, batch_size // ways)}.")


def _mesh_layouts(settings: Settings, options: list[MeshOption],
                  start: Any, fixed: Any) -> Space:
    """Each mesh whose levers and pinned rules work, with its layouts.

    Raises:
        KerasmeshError: the first mesh's `search_fixed` error when pinned
            rules place no mesh; kind `accumulation_steps` when no mesh
            has a micro-batch its data axis divides.
    """
    models = list(settings.models.values())
    first = models[0] if len(models) > 1 else None
    meshes, first_error = [], None
    batch = settings.step.batch_size
    for option in options:
        if settings.levers.base(option.shape[0]) is None:
            if len(options) == 1 and batch % option.shape[0]:
                raise _batch_error(batch, option, settings.step.batch_dim)
            continue
        try:
            space = SearchSpace(models[-1], option.mesh,
                                _on(fixed, option.mesh),
                                settings.step.batch_dim)
        except KerasmeshError as e:
            if e.kind != kinds.SEARCH_FIXED or len(options) == 1:
                raise
            first_error = first_error or e
            continue
        choice = None if start is None else \
            space.start_choice(_on(start, option.mesh))
        meshes.append(MeshLayouts(
            option, space, Floor(space, first, settings.blocks,
                                 settings.slot_ratio),
            layouts(space, settings.step.batch_dim, choice), choice))
    if meshes:
        return Space(meshes)
    if first_error is not None:
        raise first_error
    raise KerasmeshError(
        kinds.ACCUMULATION_STEPS,
        f"No micro-batch of `batch_size` ({batch}) splits evenly over the "
        "data axis.",
        x=f"`accumulation_steps` "
          f"{listing(list(settings.levers.steps or []), quote=False)} "
          "leave micro-batches that no data axis divides.",
        i="Allow other `accumulation_steps`, or use a `batch_size` that is "
          "a multiple of the data axis.")


def search_settings(model: Any, mesh: Any, batch_size: Any, optimizer: Any,
                    loss: Any, input_shapes: dict | None, memory: Any,
                    start: Any, fixed: Any, objective: Any, bandwidth: Any,
                    flop_rate: Any, blocks: int | None,
                    batch_dim_name: Any, timeout: float, began: float,
                    remat: Any, accumulation_steps: Any, topology: Any,
                    cache_dir: str | None) -> tuple[Settings, Space]:
    """The settings and the space of one search (see the module's
    docstring)."""
    machine = None if topology is None else as_topology(topology)
    objective = objective or ("time" if machine is not None else "traffic")
    if memory == "device":
        memory = machine.memory if machine is not None else device_memory()
    sizes = None if mesh is None or machine is not None else \
        {str(a): int(s) for a, s in zip(mesh.axis_names, mesh.shape)}
    _check(objective, memory, bandwidth, flop_rate, sizes)
    start, fixed = _layout_of(start), _layout_of(fixed)
    step = Step(int(batch_size), optimizer, loss, input_shapes,
                _batch_axis(mesh, start, fixed, batch_dim_name))
    options = [given_mesh(mesh, machine, step.batch_dim)] \
        if mesh is not None else \
        mesh_options(machine, list_devices(), step.batch_size)
    models = _models(model, blocks, timeout, time.monotonic() - began)
    full = None if blocks is None or blocks <= 2 else int(blocks)
    timing = machine if machine is not None or objective != "time" else \
        timing_machine(mesh, bandwidth, flop_rate)
    deepest = list(models.values())[-1]
    settings = Settings(
        model=model, models=models, blocks=full, step=step, budget=memory,
        objective=objective, machine=machine, timing=timing,
        levers=lever_space(deepest, remat, accumulation_steps,
                           step.batch_size, full),
        slot_ratio=slot_ratio(deepest, options[0].mesh, optimizer,
                              step.batch_dim),
        profile_end=began + PROFILE_SHARE * timeout, end=began + timeout,
        timeout=timeout, cache_dir=cache_dir)
    return settings, _mesh_layouts(settings, options, start, fixed)
