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

from . import precision, xla_log
from .attention import BLOCKS, CUDNN, Fused, fused_scope
from ..plan import planner as plan
from ..core.backend import require_backend
from ..plan.batches import check_batch_size
from ..core.checks import is_positive
from .deadline import Deadline, compile_within, timeout_error
from ..core.errors import KerasmeshError
from ..mesh.device_mesh import describe_mesh
from ..core.placement import mesh_sizes
from .report import CompiledStep, report
from .step import StepSpecs, lower_step, step_specs
from .target import Target, choose
from ..core import kinds
from ..topology.machine import as_topology
from ..topology.time import device_nodes, model_compute_dtype
from ..plan.accumulation import accumulating_optimizer
from ..remat.choice import remat_scope
from .recompute import StepLevers, recompute_share

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


def layout_cost(model: Any, distribution: Any, batch_size: Any,
                optimizer: Any = None, loss: Any = None,
                input_shapes: dict | None = None, timeout: Any = 300,
                spent: Any = 0, quick: bool = False, remat: Any = None,
                accumulation_steps: Any = None, topology: Any = None,
                measure: bool | None = None, trace: bool = False) -> dict:
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
        remat, accumulation_steps: the step's levers (`recompute.StepLevers`):
            None: the model's, and the optimizer's, as they are.
        topology: the machine to model the step's time on, or None.
        trace: whether to keep the step's schedule (a search's).

    Returns:
        The compiled step's cost as plain values (`report.report()`).

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
    levers = StepLevers.of(remat, accumulation_steps, batch_size,
                       mesh_sizes(layout_map.device_mesh).get(batch_dim),
                       batch_dim)
    levers.measure = not quick if measure is None else bool(measure)
    machine, target, placed = _where(topology, distribution,
                                     layout_map.device_mesh)
    args = (placed, batch_dim, levers, optimizer, loss, input_shapes)
    traced = _trace_within(clock, timeout, model, *args, target.attention)
    dtype = _compute_dtype(traced.model, machine)
    traced, compiled, how, log = _compile_traced(traced, args, clock,
                                                 timeout, quick, target)
    return report(CompiledStep(
        compiled, traced.planned, traced.step, dist_type, batch_dim,
        layout_map.device_mesh, time.perf_counter() - traced.start, levers,
        target, how, log, dtype, machine, traced.fused.how, trace))


def _compile_traced(traced: Traced, args: tuple, clock: Deadline,
                    timeout: float, quick: bool, target: Target) -> tuple:
    """`_compile()` a traced step; where XLA's GPU partitioner refuses the
    layout cuDNN's attention needs ("Sharding on head dim is not
    allowed"), trace it again with attention in blocks and compile that.

    Returns:
        (the step traced, then `_compile()`'s results).
    """
    try:
        return (traced,) + _compile(traced.lowered, clock, timeout, quick,
                                    target)
    except KerasmeshError as e:
        if e.kind != kinds.COMPILE or traced.fused.how != CUDNN:
            raise
    traced = _trace_within(clock, timeout, traced.model, *args, BLOCKS)
    return (traced,) + _compile(traced.lowered, clock, timeout, quick,
                                target)


def _where(topology: Any, distribution: Any, keras_mesh: Any) -> tuple:
    """(the machine: `_machine()`; what compiles the step: a
    `target.Target`; the distribution over the devices it compiles for)."""
    machine = _machine(topology, keras_mesh)
    target = choose(machine[0] if machine else None, keras_mesh)
    return machine, target, target.retarget(distribution)


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
    FLOP/s."""
    dtype = model_compute_dtype(model)
    if machine is not None:
        machine[0].peak(dtype)
    return dtype


def _compile(lowered: Any, clock: Deadline, timeout: float, quick: bool,
             target: Target) -> tuple[Any, tuple, dict]:
    """Compile the step with `target`'s options, bfloat16 retyped where the
    CPU compiles it (`precision.py`; compiled as it is when the retyped
    module fails) and XLA's log kept off the console (`xla_log.py`).

    Returns:
        (the compiled step, (what was done with bfloat16, the module it
        replaced), what XLA wrote: `xla_log.parse()`).
    """
    options = target.compile_options(quick)
    how, saved = precision.retype_bfloat16(lowered, target.retypes_bfloat16)
    try:
        with xla_log.captured() as log:
            try:
                compiled = compile_within(lowered, clock, timeout, options)
            except KerasmeshError:
                raise
            except Exception:  # noqa: BLE001 - tried as it was, below
                if saved is None:
                    raise
                precision.restore(lowered, saved)
                how, saved = precision.WIDENED, None
                compiled = compile_within(lowered, clock, timeout, options)
    except KerasmeshError:
        raise
    except Exception as e:  # noqa: BLE001 - XLA's own error, classed
        raise _compile_error(e) from e
    return compiled, (how, saved), xla_log.parse(log.text)


@dataclass
class Traced:
    """A step traced and lowered: the built `model`, the plan, the step's
    specs, the lowered step, when lowering started, and how attention
    was traced."""

    model: Any
    planned: dict
    step: StepSpecs
    lowered: Any
    start: float
    fused: Fused


def _trace_within(clock: Deadline, timeout: float, *args: Any) -> Traced:
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


def _trace(clock: Deadline, model: Any, distribution: Any, batch_dim: str,
           levers: StepLevers, optimizer: Any, loss: Any,
           input_shapes: dict | None, attention: str) -> Traced:
    """Build the model, plan it and lower its step (with `levers`, and
    attention traced as `attention` says), saying in `clock.phase` what
    runs; sets `levers`'s `remat` to the choice in effect and its
    `recompute_share`."""
    clock.phase = "building the model"
    model = plan.as_model(model)
    layout_map = distribution_layout(distribution)[0]
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
            fused_scope(attention, model) as fused:
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
    return Traced(model, planned, step, lowered, start, fused)
