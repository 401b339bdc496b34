"""Compiled pre-flight: what one training step costs each device.

`layout_cost()` lowers and compiles one Keras training step for a
distribution's mesh with abstract arguments only: every weight, optimizer
variable and batch is a `jax.ShapeDtypeStruct` carrying the
`NamedSharding` its layout gives it, the model is built shape-only and its
optimizer is built shape-only too, so nothing of the model's size is
allocated. XLA then reports, per device, the bytes of the step's arguments,
outputs and temporaries (`compiled.memory_analysis()`), and the compiled
HLO lists every collective the layout forces each step.

Placement comes from the planner (`plan.plan_layout()`), so weight and
optimizer bytes are the plan's, and a layout the planner rejects raises
the planner's error before anything is compiled.
"""

from __future__ import annotations

import math
import time
from typing import Any

from . import hlo, plan
from .backend import require_backend
from .batches import check_batch_size
from .checks import is_positive
from .deadline import PENDING as _PENDING  # noqa: F401 - tests read it
from .deadline import Deadline, compile_within, timeout_error
from .deadline import wait_for_compiles  # noqa: F401 - R calls it
from .errors import KerasmeshError
from .layout import rule_keys
from .mesh import describe_mesh, format_shape
from .placement import (WARNING, mesh_sizes, resolve_placement,
                        variable_shape)
from .resolve import RuleResolver
from .slots import optimizer_variables
from .step import (data_spec, input_specs, loss_functions, shard_bytes,
                   sharded, target_spec, total_loss)

# --------------------------------------------------------------------------
# Arguments


def _check_timeout(timeout: Any) -> float:
    if not is_positive(timeout):
        raise KerasmeshError(
            "argument", "`timeout` must be a positive number of seconds.",
            received=timeout)
    return float(timeout)


def distribution_layout(distribution: Any) -> tuple[Any, str, str]:
    """(LayoutMap, batch axis, kind) of a Keras distribution.

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
        "distribution",
        "`distribution` must be a data-parallel or model-parallel "
        "distribution.",
        received=distribution)


def _compile_error(e: Exception) -> KerasmeshError:
    return KerasmeshError(
        "compile", "XLA can't compile the training step for this layout.",
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
                spent: Any = 0) -> dict:
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

    Returns:
        Plain values: `memory` (kerasmesh's breakdown per device), `xla`
        (XLA's own figures), `collectives` (columns by kind and axes),
        `ops` (each collective), `plan` (the planner's summary), `mesh`,
        `compile_seconds`, `versions` and facts about the step.

    Raises:
        KerasmeshError: the planner's error for a layout or batch size that
            can't work; kind `loss` for a loss that does not fit the
            outputs; `input_shapes`; `timeout`; `compile`.
    """
    require_backend(("jax",), "Costing a layout")
    if check_batch_size(batch_size) is None:
        raise KerasmeshError("argument", "`batch_size` must be a positive "
                             "whole number.", received=batch_size)
    batch_size, timeout = int(batch_size), _check_timeout(timeout)
    clock = Deadline(timeout - (spent if is_positive(spent) else 0))
    layout_map, batch_dim, kind = distribution_layout(distribution)
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
        compiled = compile_within(lowered, clock, timeout)
    except KerasmeshError:
        raise
    except Exception as e:  # noqa: BLE001 - XLA's own error, classed
        raise _compile_error(e) from e
    seconds = time.perf_counter() - start
    keras_mesh = layout_map.device_mesh
    return _report(compiled, planned, kind, batch_dim,
                   mesh_sizes(keras_mesh), seconds, step["xs"], step["ys"],
                   step["loss_text"], step["inputs"], keras_mesh)


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
    planned = plan.plan_layout(model, layout_map, batch_size, optimizer,
                               batch_dim)
    error = plan.first_error(planned["problems"])
    if error is not None:
        raise error
    clock.phase = "tracing the step"
    step = _step_specs(model, planned, layout_map, distribution, optimizer,
                       loss, batch_size, input_shapes)
    start = time.perf_counter()
    lowered = _lower_step(model, distribution, **step)
    return model, planned, step, lowered, start


