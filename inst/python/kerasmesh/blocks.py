"""Blocks of a sharded tensor: which part of it each device holds.

Everything here works from shapes and shardings alone. `sharding_blocks()`
asks JAX where a layout would put the blocks of a tensor of a given shape
(`NamedSharding.devices_indices_map()`), without allocating it, so a
planned 16000 x 64000 kernel draws as fast as a placed 32 x 64 one;
`variable_blocks()` reads the same facts from a placed variable's own
sharding.
"""

from __future__ import annotations

import difflib
import math
from typing import Any, Sequence

from .errors import KerasmeshError, describe_value, quoted
from .mesh import describe_mesh, device_name


def _itemsize(dtype: Any) -> int:
    """Bytes per element of a dtype name ("float32", "bfloat16", ...)."""
    import jax.numpy as jnp

    try:
        return int(jnp.dtype(str(dtype)).itemsize)
    except TypeError as e:
        raise KerasmeshError(
            "dtype", "`dtype` must name a data type.",
            [("x", f"Received {describe_value(dtype)}."),
             ("i", 'For example "float32" or "bfloat16".')]) from e


def _check_shape(shape: Any) -> tuple[int, ...]:
    """A tensor shape: whole numbers >= 0 (an empty list is a scalar)."""
    if isinstance(shape, (int, float)) and not isinstance(shape, bool):
        shape = [shape]
    if not isinstance(shape, (list, tuple)):
        raise KerasmeshError(
            "shape", "`shape` must be a vector of whole numbers.",
            [("x", f"Received {describe_value(shape)}.")])
    out = []
    for i, s in enumerate(shape):
        ok = isinstance(s, (int, float)) and not isinstance(s, bool) and \
            math.isfinite(s) and float(s).is_integer() and s >= 0
        if not ok:
            raise KerasmeshError(
                "shape", "`shape` must be a vector of whole numbers.",
                [("x", f"Dimension {i + 1} is {describe_value(s)}.")])
        out.append(int(s))
    return tuple(out)


def _entry(entry: Any) -> tuple[str, ...]:
    """The mesh axes of one layout entry (None, a name, or several)."""
    if entry is None:
        return ()
    if isinstance(entry, str):
        return (entry,)
    return tuple(entry)


def _check_axes(axes: Any, rank: int, mesh_sizes: dict[str, int],
                shape: Sequence[int]) -> list[Any]:
    """Layout entries, one per dimension, that JAX can apply to `shape`.

    Shorter layouts are padded with None, as Keras pads them.
    """
    if axes is None or isinstance(axes, str):
        axes = [axes]
    axes = list(axes)
    if len(axes) > rank:
        raise KerasmeshError(
            "layout_rank",
            f"The layout has {len(axes)} entries, more than the tensor's "
            f"rank ({rank}).",
            [("i", "Give at most one mesh axis (or NA) per dimension.")])
    axes += [None] * (rank - len(axes))
    used: list[str] = []
    for dim, entry in enumerate(axes):
        names = _entry(entry)
        unknown = [a for a in names if a not in mesh_sizes]
        if unknown:
            raise KerasmeshError(
                "layout_axes",
                "The layout must use axes of the mesh.",
                [("x", f"Unknown axis: {', '.join(quoted(unknown))}."),
                 ("i", f"The mesh's axes are "
                       f"{', '.join(quoted(mesh_sizes))}.")])
        used += names
        ways = math.prod(mesh_sizes[a] for a in names)
        if shape[dim] % ways:
            raise KerasmeshError(
                "layout_divisibility",
                f"Dimension {dim + 1} can't be split evenly.",
                [("x", f"It has size {shape[dim]}, which mesh axis "
                       f"{' x '.join(quoted(names))} ({ways}) can't "
                       f"divide."),
                 ("i", "Use a size divisible by the axis, or leave the "
                       "dimension unsplit (NA).")])
    repeated = sorted({a for a in used if used.count(a) > 1})
    if repeated:
        raise KerasmeshError(
            "layout_axes", "The layout can't use a mesh axis twice.",
            [("x", f"{', '.join(quoted(repeated))} appears more than "
                   f"once.")])
    return [None if not _entry(e) else
            (_entry(e)[0] if len(_entry(e)) == 1 else list(_entry(e)))
            for e in axes]


def _backend_mesh(mesh: Any) -> Any:
    """The JAX mesh of a Keras DeviceMesh (or a JAX mesh itself)."""
    from keras.distribution import DeviceMesh

    if isinstance(mesh, DeviceMesh):
        return mesh.backend_mesh
    if hasattr(mesh, "devices") and hasattr(mesh, "axis_names"):
        return mesh
    raise KerasmeshError(
        "device_mesh", "`mesh` must be a device mesh.",
        [("x", f"Received {describe_value(mesh)}.")])


def describe_backend_mesh(jax_mesh: Any) -> dict:
    """`describe_mesh()` of a Keras DeviceMesh rebuilt from a JAX mesh."""
    from keras.distribution import DeviceMesh

    devices = [device_name(d) for d in jax_mesh.devices.flatten().tolist()]
    mesh = DeviceMesh(shape=tuple(int(s) for s in jax_mesh.devices.shape),
                      axis_names=[str(a) for a in jax_mesh.axis_names],
                      devices=devices)
    return describe_mesh(mesh)


