"""What an object is, decided where Keras is.

R asks `object_type(x)` instead of testing Keras's class paths
(`keras.src.distribution.distribution_lib.*`), which Keras is free to
move. Every test here is an `isinstance` against a public name. (An
object's *type*: a condition's *kind* is another thing, `kinds.py`'s.)
"""

from __future__ import annotations

from typing import Any

from .errors import KerasmeshError
from . import kinds

_TYPES: tuple[tuple[str, str], ...] = (
    # (type, public name under `keras`), most specific first.
    ("device_mesh", "distribution.DeviceMesh"),
    ("layout_map", "distribution.LayoutMap"),
    ("tensor_layout", "distribution.TensorLayout"),
    ("distribution", "distribution"),
    ("model", "Model"),
    ("layer", "Layer"),
    ("variable", "Variable"),
    ("optimizer", "optimizers.Optimizer"),
)


def _distribution_base():
    """The class every Keras distribution derives from.

    Keras exports `DataParallel` and `ModelParallel` but not their base
    class, so it is found as their nearest common base: a user's own
    `Distribution` subclass is a distribution too.
    """
    import keras

    model_parallel = keras.distribution.ModelParallel.__mro__
    for cls in keras.distribution.DataParallel.__mro__:
        if cls in model_parallel and cls is not object:
            return cls
    return None


def _public(name: str):
    """The class `keras.<name>`, or None when this Keras lacks it."""
    if name == "distribution":
        return _distribution_base()
    import keras

    obj = keras
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def object_type(x: Any) -> str:
    """What `x` is, as kerasmesh names it.

    Args:
        x: any Python object.

    Returns:
        One of "device_mesh", "layout_map", "tensor_layout",
        "distribution", "model", "layer", "variable", "optimizer", or
        "other" for anything else.
    """
    for type_name, name in _TYPES:
        cls = _public(name)
        if isinstance(cls, type) and isinstance(x, cls):
            return type_name
    return "other"


def check_model(model: Any, arg: str = "model") -> None:
    """`model` must be a Keras model (anything with `variables`).

    Raises:
        KerasmeshError: kind `model`, saying what was received.
    """
    if not hasattr(model, "variables") or isinstance(model, type):
        raise KerasmeshError(
            kinds.MODEL, f"`{arg}` must be a Keras model.",
            received=model)


def check_built(model: Any, arg: str = "model") -> None:
    """`model` must be a built Keras model: one not built has no
    variables yet to report (one built without any, only `Flatten`, is
    fine).

    Raises:
        KerasmeshError: kind `model`.
    """
    check_model(model, arg)
    if not getattr(model, "built", True):
        raise KerasmeshError(
            kinds.MODEL, f"`{arg}` must be built.",
            x="It has no variables yet.",
            i="Give it an `Input()`, or call it on data once.")
