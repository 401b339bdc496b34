"""Where each variable lives, read from the placed JAX arrays."""

from __future__ import annotations

import math
from typing import Any

from .errors import KerasmeshError, describe_value
from .mesh import device_name


def _spec_axes(sharding: Any, rank: int) -> list[str | None]:
    """Mesh axes per dimension from a NamedSharding (None: not split)."""
    spec = list(getattr(sharding, "spec", ()) or ())
    spec += [None] * (rank - len(spec))
    out = []
    for entry in spec[:rank]:
        if isinstance(entry, (tuple, list)):
            entry = "+".join(entry) if entry else None
        out.append(entry)
    return out


def format_partition_spec(spec: Any) -> str | None:
    """ "PartitionSpec(None, 'model')", however JAX's repr abbreviates it."""
    if spec is None:
        return None
    return "PartitionSpec(" + ", ".join(repr(e) for e in spec) + ")"


def array_sharding(value: Any) -> dict:
    """Sharding facts of one placed array, global across processes."""
    shape = tuple(int(s) for s in value.shape)
    sharding = value.sharding
    itemsize = value.dtype.itemsize
    index_map = sharding.devices_indices_map(shape)
    blocks: dict[tuple, list[str]] = {}
    for device, index in index_map.items():
        key = tuple((s.start, s.stop) for s in index)
        blocks.setdefault(key, []).append(device_name(device))
    shard_shape = tuple(int(s) for s in sharding.shard_shape(shape))
    spec = format_partition_spec(getattr(sharding, "spec", None))
    return {
        "shape": list(shape),
        "axes": _spec_axes(sharding, len(shape)),
        "spec": spec,
        "shard_shape": list(shard_shape),
        "copies": len(index_map) // max(len(blocks), 1),
        "devices": len(index_map),
        "bytes": float(math.prod(shape) * itemsize),
        "device_bytes": float(math.prod(shard_shape) * itemsize),
        "local_shards": [(device_name(s.device), float(s.data.nbytes))
                         for s in value.addressable_shards],
    }


def _variables(model: Any) -> list[tuple[str, Any]]:
    out = [("model", v) for v in model.variables]
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
        KerasmeshError: kind `model` when `model` has no variables.
    """
    if not hasattr(model, "variables"):
        raise KerasmeshError(
            "model", "`model` must be a Keras model.",
            [("x", f"Received {describe_value(model)}.")])
    columns: dict[str, list] = {k: [] for k in (
        "path", "source", "shape", "dtype", "axes", "spec", "shard_shape",
        "copies", "bytes", "device_bytes")}
    per_device: dict[str, float] = {}
    mesh = None
    for source, v in _variables(model):
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
        from .blocks import describe_backend_mesh

        columns["mesh"] = describe_backend_mesh(mesh)
    return columns
