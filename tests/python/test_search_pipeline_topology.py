"""search_layout() on a topology: it chooses the mesh, its device order
and the levers, the fastest that fits, the same every time."""

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.cost import layout_cost as cost
from kerasmesh.search import pipeline as search
from test_search_pipeline import mlp

def topology(nodes=1, per_node=8, inter=50e9):
    return {"nodes": nodes, "devices_per_node": per_node, "memory": 80e9,
            "peak_flops": 1e12, "intra_node_bandwidth": 450e9,
            "inter_node_bandwidth": inter}


def residual():
    from remat_models import residual_blocks

    return residual_blocks(n_blocks=4, width=32, hidden=256)


def replicated(mesh):
    fixed = keras.distribution.LayoutMap(mesh)
    fixed[".*kernel"] = (None, None)
    fixed[".*bias"] = (None,)
    return fixed


def dp_memory(levers):
    mesh = keras.distribution.DeviceMesh((8, 1), ("data", "model"),
                                         keras.distribution.list_devices())
    d = keras.distribution.ModelParallel(
        layout_map=keras.distribution.LayoutMap(mesh), batch_dim_name="data")
    return cost.layout_cost(residual, d, 4096, "adam", "mse",
                            remat=levers[0], accumulation_steps=levers[1],
                            topology=topology())["need"]


def test_the_fastest_levers_that_fit_on_the_mesh_the_search_chose(mesh):
    # Either lever fits the budget; two micro-batches cost no time here,
    # remat costs its recomputation. (Which lever needs less memory depends
    # on the compiler: XLA's GPU compiler or the CPU's standing in.)
    halves, remat = dp_memory(("none", 2)), dp_memory(("save_matmuls", 1))
    whole = dp_memory(("none", 1))
    assert max(halves, remat) < whole
    budget = (max(halves, remat) + whole) / 2
    r = search.search_layout(residual, None, 4096, "adam", "mse",
                             memory=budget, fixed=replicated(mesh),
                             topology=topology(),
                             remat=["none", "save_matmuls"],
                             accumulation_steps=[1, 2])
    assert r["objective"] == "time" and r["verified"]
    assert (r["remat"], r["accumulation_steps"]) == ("none", 2)
    assert r["mesh"]["shape"] == [8, 1] and r["micro_batch_size"] == 2048
    assert r["cost"]["need"] <= budget
    assert r["cost"]["time"]["accumulation_steps"] == 2
    assert {m["mesh"] for m in r["meshes"]} == {"8x1", "4x2", "2x4", "1x8"}
    assert r["why"]["binds"] == "memory"
    assert r["why"]["faster"]["accumulation_steps"] == 1
    only_remat = search.search_layout(
        residual, None, 4096, "adam", "mse", memory=budget,
        fixed=replicated(mesh), topology=topology(),
        remat=["none", "save_matmuls"], accumulation_steps=1)
    assert only_remat["remat"] == "save_matmuls"
    assert only_remat["cost"]["need"] <= budget
    with pytest.raises(KerasmeshError) as e:
        search.search_layout(residual, None, 4096, "adam", "mse",
                             memory=budget, fixed=replicated(mesh),
                             topology=topology(), remat="none",
                             accumulation_steps=1)
    assert e.value.kind == "search_no_fit"
    assert 'remat "none", 1 micro-batch' in str(e.value)


def tp_mlp():
    """Tokens through a tensor-parallel MLP: its activations' all-reduces
    over "model" outweigh the gradients' over "data"."""
    inputs = keras.Input((1024, 64))
    hidden = keras.layers.Dense(512, name="up")(inputs)
    outputs = keras.layers.Dense(64, name="down")(hidden)
    return keras.Model(inputs, outputs, name="tp")


def tensor_parallel(mesh):
    fixed = keras.distribution.LayoutMap(mesh)
    fixed["up/kernel"] = (None, "model")
    fixed["up/bias"] = ("model",)
    fixed["down/kernel"] = ("model", None)
    fixed["down/bias"] = (None,)
    return fixed


def test_the_device_order_keeps_the_busy_axis_inside_a_node(mesh):
    # Two nodes of four, a slow network: the model axis's all-reduces
    # must stay inside a node, so the model axis varies fastest.
    r = search.search_layout(tp_mlp, None, 2, "sgd", "mse",
                             fixed=tensor_parallel(mesh),
                             topology=topology(2, 4, inter=1e6))
    assert r["mesh"]["shape"] == [2, 4] and r["device_order"] == "model"
    assert r["mesh"]["devices"] == [f"cpu:{i}" for i in range(8)]
    other = keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"),
        [f"cpu:{i}" for i in (0, 2, 4, 6, 1, 3, 5, 7)])
    lm = keras.distribution.LayoutMap(other)
    for key, axes in r["rules"]:
        lm[key] = tuple(axes)
    crossed = cost.layout_cost(
        tp_mlp, keras.distribution.ModelParallel(
            layout_map=lm, batch_dim_name="data"), 2, "sgd", "mse",
        topology=topology(2, 4, inter=1e6))
    assert crossed["time"]["total"] > r["cost"]["time"]["total"]


def test_the_verified_cost_measures_what_remat_recomputes(mesh):
    # The full-depth compile is quick, and still measures recomputation.
    r = search.search_layout(residual, None, 4096, "adam", "mse",
                             fixed=replicated(mesh), topology=topology(),
                             remat="full", accumulation_steps=1)
    assert r["verified"] and r["remat"] == "full"
    assert r["cost"]["recompute_flops"] > 0
    assert r["cost"]["time"]["recompute"] > 0


def test_a_topology_of_other_devices_and_remat_without_blocks_are_errors():
    with pytest.raises(KerasmeshError) as e:
        search.search_layout(mlp, None, 16, "sgd", "mse",
                             topology=topology(nodes=2))
    assert e.value.kind == "topology_devices"
    with pytest.raises(KerasmeshError) as e:
        search.search_layout(mlp, None, 16, "sgd", "mse", remat="full",
                             topology=topology())
    assert e.value.kind == "remat_blocks"
