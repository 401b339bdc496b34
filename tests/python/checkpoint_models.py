"""A small model, its data and a distribution fixture (a plugin of
conftest.py), shared by the checkpoint tests."""

import keras
import numpy as np
import pytest


def mesh_distribution(shape):
    mesh = keras.distribution.DeviceMesh(shape, ["data", "model"])
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*dense.*kernel"] = (None, "model")
    lm[".*dense.*bias"] = ("model",)
    return keras.distribution.ModelParallel(layout_map=lm,
                                            batch_dim_name="data")


def build(units=64, seed=7, compiled=True, optimizer="adam"):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([
        keras.Input((32,)),
        keras.layers.Dense(units, activation="relu", name="dense"),
        keras.layers.Dense(16, name="dense_1"),
    ], name="sequential")
    if compiled:
        model.compile(optimizer=keras.optimizers.Adam(0.01, name="adam")
                      if optimizer == "adam" else
                      keras.optimizers.SGD(0.01, momentum=0.9, name="sgd"),
                      loss="mse")
    return model


def data():
    rng = np.random.default_rng(11)
    return (rng.normal(size=(64, 32)).astype("float32"),
            rng.normal(size=(64, 16)).astype("float32"))


def values(model):
    return {v.path: np.asarray(v.value) for v in
            model.trainable_variables + model.optimizer.variables}


@pytest.fixture()
def distribution():
    previous = keras.distribution.distribution()
    yield lambda shape: keras.distribution.set_distribution(
        mesh_distribution(shape))
    keras.distribution.set_distribution(previous)
