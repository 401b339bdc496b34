"""CheckedModelParallel: each variable's layout checked as Keras creates
the variable, naming the variable and the rule."""

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.train import checked


def small_sequential(units=8, name=None):
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(units)],
                            name=name)


def test_checked_model_parallel_names_the_variable_at_creation(
        mesh, layout_map):
    lm = layout_map(mesh, **{".*kernel": (None, "model")})
    dist = checked.checked_model_parallel(lm)
    with dist.scope():
        with pytest.raises(KerasmeshError, match="/kernel") as e:
            small_sequential(units=6)
    assert e.value.kind == "layout_divisibility"


def test_checked_model_parallel_refuses_a_variable_two_rules_match(
        mesh, layout_map):
    lm = layout_map(mesh, **{".*kernel": (None, "model"),
                             "dense.*": (None, "model")})
    with checked.checked_model_parallel(lm).scope():
        with pytest.raises(KerasmeshError, match="dense/kernel") as e:
            keras.layers.Dense(8, name="dense").build((None, 4))
    assert e.value.kind == "layout_ambiguous"


def test_checked_model_parallel_places_a_layout_that_works(
        mesh, layout_map):
    lm = layout_map(mesh, **{".*kernel": (None, "model")})
    with checked.checked_model_parallel(lm).scope():
        model = small_sequential(units=8)
    kernel = model.layers[-1].kernel.value
    assert kernel.sharding.shard_shape(kernel.shape) == (4, 2)
