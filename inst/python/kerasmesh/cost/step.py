"""The abstract training step: its specs and the step function.

`step_specs()` makes every argument of one training step a
`jax.ShapeDtypeStruct` with the `NamedSharding` its placement gives it:
the model's variables and the optimizer's (placed by path, as the plan
places them: `plan/placements.py`), the inputs and the targets, and the
losses; `lower_step()` lowers the step on them, so nothing of the model's
size is allocated. Compiling it within a deadline and reporting what it
costs is `layout_cost.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import KerasmeshError, VALUE, received
from ..core.text import format_shape, listing, plural
from ..core.placement import Placement, mesh_sizes, sharding_placement
from ..plan.placements import ModelPlacement, optimizer_placements
from ..plan.slots import optimizer_variables
from ..core import kinds

STAND_IN_LOSS = "stand-in: the mean of the outputs"


class _Input:
    """One input of the step: a leaf for `keras.tree` (a tuple is not)."""

    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name: str, shape: list[int], dtype: str):
        self.name, self.shape, self.dtype = name, shape, dtype


def input_specs(model: Any, batch_size: int, input_shapes: dict | None
                ) -> tuple[Any, list[_Input]]:
    """The model's inputs: their structure, with `_Input` leaves, and a list.

    Raises:
        KerasmeshError: kind `input_shapes` for an unknown dimension without
            a shape in `input_shapes`, or a name that is not an input.
    """
    from keras import tree

    inputs = getattr(model, "_inputs_struct", None)
    if inputs is None:
        inputs = getattr(model, "inputs", None)
    if isinstance(inputs, (list, tuple)) and len(inputs) == 1:
        inputs = inputs[0]
    if inputs is None or not tree.flatten(inputs):
        raise KerasmeshError(
            kinds.MODEL, "`model` must have known inputs.",
            x=f'Model "{model.name}" has no `inputs`.',
            i="Build it from `Input()` layers (a functional or "
              "Sequential model).")
    given = dict(input_shapes or {})
    names = [t.name for t in tree.flatten(inputs)]
    if isinstance(inputs, dict):
        names = list(inputs) if len(inputs) == len(names) else names
    unknown = [n for n in given if n not in names]
    if unknown:
        raise KerasmeshError(
            kinds.INPUT_SHAPES, "`input_shapes` must name the model's inputs.",
            x=f'Unknown input "{unknown[0]}".',
            i="The inputs are " +
         ", ".join(f'"{n}"' for n in names) + ".")
    facts = []
    for name, tensor in zip(names, tree.flatten(inputs)):
        dims = list(tensor.shape[1:])
        if name in given:
            shape = given[name]
            shape = [shape] if isinstance(shape, (int, float)) else shape
            dims = [int(s) for s in shape]
        if any(d is None for d in dims):
            raise KerasmeshError(
                kinds.INPUT_SHAPES,
                f'Input "{name}" has dimensions of unknown size.',
                x=f"Its shape is {format_shape(tensor.shape)}; the "
                  "step needs every dimension but the batch.",
                i=f"Give it in `input_shapes`, such as "
                  f"list({name} = 128).")
        facts.append(_Input(name, [batch_size] + [int(d) for d in dims],
                            str(tensor.dtype)))
    it = iter(facts)
    structure = tree.map_structure(lambda _: next(it), inputs)
    return structure, facts


# --------------------------------------------------------------------------
# The loss


def _loss_name(loss: Any) -> str:
    if isinstance(loss, str):
        return loss
    return str(getattr(loss, "name", None) or
               getattr(loss, "__name__", None) or type(loss).__name__)


def _one_loss(loss: Any) -> Any:
    import keras

    try:
        return keras.losses.get(loss)
    except (ValueError, TypeError) as e:
        raise KerasmeshError(
            kinds.LOSS, "`loss` must be a Keras loss or the name of one.",
            [received(loss, f"Received {VALUE}: {str(e).splitlines()[0]}")],
            i='For example "mse" or "categorical_crossentropy".') from e


def loss_functions(loss: Any, model: Any, n_outputs: int
                   ) -> tuple[list[Any] | None, str]:
    """One loss per output (None for the stand-in), and a description.

    `loss` None takes the model's compiled loss; a model without one is
    differentiated through the stand-in, the sum over outputs of each
    output's mean.
    """
    if loss is None:
        loss = getattr(model, "loss", None)
        if loss is None:
            return None, STAND_IN_LOSS
    if isinstance(loss, dict):
        loss = _loss_per_output(loss, model, n_outputs)
    if isinstance(loss, (list, tuple)):
        if len(loss) != n_outputs:
            raise KerasmeshError(
                kinds.LOSS, "`loss` must give one loss per output.",
                x=f"{plural(len(loss), 'loss')} for "
                  f"{plural(n_outputs, 'output')}.")
        return [_one_loss(x) for x in loss], \
            ", ".join(_loss_name(x) for x in loss)
    return [_one_loss(loss)] * n_outputs, _loss_name(loss)


def output_names(model: Any, n_outputs: int) -> list[list[str]]:
    """The ways to name the outputs, each in the order the step flattens
    them: a dict-output model's keys, then Keras's `output_names`."""
    from keras import tree

    ways = []
    struct = getattr(model, "_outputs_struct", None)
    if isinstance(struct, dict) and len(struct) == n_outputs:
        ways.append([str(k) for k in tree.flatten({k: k for k in struct})])
    names = [str(n) for n in getattr(model, "output_names", None) or []]
    if len(names) == n_outputs and names not in ways:
        ways.append(names)
    return ways


def _loss_per_output(loss: dict, model: Any, n_outputs: int) -> list:
    """A dict of losses as a list in the outputs' order.

    Raises:
        KerasmeshError: kind `loss` when the names are not the outputs'.
    """
    ways = output_names(model, n_outputs)
    for names in ways:
        if set(names) == set(loss):
            return [loss[n] for n in names]
    names = ways[0] if ways else []
    missing = [n for n in names if n not in loss]
    unknown = [str(n) for n in loss if n not in names]
    bullets = [("x", "Outputs without a loss: " + listing(missing) + ".")
               ] if missing else []
    if unknown:
        bullets.append(("x", "Not outputs: " + listing(unknown) + "."))
    raise KerasmeshError(
        kinds.LOSS, "`loss` must name each output once.", bullets,
        i=("The outputs are " + listing(names) + ".") if names else
          "Give an unnamed list of losses, one per output, in order.")


def target_spec(loss: Any, shape: tuple, dtype: str) -> tuple[tuple, str]:
    """The shape and dtype of the targets a loss compares with an output.

    Keras feeds float targets as `floatx()` whatever the output's dtype
    (under `mixed_bfloat16` an output is bfloat16, its targets float32).
    """
    import keras

    if "sparse" in _loss_name(loss).lower():
        return tuple(shape[:-1]), "int32"
    if keras.backend.is_float_dtype(dtype):
        dtype = keras.config.floatx()
    return tuple(shape), dtype


def total_loss(losses: list | None, ys: list, preds: list) -> Any:
    """The scalar the step differentiates."""
    import jax.numpy as jnp

    if losses is None:
        return sum(jnp.mean(p.astype("float32")) for p in preds)
    return sum(jnp.mean(fn(y, p)) for fn, y, p in zip(losses, ys, preds))


# --------------------------------------------------------------------------
# Sharded specs


def abstract(placement: Placement, dtype: Any, mesh: Any) -> Any:
    """A `jax.ShapeDtypeStruct` placed as `placement` says on `mesh` (a
    JAX mesh)."""
    import jax

    return jax.ShapeDtypeStruct(placement.shape, dtype,
                                sharding=placement.named_sharding(mesh))


def sharded(shape: Any, dtype: Any, mesh: Any, axes: Any) -> Any:
    """`abstract()` for a shape and a layout's entries."""
    return abstract(Placement.of(shape, axes, mesh_sizes(mesh)), dtype,
                    mesh)


