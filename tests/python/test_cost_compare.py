"""Several layouts of one model costed in one loop, the model built once."""

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.cost import compare
from kerasmesh.cost import layout_cost as cost
from small_models import mlp


def layouts(mesh):
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*dense.*kernel"] = (None, "model")
    return [keras.distribution.DataParallel(
                devices=keras.distribution.list_devices()),
            keras.distribution.ModelParallel(layout_map=lm,
                                             batch_dim_name="data")]


def test_the_loop_builds_once_and_gives_what_each_cost_alone_gives(mesh):
    calls = []

    def build():
        calls.append(1)
        return mlp()

    out = compare.layout_costs(build, layouts(mesh), 16, "adam", "mse")
    assert len(calls) == 1
    assert [r["ok"] for r in out] == [True, True]
    for r, d in zip(out, layouts(mesh)):
        alone = cost.layout_cost(mlp, d, 16, "adam", "mse")
        assert r["value"]["memory"] == alone["memory"]
        assert r["value"]["collectives"] == alone["collectives"]


def test_the_loop_stops_at_the_first_layout_that_fails(mesh):
    d = layouts(mesh)
    out = compare.layout_costs(mlp, [d[0], d[1], d[0]], 15, "adam", "mse")
    # 15 rows can't split over the 8 devices of data parallel.
    assert [r["ok"] for r in out] == [False]
    assert out[0]["kind"] == "batch_size"


def test_a_builder_that_fails_is_one_failed_envelope(mesh):
    def broken():
        raise RuntimeError("no model today")

    out = compare.layout_costs(broken, layouts(mesh), 16)
    assert len(out) == 1 and not out[0]["ok"]
    assert "no model today" in out[0]["message"]


def test_building_past_the_timeout_is_a_timeout_error(mesh):
    import time

    def slow():
        time.sleep(5)
        return mlp()

    start = time.monotonic()
    out = compare.layout_costs(slow, layouts(mesh), 16, timeout=0.5)
    assert time.monotonic() - start < 3
    assert out[0]["kind"] == "timeout"


def test_a_topology_gives_every_layout_its_modeled_time(mesh):
    topo = {"nodes": 1, "devices_per_node": 8, "memory": 80e9,
            "peak_flops": 100e12, "intra_node_bandwidth": 100e9}
    out = compare.layout_costs(mlp, layouts(mesh), 16, "adam", "mse",
                               topology=topo)
    assert [r["ok"] for r in out] == [True, True]
    for r, d in zip(out, layouts(mesh)):
        alone = cost.layout_cost(mlp, d, 16, "adam", "mse", topology=topo)
        assert r["value"]["time"] == alone["time"]
        assert r["value"]["time"]["total"] > 0


def test_a_build_past_the_timeout_says_whose_time_ran_out():
    import time

    from kerasmesh.cost.deadline import SEARCHING

    def slow():
        time.sleep(5)

    with pytest.raises(KerasmeshError) as costing:
        compare.build_model(slow, 0.3)
    with pytest.raises(KerasmeshError) as searching:
        compare.build_model(slow, 0.3, 0.0, SEARCHING)
    assert str(costing.value).startswith("Costing the training step took")
    assert str(searching.value).startswith("The search took longer than")
    assert "building the model" in str(searching.value)
