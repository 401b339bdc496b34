"""Compiled pre-flight: what one training step costs each device.

`layout_cost()` lowers and compiles one Keras training step for a
distribution's mesh with abstract arguments only: every weight, optimizer
variable and batch is a `jax.ShapeDtypeStruct` carrying the
`NamedSharding` its layout gives it, the model is built shape-only and its
optimizer is built shape-only too, so nothing of the model's size is
allocated. XLA then reports, per device, the bytes of the step's arguments,
outputs and temporaries (`compiled.memory_analysis()`), and the compiled
HLO lists every collective the layout forces each step.

Placement comes from the planner (`plan.plan_placement()`), so weight and
optimizer bytes are the plan's, and a layout the planner rejects raises
the planner's error before anything is compiled. The step's specs and the
step function are `step.py`'s; this module runs the call (arguments,
deadline, trace, lower, compile) and reports what the compiled step costs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from . import attribution, hlo, precision, xla_log
from .attention import AS_WRITTEN, fused_scope
from ..plan import planner as plan
from ..core.backend import require_backend
from ..plan.batches import check_batch_size
from ..core.checks import is_positive
from .deadline import Deadline, compile_within, timeout_error
from ..core import fits
from ..core.errors import KerasmeshError
from ..core.kinds import WARNING
from ..mesh.device_mesh import describe_mesh
from ..core.placement import mesh_sizes
from .step import StepSpecs, lower_step, shard_bytes, step_specs
from ..core import kinds
from ..topology.machine import Topology, as_topology
from ..topology.time import device_nodes, model_compute_dtype, step_time
from ..plan.accumulation import accumulating_optimizer
from ..remat.choice import remat_scope
from .recompute import Levers, recompute_share, xla_flops

# --------------------------------------------------------------------------
# Arguments


def _check_timeout(timeout: Any) -> float:
    if not is_positive(timeout):
        raise KerasmeshError(
            kinds.ARGUMENT, "`timeout` must be a positive number of seconds.",
            received=timeout)
    return float(timeout)


def _check_batch(batch_size: Any) -> int:
    if check_batch_size(batch_size) is None:
        raise KerasmeshError(kinds.ARGUMENT, "`batch_size` must be a positive "
                             "whole number.", received=batch_size)
    return int(batch_size)


def distribution_layout(distribution: Any) -> tuple[Any, str, str]:
    """(LayoutMap, batch axis, type) of a Keras distribution.

    A data-parallel distribution replicates every variable: its layout is
    an empty LayoutMap on its mesh.
    """
    import keras
    from keras.distribution import DataParallel, ModelParallel

    if isinstance(distribution, ModelParallel):
        layout_map, batch = plan.layout_source(distribution)
        return layout_map, batch, "model_parallel"
    if isinstance(distribution, DataParallel):
        mesh = distribution.device_mesh
        return (keras.distribution.LayoutMap(mesh),
                distribution.batch_dim_name, "data_parallel")
    raise KerasmeshError(
        kinds.DISTRIBUTION,
        "`distribution` must be a data-parallel or model-parallel "
        "distribution.",
        received=distribution)


def _compile_error(e: Exception) -> KerasmeshError:
    return KerasmeshError(
        kinds.COMPILE, "XLA can't compile the training step for this layout.",
        x=f"{type(e).__name__}: {str(e).splitlines()[0][:300]}")


def versions() -> dict:
    """The versions of Keras, JAX, jaxlib and XLA's backend."""
    import jax
    import jaxlib
    import keras

    backend = jax.devices()[0].client
    return {"keras": keras.__version__, "jax": jax.__version__,
            "jaxlib": jaxlib.__version__,
            "xla": str(backend.platform_version).splitlines()[0]}


