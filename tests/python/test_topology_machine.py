"""A device topology's figures, checked when it is built."""

import pytest
from hypothesis import given, strategies as st

from kerasmesh.core import kinds
from kerasmesh.core.errors import KerasmeshError
from kerasmesh.topology.machine import Topology, as_topology

H100 = {"nodes": 4, "devices_per_node": 8, "memory": 80e9,
        "peak_flops": {"bfloat16": 989e12, "float16": 989e12,
                       "float32": 495e12},
        "intra_node_bandwidth": 450e9, "inter_node_bandwidth": 50e9,
        "intra_node_latency": 3.4e-6, "inter_node_latency": 14e-6,
        "efficiency": 0.4, "memory_bandwidth": 3.35e12,
        "name": "h100-sxm-80gb"}


def topology_error(**figures):
    with pytest.raises(KerasmeshError) as e:
        as_topology(H100 | figures)
    assert e.value.kind == kinds.TOPOLOGY
    return str(e.value)


def test_rs_plain_values_make_a_topology_with_its_figures():
    topo = as_topology(H100)
    assert topo.devices == 32
    assert topo.describe() == "32 devices (4 nodes of 8)"
    assert topo.flop_rate("bfloat16") == pytest.approx(989e12 * 0.4)
    assert (topo.attention_efficiency, topo.memory_efficiency) == (0.5, 0.9)
    assert topo.all_reduce_bandwidth is None
    assert as_topology(topo) is topo


def test_one_peak_figure_holds_for_every_dtype():
    topo = as_topology(H100 | {"peak_flops": 100e12})
    assert topo.peak("float32") == topo.peak("bfloat16") == 100e12


def test_a_dtype_without_peak_flops_is_an_error_naming_it_and_the_others():
    topo = as_topology(H100 | {"peak_flops": {"bfloat16": 1e12}})
    with pytest.raises(KerasmeshError) as e:
        topo.peak("float32")
    assert e.value.kind == kinds.TOPOLOGY
    assert "float32" in str(e.value) and "bfloat16" in str(e.value)


@pytest.mark.parametrize("name", ["memory", "intra_node_bandwidth",
                                  "inter_node_bandwidth", "memory_bandwidth"])
@pytest.mark.parametrize("value", [0, -1.0, float("nan"), "80GB", True])
def test_memory_and_bandwidths_must_be_positive(name, value):
    assert f"`{name}` must be a positive number" in \
        topology_error(**{name: value})


@pytest.mark.parametrize("name", ["nodes", "devices_per_node"])
@pytest.mark.parametrize("value", [0, 1.5, -2, None])
def test_nodes_and_devices_per_node_are_whole_numbers(name, value):
    if value is None:
        with pytest.raises(KerasmeshError):
            as_topology({k: v for k, v in H100.items() if k != name})
        return
    assert "whole number of at least 1" in topology_error(**{name: value})


@pytest.mark.parametrize("name", ["efficiency", "attention_efficiency",
                                  "memory_efficiency"])
@pytest.mark.parametrize("value", [0, 1.01, -0.2])
def test_efficiencies_are_shares(name, value):
    message = topology_error(**{name: value})
    assert "at most 1" in message and f"`{name}`" in message


def test_an_all_reduce_bandwidth_is_positive_when_given():
    assert "`all_reduce_bandwidth`" in topology_error(all_reduce_bandwidth=0)
    assert as_topology(H100 | {"all_reduce_bandwidth": 480e9}) \
        .all_reduce_bandwidth == 480e9


def test_latencies_may_be_zero_but_not_negative():
    assert as_topology(H100 | {"intra_node_latency": 0}) \
        .intra_node_latency == 0
    assert "0 or more" in topology_error(inter_node_latency=-1e-6)


def test_one_node_needs_no_inter_node_bandwidth():
    topo = as_topology(H100 | {"nodes": 1, "inter_node_bandwidth": None})
    assert topo.devices == 8
    assert "`inter_node_bandwidth`" in topology_error(
        inter_node_bandwidth=None)


@pytest.mark.parametrize("value", [None, 3, {"nodes": 1}, H100 | {"x": 1}])
def test_anything_else_is_not_a_topology(value):
    with pytest.raises(KerasmeshError) as e:
        as_topology(value)
    assert e.value.kind == kinds.TOPOLOGY
    assert "device_topology()" in str(e.value)


@given(nodes=st.integers(1, 64), per_node=st.integers(1, 16),
       figure=st.floats(-1e15, 1e15, allow_nan=False))
def test_figures_are_accepted_exactly_when_positive(nodes, per_node, figure):
    figures = H100 | {"nodes": nodes, "devices_per_node": per_node,
                      "intra_node_bandwidth": figure}
    if figure > 0:
        assert as_topology(figures).devices == nodes * per_node
    else:
        with pytest.raises(KerasmeshError):
            Topology(**{k: v for k, v in figures.items()})
