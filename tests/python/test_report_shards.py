"""Shards of sharded tensors, from shapes alone and from placed variables."""

import math

import keras
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kerasmesh import call
from kerasmesh.report import shards
from kerasmesh.core.errors import KerasmeshError


@pytest.fixture(scope="module")
def mesh():
    return keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())


def test_book_kernel_is_four_column_shards_held_by_two_devices(mesh):
    out = shards.tensor_shards(mesh, [None, "model"], [16000, 64000])
    assert out["shard_shape"] == [16000, 16000]
    assert out["copies"] == 2
    b = out["shards"]
    assert b["start"] == [[0, 0], [0, 16000], [0, 32000], [0, 48000]]
    assert b["stop"] == [[16000, 16000], [16000, 32000], [16000, 48000],
                         [16000, 64000]]
    assert b["devices"] == [["cpu:0", "cpu:4"], ["cpu:1", "cpu:5"],
                            ["cpu:2", "cpu:6"], ["cpu:3", "cpu:7"]]
    assert out["bytes"] == 16000 * 64000 * 4
    assert out["device_bytes"] == out["bytes"] / 4
    assert out["mesh"]["axis_names"] == ["data", "model"]


def test_a_short_layout_is_padded_like_keras(mesh):
    out = shards.tensor_shards(mesh, ["model"], [8, 4, 6])
    assert out["axes"] == ["model", None, None]
    assert out["shard_shape"] == [2, 4, 6]


def test_an_axis_pair_splits_over_its_product_when_jax_placed_it(mesh):
    for pair in (["data", "model"], "data+model"):
        out = shards.tensor_shards(mesh, [pair], [16], several=True)
        assert out["axes"] == [["data", "model"]]
        assert len(out["shards"]["devices"]) == 8
        assert out["copies"] == 1


def test_an_axis_pair_is_refused_as_a_layout_keras_cant_place(mesh):
    for pair in (["data", "model"], ("data", "model"), "data+model"):
        with pytest.raises(KerasmeshError) as e:
            shards.tensor_shards(mesh, [None, pair], [16, 16])
        assert e.value.kind == "layout_axes"
        assert "several mesh axes" in e.value.message


def test_a_scalar_is_one_shard_on_every_device(mesh):
    out = shards.tensor_shards(mesh, [], [])
    assert out["shards"]["start"] == [[]]
    assert len(out["shards"]["devices"][0]) == 8
    assert out["copies"] == 8


@pytest.mark.parametrize("axes, shape, kind", [
    ([None, "model"], [16, 6], "layout_divisibility"),
    ([None, "shard"], [16, 8], "layout_axes"),
    (["model", "model"], [16, 8], "layout_axes"),
    ([None, None, "model"], [16, 8], "layout_rank"),
    ([None], [16, -1], "shape"),
])
def test_bad_layouts_are_kerasmesh_errors(mesh, axes, shape, kind):
    with pytest.raises(KerasmeshError) as e:
        shards.tensor_shards(mesh, axes, shape)
    assert e.value.kind == kind


def test_the_envelope_returns_plain_values(mesh):
    out = call("shards.tensor_shards", mesh=mesh, axes=[None, "model"],
               shape=[32, 64], dtype="bfloat16")
    assert out["ok"]
    assert out["value"]["device_bytes"] == 32 * 16 * 2


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([None, "data", "model"]), min_size=1,
                max_size=4),
       st.lists(st.integers(1, 3), min_size=4, max_size=4))
def test_shards_tile_the_tensor_and_cover_every_device(mesh, axes, mult):
    used = [a for a in axes if a is not None]
    if len(used) != len(set(used)):
        return
    shape = [8 * m for m in mult[:len(axes)]]
    out = shards.tensor_shards(mesh, axes, shape)
    b = out["shards"]
    volume = sum(math.prod(e - s for s, e in zip(start, stop))
                 for start, stop in zip(b["start"], b["stop"]))
    assert volume == math.prod(shape)
    devices = [d for ds in b["devices"] for d in ds]
    assert sorted(devices) == sorted(f"cpu:{i}" for i in range(8))
    assert len(devices) == out["copies"] * len(b["devices"])


def test_a_placed_variable_reads_its_own_sharding(mesh):
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*kernel"] = (None, "model")
    dist = keras.distribution.ModelParallel(layout_map=lm)
    with dist.scope():
        model = keras.Sequential([keras.Input((4,)),
                                  keras.layers.Dense(8, name="dense")],
                                 name="seq")
    out = shards.variable_shards(model, "dense/kernel")
    assert out["path"] == "seq/dense/kernel"
    assert out["source"] == "placed"
    assert out["axes"] == [None, "model"]
    assert out["shards"]["devices"][0] == ["cpu:0", "cpu:4"]
    assert out["mesh"]["shape"] == [2, 4]
    with pytest.raises(KerasmeshError) as e:
        shards.variable_shards(model, "kernel/dense")
    assert e.value.kind == "variable_path"


def test_an_unplaced_variable_is_one_shard(mesh):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    out = shards.variable_shards(model, model.variables[0].path)
    assert out["mesh"] is None
    assert len(out["shards"]["devices"]) == 1
    assert np.prod(out["shard_shape"]) == 8


def test_a_model_without_variables_says_so_and_one_needs_no_path():
    empty = keras.Sequential([keras.Input((4,)), keras.layers.Flatten()],
                             name="empty")
    for path in (None, "dense/kernel"):
        with pytest.raises(KerasmeshError) as e:
            shards.variable_shards(empty, path)
        assert e.value.kind == "variable_path"
        assert 'Model "empty" has no variables.' in str(e.value)
        assert "path" not in e.value.message
    one = keras.Sequential([keras.Input((4,)),
                            keras.layers.Dense(2, use_bias=False)])
    assert shards.variable_shards(one)["path"] == one.variables[0].path
    two = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    with pytest.raises(KerasmeshError, match="one of the 2 variables"):
        shards.variable_shards(two)
