"""Shards of a sharded tensor: which part of it each device holds.

Everything here works from shapes and shardings alone. `tensor_shards()`
asks JAX where a layout would put the shards of a tensor of a given shape
(`NamedSharding.devices_indices_map()`), without allocating it, so a
planned 16000 x 64000 kernel draws as fast as a placed 32 x 64 one;
`variable_shards()` reads the same facts from a placed variable's own
sharding.
"""

from __future__ import annotations

import difflib
from typing import Any

from ..core.describe import check_model
from ..core.axes import check_axes
from ..core.checks import is_whole
from ..core.errors import KerasmeshError, VALUE, quoted, received
from ..mesh.device_mesh import describe_mesh
from ..core.placer import check_placement
from ..core.placement import (Placement, itemsize, mesh_sizes,
                              sharding_placement)
from ..plan.planner import first_error
from .sharding import (shards_of, describe_backend_mesh, placement_facts,
                       variables_by_source)
from ..core import kinds
from ..core.text import string


def _check_shape(shape: Any) -> tuple[int, ...]:
    """A tensor shape: whole numbers >= 0 (an empty list is a scalar)."""
    if isinstance(shape, (int, float)) and not isinstance(shape, bool):
        shape = [shape]
    if not isinstance(shape, (list, tuple)):
        raise KerasmeshError(
            kinds.SHAPE, "`shape` must be a vector of whole numbers.",
            received=shape)
    out = []
    for i, s in enumerate(shape):
        if not is_whole(s):
            raise KerasmeshError(
                kinds.SHAPE, "`shape` must be a vector of whole numbers.",
                [received(s, f"Dimension {i + 1} is {VALUE}.")])
        out.append(int(s))
    return tuple(out)


def _backend_mesh(mesh: Any) -> Any:
    """The JAX mesh of a Keras DeviceMesh (or a JAX mesh itself)."""
    from keras.distribution import DeviceMesh

    if isinstance(mesh, DeviceMesh):
        return mesh.backend_mesh
    if hasattr(mesh, "devices") and hasattr(mesh, "axis_names"):
        return mesh
    raise KerasmeshError(
        kinds.DEVICE_MESH, "`mesh` must be a device mesh.",
        received=mesh)


def _picture(placement: Placement, dtype: str, shards: dict,
             mesh: dict | None, path: str | None, source: str) -> dict:
    return {
        "path": path,
        "source": source,
        "shape": list(placement.shape),
        "dtype": dtype,
        # Per dimension None, one axis name, or a list of several, for R.
        "axes": [list(e) if isinstance(e, tuple) else e
                 for e in placement.entries],
        **placement_facts(placement),
        "shards": shards,
        "mesh": mesh,
    }


def tensor_shards(mesh: Any, axes: Any, shape: Any,
                  dtype: str = "float32", path: str | None = None,
                  several: bool = False) -> dict:
    """Where a layout would put the shards of a tensor, allocating nothing.

    Args:
        mesh: a Keras `DeviceMesh`.
        axes: one entry per dimension, in any form `axes.check_axes()`
            takes: a mesh axis name or None (not split); shorter layouts
            are padded with None, as Keras pads them.
        shape: the tensor's shape.
        dtype: its data type, for byte counts.
        path: a variable path to show, or None.
        several: allow several axes on one dimension ("a+b", split over
            their product), as JAX may place an array; Keras layouts
            can't, so user-given axes never do.

    Returns:
        Shape, axes, shard shape, copies, bytes, the shards (see
        `shards_of()`) and `describe_mesh()` of the mesh.

    Raises:
        KerasmeshError: kinds `shape`, `dtype`, `layout_rank`,
            `layout_axes`, `layout_divisibility`, `device_mesh`.
    """
    jax_mesh = _backend_mesh(mesh)
    shape = _check_shape(shape)
    size = itemsize(dtype)
    sizes = mesh_sizes(jax_mesh)
    axes = check_axes(axes, list(sizes), None, several)
    placed = check_placement(path or "tensor", list(shape), list(axes), None, sizes,
                    size)
    error = first_error(placed.problems)
    if error is not None:
        raise error
    placement = placed.placement
    shards = shards_of(placement.named_sharding(jax_mesh), shape)
    desc = describe_mesh(mesh) if hasattr(mesh, "backend_mesh") else \
        describe_backend_mesh(jax_mesh)
    return _picture(placement, str(dtype), shards, desc, path, "planned")


def _find_variable(model: Any, path: str | None) -> Any:
    variables = [v for _, v in variables_by_source(model)]
    if not variables:
        raise KerasmeshError(
            kinds.VARIABLE_PATH, "There is no variable to picture.",
            x=f'Model "{model.name}" has no variables.',
            i="Picture a model with weights, or a tensor on a mesh: "
              "sharding_picture(mesh, axes = , shape = ).")
    if path is None:
        if len(variables) == 1:
            return variables[0]
        shown = [v.path for v in variables[:6]]
        raise KerasmeshError(
            kinds.VARIABLE_PATH,
            f"`path` must name one of the {len(variables)} variables.",
            i=f"Paths: {', '.join(quoted(shown))}"
              f"{', ...' if len(variables) > 6 else ''}.")
    for v in variables:
        if v.path == path:
            return v
    suffix = [v for v in variables if v.path.endswith("/" + path)]
    if len(suffix) == 1:
        return suffix[0]
    paths = [v.path for v in variables]
    close = [p for p in paths if p.endswith("/" + path)] or \
        difflib.get_close_matches(path, paths, n=3)
    raise KerasmeshError(
        kinds.VARIABLE_PATH, f'No variable has path {string(path)}.',
        [("x", f"{len(suffix)} variables end with \"/{path}\".")
         if suffix else ("x", f"The model has {len(paths)} variables.")] +
        ([("i", f"Did you mean {', '.join(quoted(close))}?")] if close
         else []))


def variable_shards(model: Any, path: str | None = None) -> dict:
    """`tensor_shards()` facts for a placed variable, from its array.

    Args:
        model: a built Keras model.
        path: the variable's path, or a unique ending of it after a "/"
            ("dense/kernel" for "sequential/dense/kernel"); optimizer
            variables count once the optimizer is built. None for a
            model's only variable.

    Raises:
        KerasmeshError: kinds `model`, `variable_path`.
    """
    check_model(model)
    variable = _find_variable(model, None if path is None else str(path))
    value = variable.value
    sharding = value.sharding
    shape = tuple(int(s) for s in value.shape)
    jax_mesh = getattr(sharding, "mesh", None)
    mesh = describe_backend_mesh(jax_mesh) \
        if jax_mesh is not None and hasattr(jax_mesh, "devices") else None
    placement = sharding_placement(sharding, shape,
                                   int(value.dtype.itemsize))
    return _picture(placement, str(variable.dtype),
                    shards_of(sharding, shape), mesh, variable.path,
                    "placed")