def _step_specs(model: Any, planned: dict, layout_map: Any,
                distribution: Any, optimizer: Any, loss: Any,
                batch_size: int, input_shapes: dict | None) -> dict:
    """The abstract, sharded arguments of one training step: the
    optimizer and its state, inputs (`xs`), targets (`ys`) and losses."""
    from keras import tree

    mesh = layout_map.device_mesh.backend_mesh
    opt, state = _state_specs(model, planned, layout_map, optimizer)
    structure, inputs = input_specs(model, batch_size, input_shapes)
    preds = _output_specs(model, structure, inputs, state)
    losses, loss_text, targets = _target_specs(loss, model, preds)
    xs = tree.map_structure(
        lambda f: data_spec(distribution, f.shape, f.dtype, mesh), structure)
    ys = [data_spec(distribution, s, d, mesh) if losses is not None else
          None for s, d in targets]
    return {"optimizer": opt, "state": state, "inputs": inputs, "xs": xs,
            "ys": ys, "losses": losses, "loss_text": loss_text}


def _state_specs(model: Any, planned: dict, layout_map: Any,
                 optimizer: Any) -> tuple[Any, tuple]:
    """The optimizer, and sharded specs of (trainable, non-trainable,
    optimizer) variables as the plan places them; slots follow their
    model variable, other optimizer variables the layout map."""
    keras_mesh = layout_map.device_mesh
    mesh, sizes = keras_mesh.backend_mesh, mesh_sizes(keras_mesh)
    axes_of = {id(v): axes for v, axes in zip(
        plan.model_variables(model), planned["variables"]["axes"])}

    def spec(v: Any, axes: Any) -> Any:
        return sharded(v.shape, v.dtype, mesh, axes)

    trainable = [spec(v, axes_of[id(v)]) for v in model.trainable_variables]
    frozen = [spec(v, axes_of[id(v)]) for v in model.non_trainable_variables]
    opt, opt_vars = optimizer_variables(
        optimizer, model, list(model.trainable_variables))
    resolver = RuleResolver(rule_keys(layout_map))
    slots = []
    for v, ref in opt_vars:
        if ref is not None and id(ref) in axes_of:
            axes = axes_of[id(ref)]
        else:
            _, placed = resolve_placement(resolver, layout_map, v.path,
                                          variable_shape(v), sizes,
                                          math.prod(sizes.values()))
            axes = placed["axes"]
        slots.append(spec(v, axes))
    return opt, (trainable, frozen, slots)


def _output_specs(model: Any, structure: Any, inputs: list,
                  state: tuple) -> list:
    """The model's outputs (shape and dtype) for the input specs.

    Raises:
        KerasmeshError: kind `input_shapes` when the model can't take them.
    """
    import jax
    from keras import tree

    trainable, frozen, _ = state
    plain_x = tree.map_structure(
        lambda f: jax.ShapeDtypeStruct(tuple(f.shape), f.dtype), structure)
    try:
        out = jax.eval_shape(
            lambda t, n, x: model.stateless_call(t, n, x)[0],
            [jax.ShapeDtypeStruct(s.shape, s.dtype) for s in trainable],
            [jax.ShapeDtypeStruct(s.shape, s.dtype) for s in frozen],
            plain_x)
    except Exception as e:  # noqa: BLE001 - the model can't take the inputs
        shown = "; ".join(f'"{f.name}" {format_shape(f.shape)}'
                          for f in inputs)
        raise KerasmeshError(
            "input_shapes", "The model can't run on inputs of these shapes.",
            x=f"Inputs {shown}: {str(e).splitlines()[0][:300]}",
            i="Check `input_shapes` and `batch_size`.") from e
    return tree.flatten(out)


