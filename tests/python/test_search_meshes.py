"""A topology's meshes: every (data, model) shape, and device orders that
decide which axis's groups cross nodes."""

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.search import meshes
from kerasmesh.topology.machine import as_topology


def topology(nodes=2, per_node=4):
    return as_topology({"nodes": nodes, "devices_per_node": per_node,
                        "memory": 80e9, "peak_flops": 1e12,
                        "intra_node_bandwidth": 450e9,
                        "inter_node_bandwidth": 50e9})


DEVICES = [f"cpu:{i}" for i in range(8)]


def test_every_factorization_whose_data_axis_divides_the_batch():
    shapes = [o.shape for o in meshes.mesh_options(topology(), DEVICES, 16)]
    assert shapes == [(8, 1), (4, 2), (2, 4), (1, 8)]
    shapes = [o.shape for o in meshes.mesh_options(topology(), DEVICES, 6)]
    assert shapes == [(2, 4), (1, 8)]


def test_each_mesh_has_axes_data_and_model_over_the_devices():
    for o in meshes.mesh_options(topology(), DEVICES, 16):
        assert tuple(o.mesh.axis_names) == ("data", "model")
        assert tuple(o.mesh.shape) == o.shape


def test_the_device_order_decides_which_axis_crosses_nodes():
    option = {o.shape: o for o in
              meshes.mesh_options(topology(), DEVICES, 16)}[(2, 4)]
    model_fast, data_fast = option.nodes["model"], option.nodes["data"]
    # Model fastest: each row (a model group of 4) is one node.
    assert model_fast == [0, 0, 0, 0, 1, 1, 1, 1]
    # Data fastest: each column (a data group of 2) is one node, so model
    # groups span both nodes.
    assert data_fast == [0, 0, 1, 1, 0, 0, 1, 1]
    mesh = option.keras_mesh("data")
    ids = [int(str(d).split(":")[-1].rstrip(")"))
           for d in mesh.devices.flatten().tolist()]
    assert ids == [0, 2, 4, 6, 1, 3, 5, 7]


def test_orders_that_place_groups_alike_are_one():
    options = meshes.mesh_options(topology(nodes=1, per_node=8), DEVICES, 16)
    assert all(len(o.nodes) == 1 for o in options)
    lines = {o.shape: o for o in meshes.mesh_options(topology(), DEVICES,
                                                     16)}
    assert list(lines[(8, 1)].nodes) == ["model"]


def test_a_topology_of_another_device_count_is_a_classed_error():
    with pytest.raises(KerasmeshError) as e:
        meshes.mesh_options(topology(nodes=4), DEVICES, 16)
    assert e.value.kind == "topology_devices"
    assert "16 devices" in str(e.value) and "JAX has 8" in str(e.value)


def test_rules_move_to_another_mesh_by_axis_name(mesh):
    lm = keras.distribution.LayoutMap(mesh)
    lm["dense/kernel"] = (None, "model")
    other = meshes.mesh_options(topology(), DEVICES, 16)[1].mesh
    moved = meshes.rebind(lm, other)
    assert moved.device_mesh is other
    assert tuple(moved["dense/kernel"].axes) == (None, "model")
    odd = keras.distribution.LayoutMap(keras.distribution.DeviceMesh(
        (2, 4), ("batch", "model"), keras.distribution.list_devices()))
    with pytest.raises(KerasmeshError) as e:
        meshes.rebind(odd, other)
    assert e.value.kind == "mesh_mismatch"
