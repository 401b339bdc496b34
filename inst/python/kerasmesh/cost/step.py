"""The abstract training step: its inputs, targets and loss.

Everything here is a `jax.ShapeDtypeStruct`, with the `NamedSharding` a
layout gives it: `cost.layout_cost()` lowers the step on these, so nothing
of the model's size is allocated.
"""

from __future__ import annotations

import math
from typing import Any

from ..core.errors import KerasmeshError, VALUE, received
from ..core.mesh import format_shape
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
        names = list(getattr(model, "output_names", []) or [])
        missing = [n for n in names if n not in loss]
        if len(names) != n_outputs or missing:
            raise KerasmeshError(
                kinds.LOSS, "`loss` must give a loss for each output.",
                x=f"Outputs without a loss: "
                  f"{', '.join(missing) or 'unknown names'}.")
        loss = [loss[n] for n in names]
    if isinstance(loss, (list, tuple)):
        if len(loss) != n_outputs:
            raise KerasmeshError(
                kinds.LOSS, "`loss` must give one loss per output.",
                x=f"{len(loss)} losses for {n_outputs} outputs.")
        return [_one_loss(x) for x in loss], \
            ", ".join(_loss_name(x) for x in loss)
    return [_one_loss(loss)] * n_outputs, _loss_name(loss)


def target_spec(loss: Any, shape: tuple, dtype: str) -> tuple[tuple, str]:
    """The shape and dtype of the targets a loss compares with an output."""
    if "sparse" in _loss_name(loss).lower():
        return tuple(shape[:-1]), "int32"
    return tuple(shape), dtype


def total_loss(losses: list | None, ys: list, preds: list) -> Any:
    """The scalar the step differentiates."""
    import jax.numpy as jnp

    if losses is None:
        return sum(jnp.mean(p.astype("float32")) for p in preds)
    return sum(jnp.mean(fn(y, p)) for fn, y, p in zip(losses, ys, preds))


# --------------------------------------------------------------------------
# The step


def sharded(shape: Any, dtype: Any, mesh: Any, axes: Any) -> Any:
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    spec = PartitionSpec(*[None if a is None else
                           (tuple(a) if isinstance(a, (list, tuple)) else a)
                           for a in axes])
    return jax.ShapeDtypeStruct(tuple(int(s) for s in shape), dtype,
                                sharding=NamedSharding(mesh, spec))


def data_spec(distribution: Any, shape: list[int], dtype: str, mesh: Any
               ) -> Any:
    layout = distribution.get_data_layout(tuple(shape))
    return sharded(shape, dtype, mesh, list(layout.axes))


def shard_bytes(spec: Any) -> float:
    shard = spec.sharding.shard_shape(spec.shape)
    return float(math.prod(shard) * spec.dtype.itemsize)
