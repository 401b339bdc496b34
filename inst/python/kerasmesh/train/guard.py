"""The training guard: a model is checked against the distribution first.

Keras fails late when a model's variables live on another mesh than the
current distribution's (JAX's "Received incompatible devices for jitted
computation" at the first step) and mid-fit when the batch axis can't
divide a batch. While a distribution set by kerasmesh is in effect,
`keras.Model`'s `fit()`, `evaluate()`, `predict()` and `*_on_batch()`
check both first.

While installed, the guard also wraps `keras.Model.__new__`, so that every
model made meanwhile has its `quantize()` watched (`quantize.py`).

The guard is installed when kerasmesh sets a distribution and removed when
it sets none (`set_distribution(None)`, or leaving `with_distribution()`
back to no distribution): outside, `keras.Model.fit` is Keras's own
function again, and nothing else in the process sees a wrapper. The
distribution that checks each variable as it is created is `checked.py`'s.
"""

from __future__ import annotations

import functools
from typing import Any
from collections.abc import Callable, Iterable

from ..core.errors import KerasmeshError, KerasmeshWarning, warn
from ..core.kinds import WARNING
from ..plan.batches import batch_problems
from ..plan.planner import first_error, plan_layout
from ..core import kinds
from . import quantize
from .batches import Feed, call_feeds
from ..core.text import string

GUARDED_METHODS = ("fit", "evaluate", "predict", "train_on_batch",
                   "test_on_batch", "predict_on_batch")


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
    """Wrap `keras.Model`'s training and inference methods, and its
    `__new__` so that models made meanwhile have their `quantize()`
    watched (`quantize.watch()`) (idempotent)."""
    import keras

    for name in GUARDED_METHODS:
        if name in _REPLACED:
            continue
        _REPLACED[name] = keras.Model.__dict__.get(name)
        setattr(keras.Model, name, _guarded(getattr(keras.Model, name)))
    if "__new__" not in _REPLACED:
        _REPLACED["__new__"] = keras.Model.__dict__.get("__new__")
        keras.Model.__new__ = _watching_new(keras.Model.__new__)


def _watching_new(new: Callable) -> Any:
    """`keras.Model.__new__` that watches the model's `quantize()`."""
    @functools.wraps(new)
    def wrapper(cls, *args, **kwargs):
        model = new(cls, *args, **kwargs)
        quantize.watch(model)
        return model

    wrapper._kerasmesh_guard = True
    return staticmethod(wrapper)


def uninstall() -> None:
    """Give `keras.Model` back its own methods (idempotent).

    A method that someone else replaced after the guard is left alone.
    """
    import keras

    for name, own in list(_REPLACED.items()):
        current = keras.Model.__dict__.get(name)
        if isinstance(current, staticmethod):
            current = current.__func__
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
        quantize.watch(self)
        check_placement(self, step=method.__name__)
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


def step_variables(model: Any, step: str = "fit") -> list:
    """What `step` (one of GUARDED_METHODS) reads: the model's variables;
    its metrics' to evaluate or train; its optimizer's to train
    (`compile()` makes its step count and learning rate)."""
    out = list(getattr(model, "variables", []))
    if not step.startswith("predict"):
        out += getattr(model, "metrics_variables", [])
    if step in ("fit", "train_on_batch"):
        out += getattr(getattr(model, "optimizer", None), "variables", [])
    return out


def misplaced_variables(model: Any, dist: Any,
                        step: str = "fit") -> list[tuple[str, str]]:
    """The variables a `step` reads that are not on `dist`'s mesh.

    A variable placed on a mesh must be on the same mesh (shape, axis
    names, and devices in the same order): JAX refuses to combine arrays of
    meshes that differ in any of these. Other variables (on one device)
    must be on the mesh's devices.

    Returns:
        (path, why) pairs, why being "devices" (not on a mesh: made before
        the distribution), "other_devices" (on a mesh over other devices)
        or "mesh" (on another mesh over the same devices).
    """
    mesh = dist.device_mesh.backend_mesh
    wanted = mesh_signature(mesh)
    mesh_devices = set(mesh.devices.flat)
    out = []
    for v in step_variables(model, step):
        sharding = getattr(getattr(v, "_value", None), "sharding", None)
        if sharding is None:
            continue
        if set(sharding.device_set) != mesh_devices:
            on_mesh = getattr(sharding, "mesh", None) is not None and \
                len(sharding.device_set) > 1
            out.append((v.path, "other_devices" if on_mesh else "devices"))
        elif getattr(sharding, "mesh", None) is not None and \
                mesh_signature(sharding.mesh) != wanted:
            out.append((v.path, "mesh"))
    return out


