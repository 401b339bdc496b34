"""describe.object_type(): what an object is, by public Keras names."""

import keras
import pytest

from kerasmesh import call
from kerasmesh.core.describe import object_type


@pytest.fixture(scope="module")
def mesh():
    devices = keras.distribution.list_devices()
    return keras.distribution.DeviceMesh((2, 4), ["data", "model"], devices)


@pytest.fixture(scope="module")
def data_mesh():
    devices = keras.distribution.list_devices()
    return keras.distribution.DeviceMesh((8,), ["data"], devices)


def test_distribution_objects(mesh, data_mesh):
    layout_map = keras.distribution.LayoutMap(mesh)
    assert object_type(mesh) == "device_mesh"
    assert object_type(layout_map) == "layout_map"
    assert object_type(keras.distribution.TensorLayout([None, "model"], mesh)) \
        == "tensor_layout"
    assert object_type(keras.distribution.DataParallel(device_mesh=data_mesh)) \
        == "distribution"
    assert object_type(keras.distribution.ModelParallel(layout_map=layout_map)) \
        == "distribution"


def test_a_users_own_distribution_is_a_distribution(data_mesh):
    class Mine(keras.distribution.DataParallel):
        pass

    assert object_type(Mine(device_mesh=data_mesh)) == "distribution"


def test_models_layers_variables():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    assert object_type(model) == "model"
    assert object_type(model.layers[0]) == "layer"
    assert object_type(model.layers[0].kernel) == "variable"
    assert object_type(keras.optimizers.Adam()) == "optimizer"


@pytest.mark.parametrize("value", [None, 1, "mesh", [1, 2], {"a": 1}])
def test_anything_else_is_other(value):
    assert object_type(value) == "other"


def test_through_the_envelope(mesh):
    assert call("describe.object_type", x=mesh)["value"] == "device_mesh"
