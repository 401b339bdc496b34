"""The training guard: a model is checked against the distribution first.

Keras fails late when a model's variables live on another mesh than the
current distribution's (JAX's "Received incompatible devices for jitted
computation" at the first step) and mid-fit when the batch axis can't
divide a batch. While a distribution set by kerasmesh is in effect,
`keras.Model`'s `fit()`, `evaluate()`, `predict()` and `*_on_batch()`
check both first.

The guard is installed when kerasmesh sets a distribution and removed when
it sets none (`set_distribution(None)`, or leaving `with_distribution()`
back to no distribution): outside, `keras.Model.fit` is Keras's own
function again, and nothing else in the process sees a wrapper. The
distribution that checks each variable as it is created is `checked.py`'s.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any
from collections.abc import Callable, Iterable

from ..core.errors import KerasmeshError, KerasmeshWarning, warn
from ..core.kinds import WARNING
from ..plan.planner import first_error, plan_layout
from ..core import kinds

GUARDED_METHODS = ("fit", "evaluate", "predict", "train_on_batch",
                   "test_on_batch", "predict_on_batch")
TRAINING_METHODS = ("fit", "evaluate", "predict")
DEFAULT_BATCH_SIZE = 32


class KerasmeshLayoutWarning(KerasmeshWarning):
    """A layout that would silently replicate or mis-shard variables.

    The guard warns with `errors.warn()`, as the rest of the shim does, so
    R signals `kerasmesh_warning_<kind>`: through the envelope when the
    shim was called from R, through R's registered handler when R called
    `fit()` itself (see `errors._ROUTE`)."""


# Whether the guard checks the layout before training (R sets it from the
# option `kerasmesh.check_layout`), and the calls already checked.
_AUTO_CHECK: dict[str, Any] = {"enabled": True, "checked": {}}
# Method name -> what `keras.Model.__dict__` held before the guard: the
# object, or None when the method was inherited.
_REPLACED: dict[str, Any] = {}


def set_auto_check(enabled: bool) -> bool:
    """Turn the pre-training layout check on or off; return the old value."""
    old = _AUTO_CHECK["enabled"]
    _AUTO_CHECK["enabled"] = bool(enabled)
    return old


# --------------------------------------------------------------------------
# Installing and removing


def install() -> None:
    """Wrap `keras.Model`'s training and inference methods (idempotent)."""
    import keras

    for name in GUARDED_METHODS:
        if name in _REPLACED:
            continue
        _REPLACED[name] = keras.Model.__dict__.get(name)
        setattr(keras.Model, name, _guarded(getattr(keras.Model, name)))


def uninstall() -> None:
    """Give `keras.Model` back its own methods (idempotent).

    A method that someone else replaced after the guard is left alone.
    """
    import keras

    for name, own in list(_REPLACED.items()):
        current = keras.Model.__dict__.get(name)
        if getattr(current, "_kerasmesh_guard", False):
            if own is None:
                delattr(keras.Model, name)
            else:
                setattr(keras.Model, name, own)
        del _REPLACED[name]


def installed() -> bool:
    """Whether the guard is installed now."""
    return bool(_REPLACED)


def follow(dist: Any) -> None:
    """Install the guard for a distribution; remove it for None."""
    if dist is None:
        uninstall()
    else:
        install()


def _guarded(method: Callable) -> Callable:
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        check_placement(self)
        check_before_training(self, method.__name__, args, kwargs,
                              function=method)
        return method(self, *args, **kwargs)

    wrapper._kerasmesh_guard = True
    return wrapper


# --------------------------------------------------------------------------
# Placement: the model's variables on the distribution's mesh


def mesh_signature(mesh: Any) -> tuple:
    """A JAX mesh as (shape, axis names, device ids in order)."""
    devices = mesh.devices
    return (tuple(devices.shape), tuple(str(a) for a in mesh.axis_names),
            tuple(int(d.id) for d in devices.flat))


def misplaced_variables(model: Any, dist: Any) -> list[tuple[str, str]]:
    """The model's variables that are not on `dist`'s mesh.

    A variable placed on a mesh must be on the same mesh (shape, axis
    names, and devices in the same order): JAX refuses to combine arrays of
    meshes that differ in any of these. Other variables (on one device)
    must be on the mesh's devices.

    Returns:
        (path, why) pairs, why being "devices" or "mesh".
    """
    mesh = dist.device_mesh.backend_mesh
    wanted = mesh_signature(mesh)
    mesh_devices = set(mesh.devices.flat)
    out = []
    for v in getattr(model, "variables", []):
        sharding = getattr(getattr(v, "_value", None), "sharding", None)
        if sharding is None:
            continue
        if set(sharding.device_set) != mesh_devices:
            out.append((v.path, "devices"))
        elif getattr(sharding, "mesh", None) is not None and \
                mesh_signature(sharding.mesh) != wanted:
            out.append((v.path, "mesh"))
    return out


