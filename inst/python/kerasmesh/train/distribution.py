"""Distributions: DataParallel and ModelParallel, checked before Keras."""

from __future__ import annotations

from typing import Any

from ..core.backend import require_backend
from ..core.describe import object_type
from ..core.errors import KerasmeshError
from ..layout_map.rules import describe_layout_map
from ..mesh.data_parallel import data_parallel_on
from ..mesh.device_mesh import (check_batch_dim_name, describe_mesh,
                                resolve_devices)
from . import checked, guard
from ..core import kinds


def data_parallel(mesh: Any = None, devices: Any = None,
                  auto_shard_dataset: bool = True) -> dict:
    """A DataParallel distribution over a mesh, devices, or all devices.

    Raises:
        KerasmeshError: kind `distribution_argument` when both `mesh` and
            `devices` are given.
    """
    require_backend(("jax",), "A distribution")
    import keras

    if mesh is not None and devices is not None:
        raise KerasmeshError(
            kinds.DISTRIBUTION_ARGUMENT,
            "`mesh` and `devices` can't both be given.",
            i="Keras would silently ignore `devices`; pass one of "
              "them.")
    auto_shard_dataset = bool(auto_shard_dataset)
    if mesh is not None:
        describe_mesh(mesh)
        dist = data_parallel_on(mesh, auto_shard_dataset)
    else:
        names = resolve_devices(devices)
        dist = keras.distribution.DataParallel(
            devices=names, auto_shard_dataset=auto_shard_dataset)
    return describe_distribution(dist)


def model_parallel(layout_map: Any, batch_dim_name: str | None = None,
                   auto_shard_dataset: bool = True) -> dict:
    """A ModelParallel distribution whose batch axis is a mesh axis.

    Its variables' layouts are checked as they are created, so a layout
    that can't apply names the variable and the rule.

    Raises:
        KerasmeshError: kind `batch_dim_name` for an axis not in the mesh.
    """
    require_backend(("jax",), "A distribution")

    described = describe_layout_map(layout_map)
    axes = described["mesh"]["axis_names"]
    if batch_dim_name is None:
        batch_dim_name = axes[0]
    check_batch_dim_name(batch_dim_name, axes)
    dist = checked.checked_model_parallel(layout_map, batch_dim_name,
                                  auto_shard_dataset)
    return describe_distribution(dist)


def describe_distribution(dist: Any) -> dict | None:
    """Plain description of a Keras distribution (None for None)."""
    if dist is None:
        return None
    from keras.distribution import DataParallel, ModelParallel

    if isinstance(dist, ModelParallel):
        type_name = "model_parallel"
        layout = describe_layout_map(dist._layout_map)
    elif isinstance(dist, DataParallel):
        type_name, layout = "data_parallel", None
    else:
        type_name, layout = "other", None
    return {
        "distribution": dist,
        "type": type_name,
        "class": type(dist).__name__,
        "mesh": describe_mesh(dist.device_mesh),
        "batch_dim_name": dist.batch_dim_name,
        "auto_shard_dataset": bool(dist.auto_shard_dataset),
        "layout_map": layout,
    }


def get_distribution() -> dict | None:
    """`describe_distribution()` of the current global Keras distribution."""
    import keras

    return describe_distribution(keras.distribution.distribution())


def set_distribution(dist: Any, check_layout: bool | None = None) -> dict:
    """Set the global distribution; describe the previous one.

    Args:
        dist: a Keras distribution, or None; any other object is refused
            and nothing changes, so that R can check and set in one call
            and word the error for its own argument.
        check_layout: whether training checks the layout first (see
            `guard.check_before_training()`); None leaves it as it is.

    Returns:
        `{"set": True, "previous": describe_distribution(previous)}` (its
        `"distribution"` is the Keras object, to restore it with), or
        `{"set": False, "type": object_type(dist)}` when `dist` was refused.

    The training guard (guard.py) is installed while a distribution is set
    and removed when `dist` is None, so Keras's own methods come back.
    """
    if dist is not None and object_type(dist) != "distribution":
        return {"set": False, "type": object_type(dist)}
    require_backend(("jax",), "A distribution")
    import keras

    previous = keras.distribution.distribution()
    if check_layout is not None:
        guard.set_auto_check(check_layout)
    keras.distribution.set_distribution(dist)
    guard.follow(dist)
    return {"set": True, "previous": describe_distribution(previous)}
