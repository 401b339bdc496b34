"""quantize() of a sharded model outside its distribution warns."""

import warnings

import keras
import numpy as np
import pytest

from kerasmesh.core.errors import KerasmeshError, KerasmeshWarning
from kerasmesh.train import guard, quantize
from kerasmesh.train.distribution import set_distribution

OWN_NEW = keras.Model.__dict__["__new__"]


@pytest.fixture(autouse=True)
def no_distribution():
    yield
    set_distribution(None)


@pytest.fixture()
def dist(mesh, layout_map):
    return keras.distribution.ModelParallel(
        layout_map=layout_map(mesh, **{".*dense.*kernel": (None, "model")}),
        batch_dim_name="data")


def dense():
    return keras.Sequential([keras.Input((16,)),
                             keras.layers.Dense(32, name="dense")])


def kinds_warned(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [w.message.kind for w in caught
            if isinstance(w.message, KerasmeshWarning)]


def kernel_devices(model):
    [kernel] = [v for v in model.variables if v.path.endswith("/kernel")]
    return len(kernel.value.sharding.device_set)


def test_quantizing_outside_the_distribution_warns(dist):
    set_distribution(dist)
    model = dense()
    assert quantize.watched(model)
    set_distribution(None)
    assert kinds_warned(lambda: model.quantize("int8")) == \
        ["quantize_placement"]
    # What it warns about: the int8 kernel is on one device.
    assert kernel_devices(model) == 1


def test_quantizing_inside_the_distribution_keeps_the_layout(dist):
    set_distribution(dist)
    model = dense()
    assert kinds_warned(lambda: model.quantize("int8")) == []
    assert kernel_devices(model) == 8
    [kernel] = [v for v in model.variables if v.path.endswith("/kernel")]
    assert kernel.dtype == "int8"
    assert tuple(kernel.value.sharding.spec) == (None, "model")


def test_a_model_trained_under_the_distribution_is_watched(dist):
    model = dense()  # made before: not watched yet
    assert not quantize.watched(model)
    set_distribution(dist)
    # Made before the distribution, so it can't predict under it; the
    # guard saw it all the same.
    with pytest.raises(KerasmeshError, match="before the distribution"):
        model.predict(np.zeros((8, 16), "float32"), verbose=0)
    assert quantize.watched(model)


def test_a_model_on_one_device_quantizes_without_a_warning(dist):
    set_distribution(dist)
    set_distribution(None)
    model = dense()
    quantize.watch(model)
    assert kinds_warned(lambda: model.quantize("int8")) == []


def test_keras_model_new_is_back_when_the_distribution_goes(dist):
    set_distribution(dist)
    assert keras.Model.__dict__["__new__"] is not OWN_NEW
    set_distribution(None)
    assert keras.Model.__dict__["__new__"] is OWN_NEW
    assert not guard.installed()
    assert not quantize.watched(dense())
