"""A device topology: nodes of devices, their memory, compute and links.

R's `device_topology()` makes one from a preset or from figures (in R, so
that it works without Python) and sends it as plain values; `as_topology()`
turns those into a `Topology`, which checks every figure when it is built,
so that the time model (`time.py`) and the search read figures they can
trust:

    topo = as_topology({"nodes": 4, "devices_per_node": 8,
                        "memory": 80e9, "peak_flops": {"bfloat16": 989e12},
                        "intra_node_bandwidth": 450e9,
                        "inter_node_bandwidth": 50e9})
    topo.devices                  # 32
    topo.flop_rate("bfloat16")    # 989e12 * topo.efficiency

Bandwidths are the bus bandwidths NCCL measures (bytes per second, its
definition: what a collective's algorithm moves per device over its
time): `intra_node_bandwidth` for all-gather and reduce-scatter among a
node's devices, `all_reduce_bandwidth` for all-reduce there (NVLink
SHARP reduces in the switch, above the ring's), `inter_node_bandwidth`
for one device's network card; latencies are seconds per step of a ring
algorithm. `efficiency` is the share of peak FLOP/s matrix products
reach, `attention_efficiency` fused attention's, `memory_efficiency` the
share of `memory_bandwidth` an operation bound by memory reaches. How
the time model uses each is `time.py`'s docstring.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.checks import is_number, is_positive, is_whole
from ..core.errors import KerasmeshError
from ..core import kinds

# The figures R sends, by name, and whether each must be given.
FIGURES = ("nodes", "devices_per_node", "memory", "peak_flops",
           "intra_node_bandwidth", "inter_node_bandwidth",
           "all_reduce_bandwidth", "intra_node_latency",
           "inter_node_latency", "efficiency", "attention_efficiency",
           "memory_efficiency", "memory_bandwidth", "name")
# The key of a peak FLOP/s that holds for every dtype.
EVERY_DTYPE = "*"


def _bad(what: str, value: Any, rule: str) -> KerasmeshError:
    return KerasmeshError(kinds.TOPOLOGY, f"`{what}` must be {rule}.",
                          received=value)


def _positive(name: str, value: Any, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if not is_positive(value):
        raise _bad(name, value, "a positive number")
    return float(value)


@dataclass(frozen=True)
class Topology:
    """The machine: `nodes` of `devices_per_node` devices each.

    Attributes:
        nodes, devices_per_node: whole numbers, at least 1.
        memory: bytes per device.
        peak_flops: {dtype name: FLOP/s per device}; the key "*" holds
            for dtypes not named.
        intra_node_bandwidth: bus bytes/s of an all-gather or
            reduce-scatter among a node's devices.
        inter_node_bandwidth: bus bytes/s of one device's network card;
            None for one node.
        all_reduce_bandwidth: bus bytes/s of an all-reduce among a node's
            devices; None: `intra_node_bandwidth`.
        intra_node_latency, inter_node_latency: seconds per ring step.
        efficiency: share of peak FLOP/s matrix products reach, (0, 1].
        attention_efficiency: share of peak FLOP/s fused attention
            reaches, (0, 1].
        memory_efficiency: share of `memory_bandwidth` operations bound
            by memory reach, (0, 1].
        memory_bandwidth: bytes/s of a device's own memory, or None
            (then operations bound by memory are not timed).
        name: the preset, or "custom".

    Raises:
        KerasmeshError: kind `topology`, naming the figure and the rule.
    """

    nodes: int
    devices_per_node: int
    memory: float
    peak_flops: dict = field(default_factory=dict)
    intra_node_bandwidth: float = 0.0
    inter_node_bandwidth: float | None = None
    all_reduce_bandwidth: float | None = None
    intra_node_latency: float = 0.0
    inter_node_latency: float = 0.0
    efficiency: float = 0.7
    attention_efficiency: float = 0.5
    memory_efficiency: float = 0.9
    memory_bandwidth: float | None = None
    name: str = "custom"
    # Bus bandwidth by mesh axis, for a machine known only by its axes (a
    # search's time on a mesh with `bandwidth`): it replaces the links.
    axis_bandwidth: dict | None = None

    def __post_init__(self):
        for name in ("nodes", "devices_per_node"):
            if not is_whole(getattr(self, name), 1):
                raise _bad(name, getattr(self, name),
                           "a whole number of at least 1")
        _positive("memory", self.memory)
        _positive("intra_node_bandwidth", self.intra_node_bandwidth)
        _positive("inter_node_bandwidth", self.inter_node_bandwidth,
                  optional=self.nodes == 1)
        _positive("memory_bandwidth", self.memory_bandwidth, optional=True)
        _positive("all_reduce_bandwidth", self.all_reduce_bandwidth,
                  optional=True)
        for name in ("intra_node_latency", "inter_node_latency"):
            value = getattr(self, name)
            if not (is_number(value) and value >= 0):
                raise _bad(name, value, "a number of seconds, 0 or more")
        for name in ("efficiency", "attention_efficiency",
                     "memory_efficiency"):
            value = getattr(self, name)
            if not (is_positive(value) and value <= 1):
                raise _bad(name, value, "a share above 0 and at most 1")
        flops = self.peak_flops
        if not isinstance(flops, dict) or not flops or \
                not all(isinstance(k, str) and k and is_positive(v)
                        for k, v in flops.items()):
            raise _bad("peak_flops", flops,
                       "positive FLOP/s per device, named by dtype")

    @property
    def devices(self) -> int:
        """Devices in all: nodes times devices per node."""
        return int(self.nodes) * int(self.devices_per_node)

    def describe(self) -> str:
        """"32 devices (4 nodes of 8)", for messages."""
        nodes = "1 node" if self.nodes == 1 else f"{int(self.nodes)} nodes"
        return (f"{self.devices} device{'s' if self.devices != 1 else ''} "
                f"({nodes} of {int(self.devices_per_node)})")

    def peak(self, dtype: str) -> float:
        """Peak FLOP/s of one device computing in `dtype`.

        Raises:
            KerasmeshError: kind `topology` when neither `dtype` nor "*"
                has a figure.
        """
        value = self.peak_flops.get(dtype, self.peak_flops.get(EVERY_DTYPE))
        if value is None:
            named = ", ".join(sorted(self.peak_flops))
            raise KerasmeshError(
                kinds.TOPOLOGY,
                f"The topology gives no peak FLOP/s for {dtype}, the "
                "model's compute dtype.",
                x=f"It gives them for {named}.",
                i=f"Give `peak_flops` a figure named \"{dtype}\".")
        return float(value)

    def flop_rate(self, dtype: str) -> float:
        """FLOP/s matrix products reach in `dtype`: peak x efficiency."""
        return self.peak(dtype) * float(self.efficiency)


def as_topology(value: Any) -> Topology:
    """A `Topology` from one, or from R's plain values (a dict of
    `FIGURES`; `peak_flops` a dict, or one number for every dtype).

    Raises:
        KerasmeshError: kind `topology` for anything else, or a figure
            that can't be.
    """
    if isinstance(value, Topology):
        return value
    if not isinstance(value, dict) or \
            not {"nodes", "devices_per_node", "memory"} <= set(value) or \
            not set(value) <= set(FIGURES):
        raise KerasmeshError(
            kinds.TOPOLOGY, "`topology` must be a device topology.",
            received=value, i="Make one with `device_topology()`.")
    figures = {k: v for k, v in value.items() if v is not None}
    flops = figures.get("peak_flops")
    if is_number(flops):
        figures["peak_flops"] = {EVERY_DTYPE: flops}
    return Topology(**figures)