def layout_cost(model: Any, distribution: Any, batch_size: Any,
                optimizer: Any = None, loss: Any = None,
                input_shapes: dict | None = None, timeout: Any = 300,
                spent: Any = 0, quick: bool = False, remat: Any = None,
                accumulation_steps: Any = None, topology: Any = None,
                measure: bool | None = None) -> dict:
    """Compile one training step abstractly and report its per-device cost.

    Args:
        model: a built Keras model or a function returning one (built
            shape-only).
        distribution: a Keras `DataParallel` or `ModelParallel`.
        batch_size: the global batch size.
        optimizer: an optimizer or its name; None for the model's compiled
            one, or plain SGD when it has none.
        loss: a loss or its name, or one per output; None for the model's
            compiled loss, or the stand-in (each output's mean, summed).
        input_shapes: {input name: shape without the batch dimension} for
            inputs with dimensions of unknown size.
        timeout: seconds for the whole call (building, tracing, compiling:
            `deadline.py`), less `spent`, seconds the caller spent before.
        quick: compile with `deadline.QUICK` (the same memory and
            collectives); measure: whether to measure what remat
            recomputes (one more lowering; None: unless `quick`).
        remat, accumulation_steps: the step's levers (`recompute.Levers`):
            None: the model's, and the optimizer's, as they are.
        topology: the machine to model the step's time on, or None.

    Returns:
        Plain values: `memory` (kerasmesh's breakdown per device), `xla`
        (XLA's own), `need` (what decides a fit: `fits.need()`),
        `collectives` (by collective and axes), `ops` (each), `attribution`
        (bytes by variable and layer), `plan` (the planner's summary, of
        the micro-step), `mesh`, `compile_seconds`, `versions`, `flops`, the
        levers (`recompute.Levers.report()`), what the compile said and,
        with a topology, `time` (`_extras()`), and facts about the step.

    Raises:
        KerasmeshError: the planner's error for a layout or batch size that
            can't work; kind `loss` for a loss that does not fit the
            outputs; `input_shapes`; `timeout`; `compile`; the levers';
            `topology*`.
    """
    require_backend(("jax",), "Costing a layout")
    batch_size, timeout = _check_batch(batch_size), _check_timeout(timeout)
    clock = Deadline(timeout - (spent if is_positive(spent) else 0))
    layout_map, batch_dim, dist_type = distribution_layout(distribution)
    levers = Levers.of(remat, accumulation_steps, batch_size,
                       mesh_sizes(layout_map.device_mesh).get(batch_dim),
                       batch_dim)
    levers.measure = not quick if measure is None else bool(measure)
    machine = _machine(topology, layout_map.device_mesh)
    model, planned, step, lowered, start, fused = _trace_within(
        clock, timeout, model, layout_map, distribution, batch_dim, levers,
        optimizer, loss, input_shapes)
    dtype = _compute_dtype(model, machine)
    compiled, how, log = _compile(lowered, clock, timeout, quick)
    return _report(CompiledStep(
        compiled, planned, step, dist_type, batch_dim, layout_map.device_mesh,
        time.perf_counter() - start, levers, how, log, dtype, machine, fused))


def _machine(topology: Any, keras_mesh: Any) -> tuple | None:
    """(Topology, node of each mesh position), checked before anything
    is built; None without a topology."""
    if topology is None:
        return None
    machine = as_topology(topology)
    return machine, device_nodes(describe_mesh(keras_mesh)["devices"],
                                 machine)


def _compute_dtype(model: Any, machine: tuple | None) -> str:
    """The model's compute dtype, checked against the topology's peak
    FLOP/s before the compile."""
    dtype = model_compute_dtype(model)
    if machine is not None:
        machine[0].peak(dtype)
    return dtype


def _compile(lowered: Any, clock: Deadline, timeout: float,
             quick: bool) -> tuple[Any, tuple, dict]:
    """Compile the step with bfloat16 retyped for the CPU backend
    (`precision.py`; compiled as it is when the retyped module fails) and
    XLA's log kept off the console (`xla_log.py`).

    Returns:
        (the compiled step, (what was done with bfloat16, the module it
        replaced), what XLA wrote: `xla_log.parse()`).
    """
    how, saved = precision.retype_bfloat16(lowered)
    try:
        with xla_log.captured() as log:
            try:
                compiled = compile_within(lowered, clock, timeout, quick)
            except KerasmeshError:
                raise
            except Exception:  # noqa: BLE001 - tried as it was, below
                if saved is None:
                    raise
                precision.restore(lowered, saved)
                how, saved = precision.WIDENED, None
                compiled = compile_within(lowered, clock, timeout, quick)
    except KerasmeshError:
        raise
    except Exception as e:  # noqa: BLE001 - XLA's own error, classed
        raise _compile_error(e) from e
    return compiled, (how, saved), xla_log.parse(log.text)


def _trace_within(clock: Deadline, timeout: float, *args: Any) -> tuple:
    """`_trace()` under `clock`; a deadline passed is the timeout error,
    naming what was running."""
    try:
        with clock.armed():
            return _trace(clock, *args)
    except BaseException:
        if clock.passed():
            raise timeout_error(
                timeout, f"The time ran out while {clock.phase}.") from None
        raise


def _trace(clock: Deadline, model: Any, layout_map: Any, distribution: Any,
           batch_dim: str, levers: Levers, optimizer: Any, loss: Any,
           input_shapes: dict | None) -> tuple:
    """Build the model, plan it and lower its step (with `levers`), saying
    in `clock.phase` what runs. Returns the model, the plan, the step's
    specs, the lowered step and when lowering started; sets `levers`'s
    `remat` to the choice in effect and its `recompute_share`."""
    clock.phase = "building the model"
    model = plan.as_model(model)
    if optimizer is None and getattr(model, "optimizer", None) is None:
        optimizer = "sgd"
    optimizer = accumulating_optimizer(
        optimizer, model,
        levers.accumulation_steps if levers.sets_optimizer else None)
    # The planner's checks and placement: one code path for the bytes.
    clock.phase = "planning the layout"
    planned, placement = plan.plan_placement(
        model, layout_map, levers.micro_batch_size, optimizer, batch_dim)
    error = plan.first_error(planned["problems"])
    if error is not None:
        raise error
    with remat_scope(model, levers.remat) as levers.remat, \
            fused_scope(default_platform(), model) as fused:
        clock.phase = "tracing the step"
        step = step_specs(model, placement, distribution, optimizer, loss,
                          levers.micro_batch_size, input_shapes)
        start = time.perf_counter()
        try:
            lowered = lower_step(model, distribution, step)
            if levers.measure:
                clock.phase = "tracing the step without rematerialization"
                levers.recompute_share = recompute_share(
                    model, distribution, step, lowered, levers.remat)
        except KerasmeshError:
            raise
        except Exception as e:  # noqa: BLE001 - shown as a classed error
            raise _compile_error(e) from e
    return model, planned, step, lowered, start, fused.how


