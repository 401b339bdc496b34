"""What the search keeps of one compile: memory split by what the
micro-batch changes, collectives by axes and by what they move, the
schedule, and plain values for R."""

import keras
import pytest

from kerasmesh.cost import layout_cost as cost
from kerasmesh.search.figures import Figures
from search_fakes import cost_result
from small_models import mlp


def result(**changes):
    """`cost_result()` with collectives over "data" (weights, 6 bytes),
    "model" (activations, 3) and both (activations, 2)."""
    r = cost_result(need=100.0, temp=30.0, inputs=5.0)
    r["ops"] = [{"axes": ["data"], "bytes": 6.0, "weights": True},
                {"axes": ["model"], "bytes": 3.0},
                {"axes": ["data", "model"], "bytes": 2.0,
                 "weights": False}]
    r.update({"flops": 200.0, "recompute_flops": 50.0, **changes})
    return r


def test_memory_is_split_by_what_the_micro_batch_changes():
    f = Figures.of(result())
    assert (f.static, f.temp, f.inputs) == (65.0, 30.0, 5.0)
    assert f.memory == 100.0 and f.gradients == 1.0


def test_collectives_are_kept_by_axes_and_by_what_they_move():
    f = Figures.of(result())
    assert f.by_axes == {
        "data": {"weights": 6.0, "activations": 0.0},
        "model": {"weights": 0.0, "activations": 3.0},
        "data+model": {"weights": 0.0, "activations": 2.0}}
    assert f.plain() == {"memory": 100.0, "traffic": 11.0,
                         "by_axes": {"data": 6.0, "model": 3.0,
                                     "data+model": 2.0},
                         "flops": 200.0, "reshardings": 0}


def test_the_compile_and_the_schedule_are_kept():
    r = result(trace=[["c", "matmul", 1.0, 0.0]], micro_batch_size=4,
               reshardings={"op_name": ["a", "b"]})
    f = Figures.of(r)
    assert f.recompute_share == 0.25 and f.micro_batch == 4
    assert f.trace == r["trace"] and f.ops == r["ops"]
    assert f.reshardings == 2 and f.by_class
    gpu = Figures.of(result(compiled_for={"kind": "gpu"},
                            reshardings=["a"], flops=0.0))
    assert not gpu.by_class and gpu.reshardings == 1
    assert gpu.recompute_share == 0.0


def test_the_figures_of_a_compile_agree_with_its_cost(mesh):
    layout_map = keras.distribution.LayoutMap(mesh)
    layout_map["dense/kernel"] = (None, "model")
    r = cost.layout_cost(
        mlp(), keras.distribution.ModelParallel(
            layout_map=layout_map, batch_dim_name="data"),
        16, "sgd", "mse", quick=True, measure=False, trace=True)
    f = Figures.of(r)
    assert f.memory == pytest.approx(r["need"])
    assert f.plain()["traffic"] == pytest.approx(
        sum(r["collectives"]["bytes"]))
    assert f.micro_batch == 16 and f.trace and f.flops > 0
