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

from . import attribution, hlo
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

# --------------------------------------------------------------------------
# Arguments


def _check_timeout(timeout: Any) -> float:
    if not is_positive(timeout):
        raise KerasmeshError(
            kinds.ARGUMENT, "`timeout` must be a positive number of seconds.",
            received=timeout)
    return float(timeout)


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
                spent: Any = 0, quick: bool = False) -> dict:
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
        quick: compile with `deadline.QUICK` (the search's candidates).

    Returns:
        Plain values: `memory` (kerasmesh's breakdown per device), `xla`
        (XLA's own figures), `need` (what decides a fit: `fits.need()`),
        `collectives` (columns by collective and axes), `ops` (each one),
        `attribution` (collective bytes by variable and layer), `plan`
        (the planner's summary), `mesh`, `compile_seconds`, `versions` and
        facts about the step.

    Raises:
        KerasmeshError: the planner's error for a layout or batch size that
            can't work; kind `loss` for a loss that does not fit the
            outputs; `input_shapes`; `timeout`; `compile`.
    """
    require_backend(("jax",), "Costing a layout")
    if check_batch_size(batch_size) is None:
        raise KerasmeshError(kinds.ARGUMENT, "`batch_size` must be a positive "
                             "whole number.", received=batch_size)
    batch_size, timeout = int(batch_size), _check_timeout(timeout)
    clock = Deadline(timeout - (spent if is_positive(spent) else 0))
    layout_map, batch_dim, dist_type = distribution_layout(distribution)
    try:
        with clock.armed():
            model, planned, step, lowered, start = _trace(
                clock, model, layout_map, distribution, batch_dim,
                batch_size, optimizer, loss, input_shapes)
    except BaseException:
        if clock.passed():
            raise timeout_error(
                timeout, f"The time ran out while {clock.phase}.") from None
        raise
    try:
        compiled = compile_within(lowered, clock, timeout, quick)
    except KerasmeshError:
        raise
    except Exception as e:  # noqa: BLE001 - XLA's own error, classed
        raise _compile_error(e) from e
    return _report(CompiledStep(compiled, planned, step, dist_type,
                                batch_dim, layout_map.device_mesh,
                                time.perf_counter() - start))


def _trace(clock: Deadline, model: Any, layout_map: Any, distribution: Any,
           batch_dim: str, batch_size: int, optimizer: Any, loss: Any,
           input_shapes: dict | None) -> tuple:
    """Build the model, plan it and lower its step, saying in
    `clock.phase` what runs. Returns the model, the plan, the step's
    specs, the lowered step and when lowering started."""
    clock.phase = "building the model"
    model = plan.as_model(model)
    if optimizer is None and getattr(model, "optimizer", None) is None:
        optimizer = "sgd"
    # The planner's checks and placement: one code path for the bytes.
    clock.phase = "planning the layout"
    planned, placement = plan.plan_placement(model, layout_map, batch_size,
                                             optimizer, batch_dim)
    error = plan.first_error(planned["problems"])
    if error is not None:
        raise error
    clock.phase = "tracing the step"
    step = step_specs(model, placement, distribution, optimizer, loss,
                      batch_size, input_shapes)
    start = time.perf_counter()
    try:
        lowered = lower_step(model, distribution, step)
    except KerasmeshError:
        raise
    except Exception as e:  # noqa: BLE001 - shown as a classed error
        raise _compile_error(e) from e
    return model, planned, step, lowered, start


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
    """

    compiled: Any
    planned: dict
    specs: StepSpecs
    distribution: str
    batch_dim: str
    keras_mesh: Any
    seconds: float


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
    ops = hlo.parse_collectives(compiled.as_text(), list(sizes.values()),
                                list(sizes))
    return {
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
        "batch_size": summary["batch_size"],
        "inputs": {"name": [f.name for f in inputs],
                   "shape": [[float(d) for d in f.shape] for f in inputs],
                   "dtype": [f.dtype for f in inputs]},
        "loss": specs.loss_text,
        "compile_seconds": float(step.seconds),
        "flops": _flops(step.compiled),
        "versions": versions(),
    }


def _flops(compiled: Any) -> float:
    """XLA's count of floating-point operations per device per step."""
    try:
        analysis = compiled.cost_analysis()
    except Exception:  # noqa: BLE001 - a backend without cost analysis
        return 0.0
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0] if analysis else {}
    return float((analysis or {}).get("flops", 0.0))
