"""The figures a candidate is judged by: extrapolation, time per device
order, reshardings."""

import pytest

from kerasmesh.search import figures
from kerasmesh.topology.machine import as_topology


def test_extrapolation_is_linear_in_every_figure():
    base = {"activations": 0.0, "gradients": 0.0, "steps": 1,
            "remat": "none", "reshardings": 0}
    f1 = dict(base, memory=10.0, by_axes={"a": 1.0}, flops=5.0,
              times={"model": 1.0})
    f2 = dict(base, memory=14.0, by_axes={"a": 3.0, "b": 2.0}, flops=7.0,
              times={"model": 1.5}, reshardings=2)
    f = figures.extrapolate(f1, f2, 5)
    assert f["memory"] == 26.0 and f["flops"] == 13.0
    assert f["by_axes"] == {"a": 9.0, "b": 8.0} and f["traffic"] == 17.0
    assert f["times"] == {"model": 3.0} and f["reshardings"] == 2
    # A blend a quarter of the way from f1 to f2.
    g = figures.between(f1, f2, 0.25)
    assert g["memory"] == 11.0 and g["flops"] == 5.5
    assert g["by_axes"] == {"a": 1.5, "b": 0.5} and g["times"] == \
        {"model": 1.125}


def test_bandwidth_time_takes_each_collective_at_its_slowest_axis():
    f = {"by_axes": {"a": 100.0, "a+b": 100.0}, "flops": 1e3, "steps": 2}
    assert figures.bandwidth_time(f, {"a": 100.0, "b": 10.0}, 1e3) == \
        pytest.approx(2 * (1 + 10 + 1))


def cost():
    """A cost with one all-reduce of 1 GB over positions 0-3."""
    return {"need": 1.0, "flops": 0.0, "compute_dtype": "float32",
            "collectives": {"axes": ["model"], "bytes": [1e9]},
            "ops": [{"collective": "all-reduce", "bytes": 1e9,
                     "groups": [[0, 1, 2, 3], [4, 5, 6, 7]],
                     "axes": ["model"]}],
            "reshardings": {"op_name": ["a", "b"]}}


def test_times_per_order_know_the_slowest_link():
    topo = as_topology({"nodes": 2, "devices_per_node": 4, "memory": 1e9,
                        "peak_flops": 1e12, "intra_node_bandwidth": 400e9,
                        "inter_node_bandwidth": 40e9})
    f = figures.figures(cost(), topo, {"model": [0, 0, 0, 0, 1, 1, 1, 1],
                                       "data": [0, 0, 1, 1, 0, 0, 1, 1]})
    # A ring all-reduce sends 2 (n - 1) / n of the bytes.
    assert f["times"]["model"] == pytest.approx(1.5e9 / 400e9)
    assert f["times"]["data"] == pytest.approx(1.5e9 / 40e9)
    assert figures.best_order(f) == "model"
    assert f["reshardings"] == 2