def _target_specs(loss: Any, model: Any, preds: list
                  ) -> tuple[Any, str, list[tuple[list, str]]]:
    """The loss functions, how to name them, and a (shape, dtype) target
    per output.

    Raises:
        KerasmeshError: kind `loss` when the loss does not fit the outputs.
    """
    import jax

    losses, loss_text = loss_functions(loss, model, len(preds))
    targets = []
    for i, p in enumerate(preds):
        shape, dtype = (target_spec(losses[i], p.shape, str(p.dtype))
                        if losses is not None else (p.shape, str(p.dtype)))
        targets.append((list(shape), dtype))
    if losses is None:
        return losses, loss_text, targets
    try:
        jax.eval_shape(
            lambda ys, ps: total_loss(losses, ys, ps),
            [jax.ShapeDtypeStruct(tuple(s), d) for s, d in targets], preds)
    except Exception as e:  # noqa: BLE001 - loss and outputs disagree
        raise KerasmeshError(
            "loss", f"Loss {loss_text} does not fit the model's outputs.",
            x="Outputs of shape " + ", ".join(
           format_shape(p.shape) for p in preds) + ": " +
              str(e).splitlines()[0][:300],
            i="Give a loss for these outputs, or `loss = NULL` "
              "for the stand-in (the mean of the outputs).") from e
    return losses, loss_text, targets


def _lower_step(model: Any, distribution: Any, optimizer: Any,
                losses: Any, state: tuple, xs: Any, ys: list,
                **_: Any) -> Any:
    """One training step (forward, gradients, optimizer update), lowered
    for the sharded state and batch without running it. Takes
    `_step_specs()`'s dict as keywords (and ignores what it does not use).

    Raises:
        KerasmeshError: kind `compile` when JAX can't lower it.
    """
    import jax
    from keras import tree

    def step(state, data):
        t, n, o = state
        x, y = data

        def forward(t, n):
            pred, n = model.stateless_call(t, n, x, training=True)
            return total_loss(losses, y, tree.flatten(pred)), n

        (value, n), grads = jax.value_and_grad(forward, has_aux=True)(t, n)
        t, o = optimizer.stateless_apply(o, grads, t)
        return value, (t, n, o)

    shardings = tuple([s.sharding for s in part] for part in state)
    try:
        with distribution.scope():
            return jax.jit(step, donate_argnums=0,
                           out_shardings=(None, shardings)).lower(
                state, (xs, ys))
    except KerasmeshError:
        raise
    except Exception as e:  # noqa: BLE001 - shown as a classed error
        raise _compile_error(e) from e


def _report(compiled: Any, planned: dict, kind: str, batch_dim: str,
            sizes: dict, seconds: float, xs: Any, ys: list, loss_text: str,
            inputs: list, keras_mesh: Any) -> dict:
    from keras import tree

    stats = compiled.memory_analysis()
    xla = {k: float(getattr(stats, f"{k}_size_in_bytes", 0) or 0) for k in
           ("argument", "output", "alias", "temp", "generated_code")}
    xla["total"] = xla["argument"] + xla["output"] - xla["alias"] + \
        xla["temp"]
    summary = planned["summary"]
    data = sum(shard_bytes(s) for s in tree.flatten(xs)) + \
        sum(shard_bytes(s) for s in ys if s is not None)
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
        "collectives": hlo.summarise_collectives(ops),
        "ops": ops,
        "plan": summary,
        "warnings": [p["message"] for p in planned["problems"]
                     if p["severity"] == WARNING],
        "mesh": describe_mesh(keras_mesh),
        "distribution": kind,
        "batch_dim_name": batch_dim,
        "batch_size": summary["batch_size"],
        "inputs": {"name": [f.name for f in inputs],
                   "shape": [[float(d) for d in f.shape] for f in inputs],
                   "dtype": [f.dtype for f in inputs]},
        "loss": loss_text,
        "compile_seconds": float(seconds),
        "flops": _flops(compiled),
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