def data_spec(distribution: Any, shape: list[int], dtype: str, mesh: Any
              ) -> Any:
    """A batch's spec, placed as the distribution places data."""
    layout = distribution.get_data_layout(tuple(shape))
    return sharded(shape, dtype, mesh, list(layout.axes))


def shard_bytes(spec: Any) -> float:
    """Bytes one device holds of a sharded spec."""
    return float(sharding_placement(spec.sharding, spec.shape,
                                    spec.dtype.itemsize).device_bytes)


# --------------------------------------------------------------------------
# The step's specs


@dataclass
class StepSpecs:
    """The abstract, sharded arguments of one training step.

    Attributes:
        optimizer: the shape-only optimizer the step applies.
        state: specs of (trainable, non-trainable, optimizer) variables.
        inputs: the model's inputs (`_Input`), for reports.
        xs, ys: specs of the inputs (as the model's input structure) and
            of the targets (None per output for the stand-in loss).
        losses: one loss per output, or None for the stand-in.
        loss_text: how to name the losses.
    """

    optimizer: Any
    state: tuple
    inputs: list
    xs: Any
    ys: list
    losses: Any
    loss_text: str


def step_specs(model: Any, placement: ModelPlacement, distribution: Any,
               optimizer: Any, loss: Any, batch_size: int,
               input_shapes: dict | None) -> StepSpecs:
    """The abstract, sharded arguments of one training step, for a model
    placed as `placement` says (`plan/placements.py`)."""
    from keras import tree

    mesh = placement.placer.layout_map.device_mesh.backend_mesh
    opt, state = _state_specs(model, placement, mesh, optimizer)
    structure, inputs = input_specs(model, batch_size, input_shapes)
    preds = _output_specs(model, structure, inputs, state)
    losses, loss_text, targets = _target_specs(loss, model, preds)
    xs = tree.map_structure(
        lambda f: data_spec(distribution, f.shape, f.dtype, mesh), structure)
    ys = [data_spec(distribution, s, d, mesh) if losses is not None else
          None for s, d in targets]
    return StepSpecs(opt, state, inputs, xs, ys, losses, loss_text)


