"""The time model: how long each operation of a step takes on a topology.

One model for every cost, search and print-out; `cost/schedule.py` walks
a compiled step's operations in the order they run with it, and says
what overlaps. Each operation takes:

* a matrix product (`MATMUL`): its FLOPs over the topology's peak FLOP/s
  for the model's compute dtype times `efficiency` (the share cuBLAS and
  Triton matrix products reach), or its bytes' time when that is longer
  (a roofline);
* fused attention (`ATTENTION`): its FLOPs over peak times
  `attention_efficiency` (the share fused attention kernels reach,
  forward and backward together);
* any other operation (`MEMORY`): the bytes it reads and writes over
  `memory_bandwidth` times `memory_efficiency` (0 where the topology has
  no memory bandwidth);
* a collective: the share of its bytes its algorithm moves per device
  (`ALGORITHMS`: ring all-reduce 2(n-1)/n, all-gather, reduce-scatter and
  all-to-all (n-1)/n, collective-permute 1) over the bus bandwidth NCCL
  reaches on the links its device groups span, plus a latency per ring
  step: steps between nodes at the inter-node latency, the others at the
  intra-node one, as NCCL's tuning model counts them. Inside a node:
  `intra_node_bandwidth`, or `all_reduce_bandwidth` for an all-reduce.
  Across nodes NCCL stripes a ring over every network card its devices
  have, one per GPU: a group with g devices in each node reaches g times
  `inter_node_bandwidth`, at most the in-node figure (a group of one
  device per node, one card's).

Which node a device is in: the mesh's devices, in the order of their
ids, fill node 0 first, then node 1 (`device_nodes()`). The HLO numbers a
collective's devices by their position in the mesh (row-major), so the
mesh's shape and device order decide which axis crosses nodes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..core.errors import KerasmeshError
from ..core import kinds
from .machine import Topology

# What decides an operation's time.
MATMUL = "matmul"
ATTENTION = "attention"
MEMORY = "memory"
NONE = "none"


def _ring(sends: float, steps: float) -> Callable[[int], tuple[float,
                                                              float]]:
    """(share of the bytes each device sends, ring steps) for n devices,
    as multiples of (n - 1) / n and of (n - 1)."""
    return lambda n: (sends * (n - 1) / n, steps * (n - 1))


# collective -> n devices -> (share of its bytes each device sends, steps).
# The bytes are `cost/collectives.py`'s: the array each device takes part
# with (the gathered array of an all-gather, the array a reduce-scatter
# reduces).
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


def bus_bandwidth(topology: Topology, collective: str, spanned: int,
                  per_node: int) -> float:
    """The bus bandwidth (bytes/s) of one collective whose group spans
    `spanned` nodes with `per_node` of its devices in each."""
    inside = float(topology.all_reduce_bandwidth or
                   topology.intra_node_bandwidth) \
        if collective == "all-reduce" else float(topology.intra_node_bandwidth)
    if spanned <= 1:
        return inside
    return min(inside, per_node * float(topology.inter_node_bandwidth))


def collective_seconds(op: dict, nodes: Sequence[int],
                       topology: Topology) -> float:
    """Seconds one collective takes each device.

    Args:
        op: one of `collectives.parse_collectives()`'s dicts (`collective`,
            `bytes`, `groups`: device positions; none for one group of
            all).
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
    spans = [{nodes[i] for i in g if 0 <= i < len(nodes)} for g in groups]
    spanned = max(len(s) for s in spans)
    per_node = max(1, n // max(spanned, 1))
    share, steps = ALGORITHMS[op["collective"]](n)
    if op["collective"] == "collective-permute":
        inter = 1.0 if spanned > 1 else 0.0
    else:
        inter = _INTER_STEPS.get(op["collective"], 1) * (spanned - 1)
    bandwidth = bus_bandwidth(topology, op["collective"], spanned, per_node)
    if topology.axis_bandwidth and op.get("axes"):
        bandwidth = min(float(topology.axis_bandwidth[a]) for a in op["axes"])
    inter_latency = float(topology.inter_node_latency) if spanned > 1 \
        else 0.0
    return (share * float(op["bytes"]) / bandwidth +
            (steps - inter) * float(topology.intra_node_latency) +
            inter * inter_latency)


@dataclass(frozen=True)
class Rates:
    """What an operation's time comes from on one topology.

    Attributes:
        matmul: FLOP/s of matrix products.
        attention: FLOP/s of fused attention.
        memory: bytes/s of the device's memory (0: not timed).
        collective: seconds of one collective (a `parse_collectives()`
            dict).
    """

    matmul: float
    attention: float
    memory: float
    collective: Callable[[dict], float]

    def seconds(self, kind: str, flops: float, nbytes: float) -> float:
        """The time of one operation of `kind` (`MATMUL`, `ATTENTION`,
        `MEMORY`) that computes `flops` and moves `nbytes`."""
        moved = nbytes / self.memory if self.memory else 0.0
        if kind == MATMUL:
            return max(flops / self.matmul, moved)
        if kind == ATTENTION:
            return max(flops / self.attention, moved)
        if kind == MEMORY:
            return moved
        return 0.0


def rates(topology: Topology, dtype: str, nodes: Sequence[int]) -> Rates:
    """The rates of a topology for a model computing in `dtype`, its mesh
    positions in `nodes`.

    Raises:
        KerasmeshError: kind `topology` for a dtype without peak FLOP/s.
    """
    peak = topology.peak(dtype)
    memory = float(topology.memory_bandwidth or 0.0) * \
        float(topology.memory_efficiency)
    return Rates(peak * float(topology.efficiency),
                 peak * float(topology.attention_efficiency), memory,
                 lambda op: collective_seconds(op, nodes, topology))


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