def check_placement(model: Any, dist: Any = None, step: str = "fit") -> None:
    """Raise when the variables a `step` reads (`step_variables()`) live
    outside the distribution's mesh.

    Raises:
        KerasmeshError: kind `model_placement`.
    """
    import keras

    dist = dist if dist is not None else keras.distribution.distribution()
    if dist is None:
        return
    misplaced = misplaced_variables(model, dist, step)
    if not misplaced:
        return
    n = len(misplaced)
    path, why = misplaced[0]
    subject = (f"{n} variables, such as {string(path)}, were" if n > 1 else
               f"1 variable, {string(path)}, was")
    if why == "mesh":
        what = (f"{subject} created on another mesh over the same devices "
                "(a different order, shape or axis names).")
    elif why == "other_devices":
        what = (f"{subject} created on another mesh, over other devices "
                "than the distribution's.")
    else:
        what = f"{subject} created before the distribution was set."
    raise KerasmeshError(
        kinds.MODEL_PLACEMENT,
        "The model's variables must live on the distribution's mesh.",
        x=what,
        i="Create and compile the model after `set_distribution()`, or "
          "inside `with_distribution()`, with the distribution it trains "
          "under.")


# --------------------------------------------------------------------------
# The batch and the layout


def batch_axis(dist: Any) -> tuple[str, dict[str, int]]:
    """The distribution's batch axis and its mesh's axis sizes."""
    mesh = dist.device_mesh
    sizes = {str(a): int(n) for a, n in zip(mesh.axis_names, mesh.shape)}
    return dist.batch_dim_name or next(iter(sizes)), sizes


def check_feeds(feeds: Iterable[Feed], dist: Any) -> None:
    """Raise the first batch of `feeds` that the distribution's batch axis
    can't split (kind `batch_size`), before anything runs."""
    axis, sizes = batch_axis(dist)
    for f in feeds:
        error = first_error(batch_problems(axis, f.batch_size, sizes,
                                           f.samples, f.what, f.argument))
        if error is not None:
            raise error


def check_before_training(model: Any, name: str = "fit", args: tuple = (),
                          kwargs: dict | None = None,
                          function: Callable | None = None) -> None:
    """Check a model against the current distribution before it runs.

    Under DataParallel and ModelParallel, every batch the call will feed
    (`batches.call_feeds()`: the training data, a last partial batch, the
    validation split or data, the data to evaluate or predict) must split
    evenly over the batch axis, or a `KerasmeshError` of kind `batch_size`
    names it. Under ModelParallel the model is also planned under the
    layout: the first problem that would crash is raised, and rules that
    match nothing and layouts shorter than a variable's rank are warned
    about once per model and rule set. Does nothing unless such a
    distribution is set and the check is enabled.

    Args:
        model: the model whose method was called.
        name: the method's name ("fit", "predict_on_batch", ...).
        args, kwargs: the call's arguments, without the model.
        function: Keras's own method, whose signature reads the call.
    """
    import keras
    from keras.distribution import DataParallel, ModelParallel

    dist = keras.distribution.distribution()
    if not _AUTO_CHECK["enabled"] or \
            not isinstance(dist, (DataParallel, ModelParallel)) or \
            not getattr(model, "built", False):
        return
    feeds = call_feeds(name, args, kwargs or {}, function, model)
    key = (id(model), id(dist), tuple(feeds))
    seen = _AUTO_CHECK["checked"]
    if key in seen:
        return
    check_feeds(feeds, dist)
    if isinstance(dist, ModelParallel):
        check_layout(model, dist, feeds[0].batch_size if feeds else None,
                     key)
    if len(seen) > 256:
        seen.clear()
    seen[key] = True


def check_layout(model: Any, dist: Any, batch_size: int | None,
                 key: tuple) -> None:
    """Plan `model` under `dist`'s layout map: raise the first problem that
    would crash; warn about the others once per model and distribution."""
    seen = _AUTO_CHECK["checked"]
    try:
        plan = plan_layout(model, dist, batch_size=batch_size,
                           optimizer=None)
    except Exception as e:  # noqa: BLE001 - a failed check must not stop
        warn(kinds.LAYOUT_CHECK, f"kerasmesh could not check the layout: {e}",
             category=KerasmeshLayoutWarning)
        return
    error = first_error(plan["problems"])
    if error is not None:
        raise error
    if not any(k[:2] == key[:2] for k in seen):
        warn_problems(plan["problems"])


def warn_problems(problems: Iterable[dict]) -> None:
    """A warning of its own kind for each problem that would silently
    mis-shard (`kerasmesh_warning_<kind>` in R)."""
    for p in problems:
        if p["severity"] == WARNING:
            warn(p["kind"], p["message"], p["bullets"],
                 category=KerasmeshLayoutWarning)
