"""Modeled seconds of a compiled step: compute, collectives, latency."""

import keras
import pytest

from kerasmesh.core import kinds
from kerasmesh.core.errors import KerasmeshError
from kerasmesh.cost import hlo
from kerasmesh.topology.machine import as_topology
from kerasmesh.topology.time import (collective_seconds, device_nodes,
                                     model_compute_dtype, step_time)

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
def test_ring_algorithms_inside_a_node_send_their_share_at_nvlink_speed(
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
    ops = [op("all-reduce", g, axes=hlo.group_axes(g, (2, 4),
                                                   ["data", "model"]))
           for g in groups.values()]
    ordered = device_nodes([f"cpu:{i}" for i in range(8)], machine())
    mixed = device_nodes([f"cpu:{i}" for i in (0, 4, 1, 5, 2, 6, 3, 7)],
                         machine())
    by_axis = {}
    for name, nodes in (("ordered", ordered), ("mixed", mixed)):
        t = step_time(ops, 0.0, machine(), nodes, "float32")
        by_axis[name] = dict(zip(t["communication"]["axes"],
                                 t["communication"]["seconds"]))
    assert by_axis["ordered"]["model"] < by_axis["ordered"]["data"]
    assert by_axis["mixed"]["model"] > by_axis["mixed"]["data"]


def test_step_time_adds_compute_recompute_and_communication_per_axis():
    ops = [op("all-reduce", IN_NODE), op("all-gather", ACROSS, axes=["data"])]
    t = step_time(ops, 4e15, machine(), NODES, "bfloat16",
                  recompute_flops=1e15)
    assert t["flop_rate"] == 500e12
    assert t["compute"] == pytest.approx(3e15 / 500e12)
    assert t["recompute"] == pytest.approx(1e15 / 500e12)
    comm = dict(zip(t["communication"]["axes"], t["communication"]["seconds"]))
    assert comm["model"] == pytest.approx(collective_seconds(ops[0], NODES,
                                                             machine()))
    assert t["communication"]["axes"] == ["data", "model"]  # slowest first
    assert t["total"] == pytest.approx(t["compute"] + t["recompute"] +
                                       sum(comm.values()))
    assert t["compute_dtype"] == "bfloat16"


def test_accumulation_steps_pay_every_part_once_per_micro_batch():
    ops = [op("all-reduce", IN_NODE)]
    one = step_time(ops, 1e15, machine(), NODES, "float32")
    four = step_time(ops, 1e15, machine(), NODES, "float32",
                     accumulation_steps=4)
    assert four["accumulation_steps"] == 4
    for part in ("compute", "recompute", "total"):
        assert four[part] == pytest.approx(4 * one[part])
    assert four["communication"]["seconds"][0] == \
        pytest.approx(4 * one["communication"]["seconds"][0])


@pytest.mark.parametrize("settings", [{"recompute_flops": 2e15},
                                      {"recompute_flops": -1},
                                      {"accumulation_steps": 0},
                                      {"accumulation_steps": 1.5}])
def test_recompute_and_accumulation_out_of_range_are_errors(settings):
    with pytest.raises(KerasmeshError) as e:
        step_time([], 1e15, machine(), NODES, "float32", **settings)
    assert e.value.kind == kinds.ARGUMENT


def test_the_compute_dtype_is_that_of_most_parameters():
    inputs = keras.Input((8,))
    h = keras.layers.Dense(64, dtype="mixed_bfloat16")(inputs)
    out = keras.layers.Dense(2)(h)
    model = keras.Model(inputs, out)
    assert model.compute_dtype == "float32"
    assert model_compute_dtype(model) == "bfloat16"
    empty = keras.Sequential([keras.Input((3,)), keras.layers.ReLU()])
    assert model_compute_dtype(empty) == "float32"
