"""The time model: collectives over the links they span, at NCCL's bus
bandwidths, and each operation's roofline."""

import keras
import pytest

from kerasmesh.core import kinds
from kerasmesh.core.errors import KerasmeshError
from kerasmesh.cost import replica_groups
from kerasmesh.topology.machine import as_topology
from kerasmesh.topology.time import (ATTENTION, MATMUL, MEMORY,
                                     collective_seconds, device_nodes,
                                     model_compute_dtype, rates)

GB = 1e9
INTRA, INTER = 3.4e-6, 14e-6


def machine(nodes=2, per_node=4, **figures):
    return as_topology({
        "nodes": nodes, "devices_per_node": per_node, "memory": 80 * GB,
        "peak_flops": {"bfloat16": 1000e12, "float32": 500e12},
        "intra_node_bandwidth": 400 * GB, "inter_node_bandwidth": 50 * GB,
        "intra_node_latency": INTRA, "inter_node_latency": INTER,
        "efficiency": 0.5} | figures)


def op(collective, groups, nbytes=8 * GB, axes=("model",)):
    return {"collective": collective, "bytes": nbytes, "groups": groups,
            "axes": list(axes)}


IN_NODE = [[0, 1, 2, 3], [4, 5, 6, 7]]
ACROSS = [[0, 4], [1, 5], [2, 6], [3, 7]]
NODES = [0, 0, 0, 0, 1, 1, 1, 1]


@pytest.mark.parametrize("collective,share,steps", [
    ("all-reduce", 2 * 3 / 4, 6), ("all-gather", 3 / 4, 3),
    ("reduce-scatter", 3 / 4, 3), ("all-to-all", 3 / 4, 3)])
def test_ring_algorithms_inside_a_node_send_their_share_at_the_bus_rate(
        collective, share, steps):
    seconds = collective_seconds(op(collective, IN_NODE), NODES, machine())
    assert seconds == pytest.approx(share * 8 * GB / (400 * GB) +
                                    steps * INTRA)


def test_a_group_across_nodes_runs_at_the_inter_node_link():
    # 2 devices over 2 nodes: all-reduce sends 2(n-1)/n = 1 of the bytes,
    # in 2 ring steps, both between nodes.
    seconds = collective_seconds(op("all-reduce", ACROSS), NODES, machine())
    assert seconds == pytest.approx(8 * GB / (50 * GB) + 2 * INTER)


def test_latency_counts_steps_between_nodes_as_nccl_does():
    # 8 devices over 2 nodes: 14 ring steps, 2 of them between nodes.
    one_group = collective_seconds(op("all-reduce", [], nbytes=0), NODES,
                                   machine())
    assert one_group == pytest.approx(12 * INTRA + 2 * INTER)
    gather = collective_seconds(op("all-gather", [], nbytes=0), NODES,
                                machine())
    assert gather == pytest.approx(6 * INTRA + 1 * INTER)


def test_a_permute_sends_everything_once_over_its_slowest_pair():
    inside = collective_seconds(op("collective-permute", [[0, 1], [1, 0]]),
                                NODES, machine())
    across = collective_seconds(op("collective-permute", [[0, 4], [4, 0]]),
                                NODES, machine())
    assert inside == pytest.approx(8 * GB / (400 * GB) + INTRA)
    assert across == pytest.approx(8 * GB / (50 * GB) + INTER)


def test_a_group_of_one_device_costs_nothing():
    groups = [[i] for i in range(8)]
    assert collective_seconds(op("all-reduce", groups), NODES,
                              machine()) == 0


def test_devices_fill_nodes_in_the_order_of_their_ids():
    names = [f"gpu:{i}" for i in (0, 4, 1, 5, 2, 6, 3, 7)]
    assert device_nodes(names, machine()) == [0, 1, 0, 1, 0, 1, 0, 1]
    assert device_nodes([f"cpu:{i}" for i in range(8)], machine()) == NODES


def test_a_topology_of_another_device_count_is_an_error():
    with pytest.raises(KerasmeshError) as e:
        device_nodes([f"cpu:{i}" for i in range(8)], machine(nodes=4))
    assert e.value.kind == kinds.TOPOLOGY_DEVICES
    assert "16 devices" in str(e.value) and "has 8" in str(e.value)


