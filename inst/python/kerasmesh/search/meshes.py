"""The meshes a search over a topology chooses among.

A topology of n devices is searched on every mesh of two axes, "data"
(the batch axis) and "model", whose sizes multiply to n: the
factorizations `mesh.device_mesh.factorizations()` lists. For each shape
the device order decides which axis's device groups stay inside a node:
with order "model" the model axis varies fastest over the device ids
(row-major, as `device_mesh()` lays devices out), so a model group of at
most `devices_per_node` devices is one node's; with order "data" the data
axis varies fastest. The collectives XLA compiles number their devices by
mesh position, so one compile of a shape serves both orders: only the
node of each position (`topology.time.device_nodes()`) differs, and with
it the modeled time (`MeshOption.nodes`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.errors import KerasmeshError
from ..core import kinds
from ..mesh.device_mesh import describe_mesh, device_name, factorizations
from ..topology.machine import Topology
from ..layout_map.rules import rebind
from ..topology.time import device_nodes

AXES = ("data", "model")
# Which axis varies fastest over device ids.
ORDERS = ("model", "data")


def ordered_devices(devices: list[str], shape: tuple[int, int],
                    order: str) -> list[list[str]]:
    """`devices` (in id order) laid out on `shape` (data, model): row-major
    for order "model", column-major (data fastest) for "data"."""
    a, b = shape
    if order == "model":
        return [devices[i * b:(i + 1) * b] for i in range(a)]
    return [[devices[j * a + i] for j in range(b)] for i in range(a)]


@dataclass
class MeshOption:
    """One mesh shape of a search, and its device orders.

    Attributes:
        shape: (data, model) sizes.
        mesh: the Keras DeviceMesh compiled (order `orders[0]`).
        nodes: {order: node of each mesh position}; one order when the
            orders put every group in the same nodes, none without a
            topology.
    """

    shape: tuple[int, int]
    mesh: Any
    nodes: dict[str, list[int]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return "x".join(str(int(s)) for s in self.mesh.shape)

    def keras_mesh(self, order: str | None = None) -> Any:
        """The DeviceMesh of this shape in `order` (default: compiled)."""
        import keras
        import numpy as np

        if order != ORDERS[1]:
            return self.mesh
        devices = sorted_devices(self.mesh)
        return keras.distribution.DeviceMesh(
            self.shape, AXES, np.array(ordered_devices(
                devices, self.shape, order)))


def sorted_devices(mesh: Any) -> list[str]:
    """A mesh's devices by id ("cpu:0", "cpu:1", ...)."""
    names = [device_name(d) for d in mesh.devices.flatten().tolist()]
    return sorted(names, key=lambda n: (n.split(":")[0],
                                        int(n.split(":")[-1])))


def _orders(shape: tuple[int, int], devices: list[str],
            topology: Topology | None) -> dict[str, list[int]]:
    """{order: nodes} for the orders that place groups differently."""
    if topology is None:
        return {}
    out: dict[str, list[int]] = {}
    for order in ORDERS:
        flat = [d for row in ordered_devices(devices, shape, order)
                for d in row]
        nodes = device_nodes(flat, topology)
        if nodes not in out.values():
            out[order] = nodes
    return out


def mesh_options(topology: Topology, devices: list[str],
                 batch_size: int) -> list[MeshOption]:
    """Every (data, model) mesh of the topology's devices whose data axis
    divides `batch_size` (a data axis of 1 always does), data-parallel
    first.

    Raises:
        KerasmeshError: kind `topology_devices` when the topology's device
            count is not the number of devices available.
    """
    import keras
    import numpy as np

    if topology.devices != len(devices):
        raise KerasmeshError(
            kinds.TOPOLOGY_DEVICES,
            f"The topology has {topology.describe()}; JAX has "
            f"{len(devices)}.",
            i="Give the topology as many devices as JAX has (`nodes`, "
              "`devices_per_node`), or simulate that many with "
              "`simulate_devices()`.")
    shapes = sorted((tuple(s) for s in factorizations(len(devices), 2)),
                    key=lambda s: -s[0])
    out = []
    for shape in shapes:
        if batch_size % shape[0]:
            continue
        mesh = keras.distribution.DeviceMesh(
            shape, AXES, np.array(ordered_devices(devices, shape,
                                                  ORDERS[0])))
        out.append(MeshOption(shape, mesh, _orders(shape, devices,
                                                   topology)))
    return out


def given_mesh(mesh: Any, topology: Topology | None,
               batch_dim: str) -> MeshOption:
    """A user's mesh as the search's only option, in its own order: its
    shape as (devices of the batch axis, devices of the others)."""
    sizes = {str(a): int(s) for a, s in zip(mesh.axis_names, mesh.shape)}
    data = sizes.get(batch_dim, 1)
    nodes = {} if topology is None else {
        "given": device_nodes(describe_mesh(mesh)["devices"], topology)}
    total = 1
    for s in sizes.values():
        total *= s
    return MeshOption((data, total // data), mesh, nodes)


def rebind_to(layout_map: Any, mesh: Any) -> Any:
    """`layout_map.rules.rebind()` for a start or fixed rules given to a
    search over a topology, whose meshes have the axes "data" and "model".

    Raises:
        KerasmeshError: kind `mesh_mismatch` for a mesh of other axes.
    """
    if layout_map is None:
        return None
    names = [str(a) for a in layout_map.device_mesh.axis_names]
    if sorted(names) != sorted(AXES):
        raise KerasmeshError(
            kinds.MESH_MISMATCH, "With a topology, `start` and `fixed` "
            'must be on a mesh of axes "data" and "model".',
            x=f"Their mesh has axes {', '.join(names)}.",
            i="Make them on `device_mesh(c(data = , model = ))`.")
    return rebind(layout_map, mesh)