def _device_order(sharding: Any) -> dict[str, int]:
    """Position of each device in the mesh (row-major), for sorting."""
    mesh = getattr(sharding, "mesh", None)
    if mesh is not None and hasattr(mesh, "devices"):
        devices = mesh.devices.flatten().tolist()
    else:
        devices = sorted(sharding.device_set, key=lambda d: d.id)
    return {device_name(d): i for i, d in enumerate(devices)}


def blocks_of(sharding: Any, shape: Sequence[int]) -> dict:
    """The distinct blocks of `shape` under `sharding`, as plain columns.

    Returns:
        `start` and `stop` (0-based, stop exclusive, one per dimension),
        `devices` (the names of the devices holding each block, in mesh
        order), blocks in row-major order of their starts.
    """
    shape = tuple(int(s) for s in shape)
    order = _device_order(sharding)
    found: dict[tuple, list[str]] = {}
    for device, index in sharding.devices_indices_map(shape).items():
        key = tuple(s.indices(n)[:2] for s, n in zip(index, shape))
        found.setdefault(key, []).append(device_name(device))
    keys = sorted(found)
    return {
        "start": [[int(a) for a, _ in k] for k in keys],
        "stop": [[int(b) for _, b in k] for k in keys],
        "devices": [sorted(found[k], key=lambda d: order.get(d, 0))
                    for k in keys],
    }


def _picture(shape: Sequence[int], axes: list[Any], itemsize: int,
             dtype: str, blocks: dict, mesh: dict | None, path: str | None,
             source: str) -> dict:
    n_devices = sum(len(d) for d in blocks["devices"])
    n_blocks = len(blocks["devices"])
    shard = [b - a for a, b in zip(blocks["start"][0], blocks["stop"][0])] \
        if n_blocks else list(shape)
    return {
        "path": path,
        "source": source,
        "shape": list(shape),
        "dtype": dtype,
        "axes": axes,
        "shard_shape": shard,
        "copies": n_devices // max(n_blocks, 1),
        "bytes": float(math.prod(shape) * itemsize),
        "device_bytes": float(math.prod(shard) * itemsize),
        "blocks": blocks,
        "mesh": mesh,
    }


def sharding_blocks(mesh: Any, axes: Any, shape: Any,
                    dtype: str = "float32", path: str | None = None) -> dict:
    """Where a layout would put the blocks of a tensor, allocating nothing.

    Args:
        mesh: a Keras `DeviceMesh`.
        axes: one entry per dimension: a mesh axis name, None (not split),
            or a list of names (split over their product); shorter layouts
            are padded with None, as Keras pads them.
        shape: the tensor's shape.
        dtype: its data type, for byte counts.
        path: a variable path to show, or None.

    Returns:
        Shape, axes, shard shape, copies, bytes, the blocks (see
        `blocks_of()`) and `describe_mesh()` of the mesh.

    Raises:
        KerasmeshError: kinds `shape`, `dtype`, `layout_rank`,
            `layout_axes`, `layout_divisibility`, `device_mesh`.
    """
    from jax.sharding import NamedSharding, PartitionSpec

    jax_mesh = _backend_mesh(mesh)
    shape = _check_shape(shape)
    sizes = {str(a): int(s) for a, s in
             zip(jax_mesh.axis_names, jax_mesh.devices.shape)}
    axes = _check_axes(axes, len(shape), sizes, shape)
    itemsize = _itemsize(dtype)
    spec = PartitionSpec(*[tuple(a) if isinstance(a, list) else a
                           for a in axes])
    blocks = blocks_of(NamedSharding(jax_mesh, spec), shape)
    desc = describe_mesh(mesh) if hasattr(mesh, "backend_mesh") else \
        describe_backend_mesh(jax_mesh)
    return _picture(shape, axes, itemsize, str(dtype), blocks, desc, path,
                    "planned")


def _find_variable(model: Any, path: str) -> Any:
    variables = list(getattr(model, "variables", []))
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and getattr(optimizer, "built", False):
        variables += list(optimizer.variables)
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
        "variable_path", f'No variable has path "{path}".',
        [("x", f"{len(suffix)} variables end with \"/{path}\".")
         if suffix else ("x", f"The model has {len(paths)} variables.")] +
        ([("i", f"Did you mean {', '.join(quoted(close))}?")] if close
         else []))


def variable_blocks(model: Any, path: str) -> dict:
    """`sharding_blocks()` facts for a placed variable, from its array.

    Args:
        model: a built Keras model.
        path: the variable's path, or a unique ending of it after a "/"
            ("dense/kernel" for "sequential/dense/kernel"); optimizer
            variables count once the optimizer is built.

    Raises:
        KerasmeshError: kinds `model`, `variable_path`.
    """
    if not hasattr(model, "variables"):
        raise KerasmeshError(
            "model", "`model` must be a Keras model.",
            [("x", f"Received {describe_value(model)}.")])
    variable = _find_variable(model, str(path))
    value = variable.value
    sharding = value.sharding
    shape = tuple(int(s) for s in value.shape)
    jax_mesh = getattr(sharding, "mesh", None)
    if jax_mesh is not None and hasattr(jax_mesh, "devices"):
        from .sharding import _spec_axes

        axes = _spec_axes(sharding, len(shape))
        axes = [a.split("+") if isinstance(a, str) and "+" in a else a
                for a in axes]
        mesh = describe_backend_mesh(jax_mesh)
    else:
        axes = [None] * len(shape)
        mesh = None
    return _picture(shape, axes, int(value.dtype.itemsize),
                    str(variable.dtype), blocks_of(sharding, shape), mesh,
                    variable.path, "placed")