def _state_specs(model: Any, placement: ModelPlacement, mesh: Any,
                 optimizer: Any) -> tuple[Any, tuple]:
    """The optimizer, and sharded specs of (trainable, non-trainable,
    optimizer) variables, each placed by path as the plan places it (the
    optimizer is built anew, as the step applies it)."""
    trainable = [abstract(placement.of(v), v.dtype, mesh)
                 for v in model.trainable_variables]
    frozen = [abstract(placement.of(v), v.dtype, mesh)
              for v in model.non_trainable_variables]
    opt, opt_vars = optimizer_variables(
        optimizer, model, list(model.trainable_variables))
    slots = [abstract(placed.placement, v.dtype, mesh) for v, placed, _ in
             optimizer_placements(placement.placer, opt_vars,
                                  placement.by_path)]
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
            kinds.INPUT_SHAPES, "The model can't run on inputs of these shapes.",
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
            kinds.LOSS, f"Loss {loss_text} does not fit the model's outputs.",
            x="Outputs of shape " + ", ".join(
           format_shape(p.shape) for p in preds) + ": " +
              str(e).splitlines()[0][:300],
            i="Give a loss for these outputs, or `loss = NULL` "
              "for the stand-in (the mean of the outputs).") from e
    return losses, loss_text, targets


def lower_step(model: Any, distribution: Any, specs: StepSpecs) -> Any:
    """One training step (forward, gradients, optimizer update), lowered
    for the sharded state and batch of `specs` without running it.

    Raises what JAX raises when it can't lower the step (`layout_cost.py`
    classes it as a `compile` error).
    """
    import jax
    from keras import tree

    optimizer, losses, state = specs.optimizer, specs.losses, specs.state

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
    with distribution.scope():
        return jax.jit(step, donate_argnums=0,
                       out_shardings=(None, shardings)).lower(
            state, (specs.xs, specs.ys))


