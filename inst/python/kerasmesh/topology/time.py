"""Modeled seconds of a compiled training step on a topology.

`step_time()` turns what one compiled step costs (XLA's count of
floating-point operations, and the collectives `cost/hlo.py` reads from
the HLO: the collective, bytes per device, device groups, mesh axes) into
seconds per global batch:

* compute: FLOPs over the topology's FLOP/s for the model's compute
  dtype times its efficiency (`Topology.flop_rate()`); FLOPs spent
  recomputing (rematerialization) are their own part;
* each collective: the share of its bytes each device sends under its
  algorithm (`ALGORITHMS`: ring all-reduce 2(n-1)/n, all-gather,
  reduce-scatter and all-to-all (n-1)/n, collective-permute 1) over the
  slowest link its device groups span (inside a node or across nodes),
  plus a latency per ring step: steps between nodes at the inter-node
  latency, the others at the intra-node one, as NCCL's tuning model
  counts them;
* with `accumulation_steps`, the compiled step is one micro-batch, and
  every part is paid once per micro-batch.

Compute and communication are added, not overlapped: the figure is the
step without overlap, which ranks layouts as their exposed traffic does.

Which node a device is in: the mesh's devices, in the order of their ids,
fill node 0 first, then node 1 (`device_nodes()`). The HLO numbers a
collective's devices by their position in the mesh (row-major), so the
mesh's shape and device order decide which axis crosses nodes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..core.errors import KerasmeshError
from ..core import kinds
from .machine import Topology


def _ring(sends: float, steps: float) -> Callable[[int], tuple[float,
                                                              float]]:
    """(share of the bytes each device sends, ring steps) for n devices,
    as multiples of (n - 1) / n and of (n - 1)."""
    return lambda n: (sends * (n - 1) / n, steps * (n - 1))


# collective -> n devices -> (share of its bytes each device sends, steps).
# The bytes are `hlo.py`'s: the array each device takes part with (the
# gathered array of an all-gather, the array a reduce-scatter reduces).
ALGORITHMS: dict[str, Callable[[int], tuple[float, float]]] = {
    "all-reduce": _ring(2, 2),
    "all-gather": _ring(1, 1),
    "reduce-scatter": _ring(1, 1),
    "all-to-all": _ring(1, 1),
    "collective-broadcast": lambda n: (1.0, float(n - 1)),
    "collective-permute": lambda n: (1.0, 1.0),
}
# Steps between nodes for a group over k nodes, as NCCL counts them.
_INTER_STEPS = {"all-reduce": 2}

_ID = re.compile(r"^(?P<type>[^:]*):(?P<id>[0-9]+)$")


def _device_key(name: str) -> tuple:
    m = _ID.match(str(name))
    return (m.group("type"), int(m.group("id"))) if m else (str(name), -1)


def device_nodes(devices: Sequence[str], topology: Topology) -> list[int]:
    """The node of the device at each mesh position.

    Args:
        devices: the mesh's devices in row-major order, as Keras names
            them ("gpu:3"): the order of the HLO's device ids.
        topology: the machine.

    Returns:
        One node number per position: the devices, in the order of their
        ids, fill node 0 with `devices_per_node` devices, then node 1.

    Raises:
        KerasmeshError: kind `topology_devices` when the counts differ.
    """
    if len(devices) != topology.devices:
        raise KerasmeshError(
            kinds.TOPOLOGY_DEVICES,
            f"The topology has {topology.describe()}; the mesh has "
            f"{len(devices)}.",
            i="Give the topology as many devices as the mesh (`nodes`, "
              "`devices_per_node`), or make the mesh over its devices.")
    order = sorted(range(len(devices)), key=lambda i: _device_key(devices[i]))
    nodes = [0] * len(devices)
    for rank, position in enumerate(order):
        nodes[position] = rank // int(topology.devices_per_node)
    return nodes


def collective_seconds(op: dict, nodes: Sequence[int],
                       topology: Topology) -> float:
    """Seconds one collective takes each device.

    Args:
        op: one of `hlo.parse_collectives()`'s dicts (`collective`, `bytes`,
            `groups`: device positions; none for one group of all).
        nodes: the node of each position (`device_nodes()`).
        topology: the machine.
    """
    groups = [list(g) for g in op["groups"]] or [list(range(len(nodes)))]
    if op["collective"] == "collective-permute":
        # Pairs of (source, target): one step, over the slowest pair.
        n = 2 if any(len(set(g)) > 1 for g in groups) else 1
    else:
        n = max(len(g) for g in groups)
    if n < 2 or op["collective"] not in ALGORITHMS:
        return 0.0
    spanned = max(len({nodes[i] for i in g if 0 <= i < len(nodes)})
                  for g in groups)
    share, steps = ALGORITHMS[op["collective"]](n)
    if op["collective"] == "collective-permute":
        inter = 1.0 if spanned > 1 else 0.0
    else:
        inter = _INTER_STEPS.get(op["collective"], 1) * (spanned - 1)
    bandwidth, _ = topology.link(crosses_nodes=spanned > 1)
    _, intra_latency = topology.link(crosses_nodes=False)
    inter_latency = topology.link(crosses_nodes=True)[1] if spanned > 1 \
        else 0.0
    return (share * float(op["bytes"]) / bandwidth +
            (steps - inter) * intra_latency + inter * inter_latency)


def step_time(ops: Sequence[dict], flops: float, topology: Topology,
              nodes: Sequence[int], dtype: str, recompute_flops: float = 0.0,
              accumulation_steps: int = 1) -> dict:
    """Modeled seconds per global batch of one compiled step.

    Args:
        ops: the step's collectives (`hlo.parse_collectives()`).
        flops: XLA's floating-point operations per device per step,
            recomputation included.
        topology: the machine.
        nodes: the node of each mesh position (`device_nodes()`).
        dtype: the model's compute dtype ("bfloat16"), for its FLOP/s.
        recompute_flops: the part of `flops` spent recomputing.
        accumulation_steps: micro-batches per global batch: the compiled
            step is one, so every part is paid that many times.

    Returns:
        Plain values: `compute`, `recompute` (seconds), `communication`
        (`{"axes": [...], "seconds": [...]}`, one entry per set of mesh
        axes, joined with "+", slowest first), `total`, and what they
        come from: `compute_dtype`, `flop_rate`, `accumulation_steps`.

    Raises:
        KerasmeshError: kind `topology` for a dtype without peak FLOP/s;
            kind `argument` for recompute FLOPs outside [0, flops] or
            accumulation steps below 1.
    """
    flops = float(flops)
    recompute = float(recompute_flops)
    if not 0 <= recompute <= flops:
        raise KerasmeshError(
            kinds.ARGUMENT, "`recompute_flops` must be between 0 and the "
            "step's FLOPs.", received=recompute_flops)
    if not (isinstance(accumulation_steps, (int, float)) and
            float(accumulation_steps).is_integer() and accumulation_steps >= 1):
        raise KerasmeshError(
            kinds.ARGUMENT, "`accumulation_steps` must be a whole number of "
            "at least 1.", received=accumulation_steps)
    k = int(accumulation_steps)
    rate = topology.flop_rate(dtype)
    by_axes: dict[str, float] = {}
    for op in ops:
        key = "+".join(op["axes"])
        by_axes[key] = by_axes.get(key, 0.0) + \
            k * collective_seconds(op, nodes, topology)
    axes = sorted(by_axes, key=lambda a: (-by_axes[a], a))
    compute = k * (flops - recompute) / rate
    again = k * recompute / rate
    return {
        "compute": compute,
        "recompute": again,
        "communication": {"axes": axes,
                          "seconds": [by_axes[a] for a in axes]},
        "total": compute + again + sum(by_axes.values()),
        "compute_dtype": str(dtype),
        "flop_rate": rate,
        "accumulation_steps": k,
    }


def model_compute_dtype(model) -> str:
    """The dtype most of a model's parameters compute in: its layers'
    `compute_dtype`, weighted by their parameter counts (the model's own
    when no layer has parameters)."""
    weight: dict[str, int] = {}
    for layer in getattr(model, "layers", []) or []:
        dtype = getattr(layer, "compute_dtype", None)
        try:
            n = int(layer.count_params())
        except Exception:  # noqa: BLE001 - an unbuilt layer counts nothing
            n = 0
        if dtype and n:
            weight[str(dtype)] = weight.get(str(dtype), 0) + n
    if weight:
        return max(sorted(weight), key=lambda d: weight[d])
    return str(getattr(model, "compute_dtype", None) or "float32")
