"""CheckedModelParallel: each variable's layout checked as Keras creates
the variable, naming the variable and the rule."""

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.train import checked


@pytest.fixture
def mesh(mesh_2x4):
    return mesh_2x4


@pytest.fixture
def layout_map(rules_on):
    return rules_on


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
