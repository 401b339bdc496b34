"""Quantizing a sharded model outside its distribution: a warning.

`Model.quantize("int8")` replaces each kernel with new variables (the int8
kernel and its scale). Keras places a new variable by the distribution in
effect when it is made, so outside the model's distribution the quantized
kernels land on one device, silently: the model is no longer sharded, and
the next step under the distribution fails on mixed devices.

kerasmesh watches `quantize()` on the models it meets while one of its
distributions is set: those made then (`keras.Model.__new__`, wrapped by
the guard while it is installed) and those trained, evaluated or used to
predict then (the guard's wrappers). The watch is the model's own
`quantize` attribute (where Keras keeps one per layer already), which
warns, then calls Keras's; Keras's classes are not changed by it. Inside a
distribution, or for a model on one device, it only calls Keras.
"""

from __future__ import annotations

import functools
from typing import Any

from ..core.errors import warn
from ..core import kinds


def watch(model: Any) -> None:
    """Make `model.quantize()` warn when it would un-shard the model
    (idempotent; objects without a `__dict__` are left alone).

    Keras itself keeps a per-model `quantize` (its tracker's wrapper, set
    when the layer is made); the watch wraps whichever the model has.
    """
    if getattr(model, "__dict__", None) is None or watched(model):
        return
    inner = getattr(model, "quantize", None)
    if inner is None:
        return

    @functools.wraps(inner)
    def quantize(*args: Any, **kwargs: Any) -> Any:
        check_quantize(model)
        return inner(*args, **kwargs)

    quantize._kerasmesh_watch = True
    object.__setattr__(model, "quantize", quantize)


def watched(model: Any) -> bool:
    """Whether `model.quantize` is kerasmesh's watch."""
    q = getattr(model, "__dict__", {}).get("quantize")
    return getattr(q, "_kerasmesh_watch", False)


def spread_variables(model: Any) -> list[str]:
    """Paths of the model's variables whose values span several devices."""
    out = []
    for v in getattr(model, "variables", []):
        sharding = getattr(getattr(v, "_value", None), "sharding", None)
        if sharding is not None and len(sharding.device_set) > 1:
            out.append(v.path)
    return out


def check_quantize(model: Any) -> None:
    """Warn (kind `quantize_placement`) when `model` lives on several
    devices and no distribution is in effect: its quantized kernels would
    be made on one device."""
    import keras

    if keras.distribution.distribution() is not None:
        return
    spread = spread_variables(model)
    if not spread:
        return
    devices = max(len(v._value.sharding.device_set) for v in model.variables
                  if v.path in set(spread))
    warn(kinds.QUANTIZE_PLACEMENT,
         "Quantizing outside the model's distribution puts the quantized "
         "weights on one device.",
         [("x", f"{len(spread)} of the model's variables, such as "
                f"\"{spread[0]}\", live on {devices} devices; `quantize()` "
                "makes the new kernels with no distribution in effect."),
          ("i", "Quantize inside the distribution the model was built "
                "with: `with_distribution(dist, model$quantize(\"int8\"))`.")])