def check_placement(model: Any, dist: Any = None) -> None:
    """Raise when a model's variables live outside the distribution's mesh.

    Raises:
        KerasmeshError: kind `model_placement`.
    """
    import keras

    dist = dist if dist is not None else keras.distribution.distribution()
    if dist is None:
        return
    misplaced = misplaced_variables(model, dist)
    if not misplaced:
        return
    n = len(misplaced)
    path, why = misplaced[0]
    subject = (f"{n} variables, such as \"{path}\", were" if n > 1 else
               f"1 variable, \"{path}\", was")
    if why == "mesh":
        what = (f"{subject} created on another mesh over the same devices "
                "(a different order, shape or axis names).")
    else:
        what = f"{subject} created before the distribution was set."
    raise KerasmeshError(
        kinds.MODEL_PLACEMENT,
        "The model's variables must live on the distribution's mesh.",
        x=what,
        i="Create the model after `set_distribution()`, or inside "
          "`with_distribution()`, with the distribution it trains "
          "under.")


# --------------------------------------------------------------------------
# The batch and the layout


def _first_shape(x: Any) -> Any:
    shape = getattr(x, "shape", None)
    if shape is None and isinstance(x, (list, tuple)) and x:
        shape = getattr(x[0], "shape", None)
    if shape is None and isinstance(x, dict) and x:
        shape = getattr(next(iter(x.values())), "shape", None)
    return shape


def batch_of_call(name: str, args: tuple, kwargs: dict,
                  function: Callable | None = None, model: Any = None
                  ) -> tuple[int | None, int | None]:
    """The batch size and sample count a training call will use.

    The call's arguments are bound to the signature of `function` (Keras's
    own method by default), so positional and named arguments count alike.
    Returns (None, None) when the call does not bind (Keras then raises its
    own error) or `x` has no shape (a dataset or generator).
    """
    import keras

    function = function or getattr(keras.Model, name)
    function = getattr(function, "__wrapped__", function)
    try:
        bound = inspect.signature(function).bind(model, *args, **kwargs)
    except TypeError:
        return None, None
    shape = _first_shape(bound.arguments.get("x"))
    if shape is None or not len(shape) or shape[0] is None:
        return None, None
    samples = int(shape[0])
    if name.endswith("_on_batch"):
        return samples, None
    batch_size = bound.arguments.get("batch_size")
    if batch_size is None:
        batch_size = DEFAULT_BATCH_SIZE
    return int(batch_size), samples


def check_before_training(model: Any, name: str = "fit", args: tuple = (),
                          kwargs: dict | None = None,
                          function: Callable | None = None) -> None:
    """Check a model against the current ModelParallel before it runs.

    Raises the first problem that would crash (such as a batch size, or a
    last batch, the batch axis can't divide) as a `KerasmeshError`, and
    warns once per model and rule set about rules that match nothing and
    layouts shorter than a variable's rank. Does nothing unless a
    ModelParallel distribution is set and the check is enabled.

    Args:
        model: the model whose method was called.
        name: the method's name ("fit", "predict_on_batch", ...).
        args, kwargs: the call's arguments, without the model.
        function: Keras's own method, whose signature reads the call.
    """
    import keras
    from keras.distribution import ModelParallel

    dist = keras.distribution.distribution()
    if not _AUTO_CHECK["enabled"] or not isinstance(dist, ModelParallel) \
            or not getattr(model, "built", False):
        return
    batch_size, samples = batch_of_call(name, args, kwargs or {}, function,
                                        model)
    key = (id(model), id(dist), batch_size, samples)
    seen = _AUTO_CHECK["checked"]
    if key in seen:
        return
    try:
        plan = plan_layout(model, dist, batch_size=batch_size,
                           optimizer=None, samples=samples)
    except Exception as e:  # noqa: BLE001 - a failed check must not stop
        warn(kinds.LAYOUT_CHECK, f"kerasmesh could not check the layout: {e}",
             category=KerasmeshLayoutWarning)
        seen[key] = True
        return
    error = first_error(plan["problems"])
    if error is not None:
        raise error
    if not any(k[:2] == key[:2] for k in seen):
        warn_problems(plan["problems"])
    if len(seen) > 256:
        seen.clear()
    seen[key] = True


def warn_problems(problems: Iterable[dict]) -> None:
    """A warning of its own kind for each problem that would silently
    mis-shard (`kerasmesh_warning_<kind>` in R)."""
    for p in problems:
        if p["severity"] == WARNING:
            warn(p["kind"], p["message"], p["bullets"],
                 category=KerasmeshLayoutWarning)
