"""Where each variable lives, read from the placed JAX arrays (their
placement is `core/placement.py`'s `sharding_placement()`)."""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from ..core.describe import check_built
from ..mesh.device_mesh import describe_mesh, device_name
from ..core.placement import Placement, model_variables, sharding_placement


def format_partition_spec(spec: Any) -> str | None:
    """ "PartitionSpec(None, 'model')", however JAX's repr abbreviates it."""
    if spec is None:
        return None
    return "PartitionSpec(" + ", ".join(repr(e) for e in spec) + ")"


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


def shards_of(sharding: Any, shape: Sequence[int]) -> dict:
    """The distinct shards of `shape` under `sharding`, as plain columns.

    Works from the sharding alone (`devices_indices_map()`), global across
    processes, without allocating anything.

    Returns:
        `start` and `stop` (0-based, stop exclusive, one per dimension),
        `devices` (the names of the devices holding each shard, in mesh
        order), shards in row-major order of their starts.
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


def placement_facts(placement: Placement) -> dict:
    """Shard shape, copies and bytes of a placement, for R."""
    return {
        "shard_shape": list(placement.shard_shape),
        "copies": placement.copies,
        "bytes": float(placement.bytes),
        "device_bytes": float(placement.device_bytes),
    }


def array_sharding(value: Any) -> dict:
    """Sharding facts of one placed array, global across processes."""
    shape = [int(s) for s in value.shape]
    sharding = value.sharding
    placement = sharding_placement(sharding, shape, value.dtype.itemsize)
    return {
        "shape": shape,
        "axes": placement.labels,
        "spec": format_partition_spec(getattr(sharding, "spec", None)),
        **placement_facts(placement),
        "local_shards": [(device_name(s.device), float(s.data.nbytes))
                         for s in value.addressable_shards],
    }


def variables_by_source(model: Any) -> list[tuple[str, Any]]:
    """(source, variable) for a model's variables and, once it is built,
    its optimizer's."""
    out = [("model", v) for v in model_variables(model)]
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and getattr(optimizer, "built", False):
        out += [("optimizer", v) for v in optimizer.variables]
    return out


def variable_sharding(model: Any) -> dict:
    """One row per model and optimizer variable, as columns of lists.

    Returns:
        Columns path, source, shape, dtype, axes, spec, shard_shape, copies,
        bytes (whole variable) and device_bytes (what one device holds),
        `per_device`: device names with the bytes each holds in total, and
        `mesh`: `describe_mesh()` of the variables' mesh (None when they
        are not placed on one).

    Raises:
        KerasmeshError: kind `model` when `model` is not built.
    """
    check_built(model)
    columns: dict[str, list] = {k: [] for k in (
        "path", "source", "shape", "dtype", "axes", "spec", "shard_shape",
        "copies", "bytes", "device_bytes")}
    per_device: dict[str, float] = {}
    mesh = None
    for source, v in variables_by_source(model):
        facts = array_sharding(v.value)
        if mesh is None:
            mesh = getattr(v.value.sharding, "mesh", None)
        columns["path"].append(v.path)
        columns["source"].append(source)
        columns["dtype"].append(str(v.dtype))
        for key in ("shape", "axes", "spec", "shard_shape", "copies",
                    "bytes", "device_bytes"):
            columns[key].append(facts[key])
        for device, nbytes in facts["local_shards"]:
            per_device[device] = per_device.get(device, 0.0) + nbytes
    devices = sorted(per_device, key=lambda d: (d.split(":")[0],
                                                int(d.split(":")[1])))
    columns["per_device"] = {"device": devices,
                             "bytes": [per_device[d] for d in devices]}
    columns["mesh"] = None
    if mesh is not None and hasattr(mesh, "devices"):
        columns["mesh"] = describe_backend_mesh(mesh)
    return columns
