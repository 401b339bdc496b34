"""The pieces of the abstract training step: losses per output, targets
and sharded input specs."""

import jax
import keras
import numpy as np
import pytest
from jax.sharding import Mesh

from kerasmesh.cost import step
from kerasmesh.core.errors import KerasmeshError

MESH = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))


def test_no_loss_anywhere_is_the_stand_in():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    assert step.loss_functions(None, model, 1) == (None, step.STAND_IN_LOSS)


def test_one_loss_serves_every_output_and_a_list_gives_one_each():
    fns, name = step.loss_functions("mse", None, 2)
    assert len(fns) == 2 and name == "mse"
    fns, name = step.loss_functions(["mse", "mae"], None, 2)
    assert name == "mse, mae"


def test_a_list_of_the_wrong_length_is_a_loss_error():
    with pytest.raises(KerasmeshError) as info:
        step.loss_functions(["mse"], None, 2)
    assert info.value.kind == "loss"
    assert info.value.bullets[0] == ("x", "1 loss for 2 outputs.")


def test_an_unknown_loss_carries_the_value_as_a_fact():
    with pytest.raises(KerasmeshError) as info:
        step.loss_functions("msee", None, 1)
    e = info.value
    assert e.kind == "loss"
    assert e.bullets[0][2]["values"] == ["msee"]
    assert 'the string "msee"' in str(e)


def test_sparse_losses_compare_with_integer_labels():
    assert step.target_spec("sparse_categorical_crossentropy", (8, 10),
                            "float32") == ((8,), "int32")
    assert step.target_spec("mse", (8, 10), "float32") == ((8, 10),
                                                          "float32")


def test_sharded_specs_know_what_one_device_holds():
    spec = step.sharded((8, 16), "float32", MESH, ["data", "model"])
    assert step.shard_bytes(spec) == 4 * 4 * 4
    spec = step.sharded((8, 16), "float32", MESH, [None, ["data", "model"]])
    assert step.shard_bytes(spec) == 8 * 2 * 4


def test_the_steps_state_is_placed_by_path_as_the_plan_places_it():
    from kerasmesh.plan.placements import place_model

    mesh = keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*kernel"] = (None, "model")
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8)])
    placement = place_model(model, lm, "adam")
    dist = keras.distribution.ModelParallel(layout_map=lm)
    specs = step.step_specs(model, placement, dist, "adam", None, 8, None)
    trainable, frozen, slots = specs.state
    kernel = trainable[0]
    assert kernel.sharding.shard_shape(kernel.shape) == (4, 2)
    # Adam's slots for the kernel follow it; its counters are whole.
    shards = sorted(s.sharding.shard_shape(s.shape) for s in slots)
    assert shards.count((4, 2)) == 2
    assert step.shard_bytes(specs.xs) == 4 * 4 * 4
    assert specs.loss_text == step.STAND_IN_LOSS and specs.ys == [None]