def test_the_mesh_device_order_decides_which_axis_crosses_nodes():
    # A 2 x 4 mesh ("data", "model") on 2 nodes of 4: with the devices in
    # id order, "model" stays in a node; with them interleaved, "model"
    # spans both nodes and "data" stays in one.
    groups = {"model": IN_NODE, "data": ACROSS}
    ordered = device_nodes([f"cpu:{i}" for i in range(8)], machine())
    mixed = device_nodes([f"cpu:{i}" for i in (0, 4, 1, 5, 2, 6, 3, 7)],
                         machine())
    seconds = {(order, axis): collective_seconds(op("all-reduce", g), nodes,
                                                 machine())
               for order, nodes in (("ordered", ordered), ("mixed", mixed))
               for axis, g in groups.items()}
    assert seconds["ordered", "model"] < seconds["ordered", "data"]
    assert seconds["mixed", "model"] > seconds["mixed", "data"]
    assert replica_groups.group_axes(ACROSS, (2, 4), ["data", "model"]) == ["data"]


def test_all_reduce_in_a_node_runs_at_its_own_bus_bandwidth():
    fast = machine(all_reduce_bandwidth=480 * GB)
    seconds = collective_seconds(op("all-reduce", IN_NODE), NODES, fast)
    assert seconds == pytest.approx(2 * 3 / 4 * 8 * GB / (480 * GB) +
                                    6 * INTRA)
    # Gathers keep the ring's figure.
    gather = collective_seconds(op("all-gather", IN_NODE), NODES, fast)
    assert gather == pytest.approx(3 / 4 * 8 * GB / (400 * GB) + 3 * INTRA)


def test_a_ring_across_nodes_uses_every_card_of_its_devices():
    # 8 devices on 2 nodes, 4 in each: four cards of 50 GB/s each, 200.
    every = collective_seconds(op("all-gather", [], nbytes=8 * GB), NODES,
                               machine())
    assert every == pytest.approx(7 / 8 * 8 * GB / (200 * GB) +
                                  6 * INTRA + INTER)
    # ... at most the node's own bus bandwidth.
    many = machine(nodes=2, per_node=16)
    nodes = [i // 16 for i in range(32)]
    capped = collective_seconds(op("all-gather", [], nbytes=8 * GB), nodes,
                                many)
    assert capped == pytest.approx(31 / 32 * 8 * GB / (400 * GB) +
                                   30 * INTRA + INTER)


def test_rates_are_the_topologys_roofline():
    topo = machine(memory_bandwidth=2e12, memory_efficiency=0.5,
                   attention_efficiency=0.25)
    rate = rates(topo, "bfloat16", NODES)
    assert rate.matmul == 500e12 and rate.attention == 250e12
    assert rate.memory == 1e12
    # A product bound by its FLOPs, or by its bytes; attention by FLOPs;
    # the rest by bytes.
    assert rate.seconds(MATMUL, 1e12, 1e9) == pytest.approx(1e12 / 500e12)
    assert rate.seconds(MATMUL, 1e9, 1e12) == pytest.approx(1.0)
    assert rate.seconds(ATTENTION, 1e12, 0) == pytest.approx(1e12 / 250e12)
    assert rate.seconds(MEMORY, 1e15, 1e9) == pytest.approx(1e-3)
    assert rate.collective(op("all-gather", IN_NODE)) == \
        collective_seconds(op("all-gather", IN_NODE), NODES, topo)


def test_without_a_memory_bandwidth_memory_bound_work_is_not_timed():
    rate = rates(machine(), "float32", NODES)
    assert rate.memory == 0
    assert rate.seconds(MEMORY, 0, 1e12) == 0
    assert rate.seconds(MATMUL, 1e12, 1e12) == pytest.approx(1e12 / 250e12)


def test_the_compute_dtype_is_that_of_most_parameters():
    inputs = keras.Input((8,))
    h = keras.layers.Dense(64, dtype="mixed_bfloat16")(inputs)
    out = keras.layers.Dense(2)(h)
    model = keras.Model(inputs, out)
    assert model.compute_dtype == "float32"
    assert model_compute_dtype(model) == "bfloat16"
    empty = keras.Sequential([keras.Input((3,)), keras.layers.ReLU()])
    assert model_compute_dtype(empty) == "float32"