def default_platform() -> str:
    """The platform JAX compiles for ("cpu", "gpu", "tpu")."""
    import jax

    return jax.default_backend()


@dataclass
class CompiledStep:
    """What one compiled training step reports from.

    Attributes:
        compiled: JAX's compiled step.
        planned: the plan (`plan.plan_layout()`'s dict).
        specs: the step's arguments (`step.StepSpecs`).
        distribution: "data_parallel" or "model_parallel".
        batch_dim: the batch axis.
        keras_mesh: the distribution's Keras DeviceMesh.
        seconds: how long lowering and compiling took.
        levers: the step's rematerialization and micro-batches.
        bfloat16: (what the compile did with bfloat16, the module
            `precision.retype_bfloat16()` replaced, or None).
        log: what XLA wrote while compiling (`xla_log.parse()`).
        dtype: the model's compute dtype.
        machine: (Topology, node of each mesh position), or None.
        attention: how Keras's attention was costed (`attention.py`).
    """

    compiled: Any
    planned: dict
    specs: StepSpecs
    distribution: str
    batch_dim: str
    keras_mesh: Any
    seconds: float
    levers: Levers
    bfloat16: tuple = (precision.ABSENT, None)
    log: dict | None = None
    dtype: str = "float32"
    machine: tuple[Topology, list[int]] | None = None
    attention: str = AS_WRITTEN


def _report(step: CompiledStep) -> dict:
    """The cost of a compiled step as plain values (`layout_cost()`)."""
    from keras import tree

    compiled, planned, specs = step.compiled, step.planned, step.specs
    sizes = mesh_sizes(step.keras_mesh)
    inputs = specs.inputs
    stats = compiled.memory_analysis()
    xla = {k: float(getattr(stats, f"{k}_size_in_bytes", 0) or 0) for k in
           ("argument", "output", "alias", "temp", "generated_code")}
    xla["total"] = fits.xla_total(xla)
    summary = planned["summary"]
    data = sum(shard_bytes(s) for s in tree.flatten(specs.xs)) + \
        sum(shard_bytes(s) for s in specs.ys if s is not None)
    memory = {
        "weights": summary["device_weights"],
        "optimizer": summary["device_optimizer"],
        "inputs": float(data),
        "activations": xla["temp"],
        "outputs": max(0.0, xla["output"] - xla["alias"]),
    }
    memory["total"] = float(sum(memory.values()))
    text = compiled.as_text()
    flops = xla_flops(compiled, text)
    ops = precision.rename_dtypes(
        hlo.parse_collectives(text, list(sizes.values()), list(sizes)),
        step.bfloat16[1])
    return _extras(step, ops, flops) | {
        "memory": memory,
        "xla": xla,
        "need": fits.need(xla),
        "collectives": hlo.summarise_collectives(ops),
        "ops": ops,
        "attribution": attribution.attribute(ops, planned["variables"]),
        "plan": summary,
        "warnings": [p["message"] for p in planned["problems"]
                     if p["severity"] == WARNING],
        "mesh": describe_mesh(step.keras_mesh),
        "distribution": step.distribution,
        "batch_dim_name": step.batch_dim,
        "batch_size": step.levers.batch_size,
        "inputs": {"name": [f.name for f in inputs],
                   "shape": [[float(d) for d in f.shape] for f in inputs],
                   "dtype": [f.dtype for f in inputs]},
        "loss": specs.loss_text,
        "compile_seconds": float(step.seconds),
        "flops": flops,
        "versions": versions(),
        **step.levers.report(flops),
    }


def _extras(step: CompiledStep, ops: list[dict], flops: float) -> dict:
    """What the compile said beyond its figures: `bfloat16` (how it was
    compiled: `precision.py`), `attention` (`attention.py`),
    `reshardings` and `xla_log` (what XLA wrote: `xla_log.parse()`),
    `compute_dtype` and, with a topology,
    `time` (`topology.time.step_time()`)."""
    log = step.log or xla_log.parse("")
    out = {"bfloat16": step.bfloat16[0], "attention": step.attention,
           "reshardings": log["reshardings"],
           "xla_log": log["log"], "compute_dtype": step.dtype}
    if step.machine is not None:
        machine, nodes = step.machine
        out["time"] = step_time(
            ops, flops, machine, nodes, step.dtype,
            recompute_flops=step.levers.report(flops)["recompute_flops"],
            accumulation_steps=step.levers.accumulation_steps)
    return out

