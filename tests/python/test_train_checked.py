"""CheckedModelParallel: each variable's layout checked as Keras creates
the variable, naming the variable and the rule."""

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.train import checked


@pytest.fixture(scope="module")
def mesh():
    return keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())


def layout_map(mesh, **rules):
    lm = keras.distribution.LayoutMap(mesh)
    for key, axes in rules.items():
        lm[key] = axes
    return lm


def small_sequential(units=8, name=None):
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(units)],
                            name=name)


def test_checked_model_parallel_names_the_variable_at_creation(mesh):
    lm = layout_map(mesh, **{".*kernel": (None, "model")})
    dist = checked.checked_model_parallel(lm)
    with dist.scope():
        with pytest.raises(KerasmeshError, match="/kernel") as e:
            small_sequential(units=6)
    assert e.value.kind == "layout_divisibility"
