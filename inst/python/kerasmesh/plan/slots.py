"""Optimizer variables, built shape-only, with the model variable each
slot copies (Keras gives a slot its reference variable's layout)."""

from __future__ import annotations

from typing import Any

from ..core.errors import KerasmeshError, VALUE, received
from ..core.scopes import no_distribution, shape_only
from ..core import kinds


def _optimizer_from(optimizer: Any, model: Any) -> Any:
    """A fresh optimizer like `optimizer` (or the model's compiled one)."""
    import keras

    if optimizer is None:
        optimizer = getattr(model, "optimizer", None)
        if optimizer is None:
            return None
    try:
        if isinstance(optimizer, keras.optimizers.Optimizer):
            return type(optimizer).from_config(optimizer.get_config())
        return keras.optimizers.get(optimizer)
    except (ValueError, TypeError) as e:
        raise KerasmeshError(
            kinds.OPTIMIZER,
            "`optimizer` must be a Keras optimizer or the name of one.",
            [received(optimizer,
                      f"Received {VALUE}: {str(e).splitlines()[0]}")],
            i='For example "adam" or "sgd".') from e


def fresh_optimizer(optimizer: Any, model: Any) -> Any:
    """A fresh, unbuilt optimizer like `optimizer` (a name, an optimizer,
    or None for the model's compiled one; None when it has none).

    Raises:
        KerasmeshError: kind `optimizer` for something Keras can't use.
    """
    with no_distribution():
        # Optimizers create their counters from values, which a stateless
        # scope refuses; two scalars are allocated, the slots are not.
        return _optimizer_from(optimizer, model)


def _record_slots(optimizer: Any, slots: dict[int, Any]) -> None:
    """Make `optimizer` note which model variable each slot copies."""
    inner = getattr(optimizer, "inner_optimizer", None)
    if inner is not None:
        _record_slots(inner, slots)
    original = optimizer.add_variable_from_reference

    def recording(reference_variable, *args, **kwargs):
        variable = original(reference_variable, *args, **kwargs)
        slots[id(variable)] = reference_variable
        return variable

    optimizer.add_variable_from_reference = recording


def optimizer_variables(optimizer: Any, model: Any, trainable: list
                        ) -> tuple[Any, list[tuple[Any, Any]]]:
    """A shape-only copy of the optimizer, built for `trainable`.

    Returns:
        (optimizer or None, [(variable, reference variable or None)]).
        Slots copy a model variable's layout in Keras; other optimizer
        variables (counters, factored slots) are looked up in the layout map.

    Raises:
        KerasmeshError: kind `optimizer` for something Keras can't use.
    """
    optimizer = fresh_optimizer(optimizer, model)
    if optimizer is None:
        return None, []
    slots: dict[int, Any] = {}
    _record_slots(optimizer, slots)
    with shape_only():
        optimizer.build(trainable)
    return optimizer, [(v, slots.get(id(v))) for v in optimizer.variables]
