"""The training guard: installed with a distribution, removed without one."""

import warnings

import keras
import numpy as np
import pytest

from kerasmesh.train import guard
from kerasmesh.train.distribution import set_distribution
from kerasmesh.core.errors import KerasmeshError

OWN = {name: getattr(keras.Model, name) for name in guard.GUARDED_METHODS}


@pytest.fixture(scope="module")
def mesh():
    return keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())


@pytest.fixture(autouse=True)
def no_distribution():
    yield
    set_distribution(None)


def layout_map(mesh, **rules):
    lm = keras.distribution.LayoutMap(mesh)
    for key, axes in rules.items():
        lm[key] = axes
    return lm


def small_sequential(units=8):
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(units)])


def keras_own_methods_are_back():
    return all(getattr(keras.Model, n) is OWN[n] for n in OWN) and \
        not any(n in keras.Model.__dict__ for n in OWN)


def test_setting_a_distribution_installs_the_guard_and_none_removes_it(mesh):
    assert keras_own_methods_are_back()
    dist = keras.distribution.DataParallel(
        device_mesh=keras.distribution.DeviceMesh((8,), ("batch",),
                                                  mesh.devices.flatten()))
    set_distribution(dist)
    assert guard.installed()
    assert keras.Model.fit is not OWN["fit"]
    assert keras.Model.fit.__wrapped__ is OWN["fit"]
    set_distribution(dist)  # twice: still one wrapper
    assert keras.Model.fit.__wrapped__ is OWN["fit"]
    set_distribution(None)
    assert not guard.installed()
    assert keras_own_methods_are_back()


def test_uninstall_leaves_a_method_replaced_after_the_guard(monkeypatch):
    guard.install()

    def mine(self, *args, **kwargs):
        return "mine"

    monkeypatch.setattr(keras.Model, "predict", mine)
    guard.uninstall()
    assert keras.Model.predict is mine
    assert keras.Model.fit is OWN["fit"]


def data_parallel_on(devices, axis="batch"):
    """DataParallel on a one-axis mesh over `devices`, in their order."""
    return keras.distribution.DataParallel(
        device_mesh=keras.distribution.DeviceMesh((len(devices),), (axis,),
                                                  devices))


def test_a_model_on_the_same_devices_in_another_order_is_misplaced(mesh):
    devices = list(mesh.devices.flatten())
    first = data_parallel_on(devices)
    other = data_parallel_on(devices[::-1])
    set_distribution(first)
    model = small_sequential()
    model.compile(optimizer="sgd", loss="mse")
    guard.check_placement(model)
    set_distribution(other)
    x, y = np.zeros((8, 4), "float32"), np.zeros((8, 8), "float32")
    with pytest.raises(KerasmeshError, match="another mesh") as e:
        model.fit(x, y, batch_size=8, verbose=0)
    assert e.value.kind == "model_placement"


def test_a_model_on_another_shape_or_axis_names_is_misplaced(mesh):
    devices = list(mesh.devices.flatten())
    set_distribution(data_parallel_on(devices))
    model = small_sequential()
    renamed = data_parallel_on(devices, "rows")
    with pytest.raises(KerasmeshError) as e:
        guard.check_placement(model, renamed)
    assert e.value.kind == "model_placement"


def test_a_model_on_a_mesh_over_other_devices_is_said_to_be(mesh):
    devices = list(mesh.devices.flatten())
    with data_parallel_on(devices[4:]).scope():
        model = small_sequential()
    with pytest.raises(KerasmeshError) as e:
        guard.check_placement(model, data_parallel_on(devices))
    assert e.value.kind == "model_placement"
    assert "on another mesh, over other devices" in str(e.value)
    assert "before the distribution" not in str(e.value)


def test_a_model_built_before_the_distribution_is_misplaced(mesh):
    model = small_sequential()
    set_distribution(keras.distribution.ModelParallel(
        layout_map=layout_map(mesh)))
    with pytest.raises(KerasmeshError, match="before the distribution"):
        model.predict(np.zeros((8, 4), "float32"), verbose=0)


def test_an_optimizer_compiled_before_the_distribution_is_misplaced(mesh):
    dist = keras.distribution.ModelParallel(layout_map=layout_map(mesh))
    with dist.scope():
        model = small_sequential()
    model.compile(optimizer="adam", loss="mse")
    set_distribution(dist)
    x, y = np.zeros((8, 4), "float32"), np.zeros((8, 8), "float32")
    with pytest.raises(KerasmeshError, match="4 variables") as e:
        model.fit(x, y, batch_size=8, verbose=0)
    assert e.value.kind == "model_placement"
    # Predicting reads the model's variables only, which are placed.
    assert model.predict(x, verbose=0).shape == (8, 8)


def test_check_before_training_catches_the_batch_size(mesh):
    lm = layout_map(mesh, nothing=(None, "model"))
    dist = keras.distribution.ModelParallel(layout_map=lm)
    with dist.scope():
        model = small_sequential()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            guard.check_before_training(
                model, "fit", (np.zeros((8, 4)), np.zeros((8, 8))),
                {"batch_size": 4})
        assert any(issubclass(w.category, guard.KerasmeshLayoutWarning)
                   for w in caught)
        with pytest.raises(KerasmeshError) as e:
            guard.check_before_training(
                model, "fit", (np.zeros((8, 4)), np.zeros((8, 8))),
                {"batch_size": 3})
        assert e.value.kind == "batch_size"
        old = guard.set_auto_check(False)
        try:
            guard.check_before_training(model, "fit", (np.zeros((8, 4)),),
                                        {"batch_size": 3})
        finally:
            guard.set_auto_check(old)


def test_the_guard_stops_fit_before_the_first_step(mesh):
    set_distribution(keras.distribution.ModelParallel(
        layout_map=layout_map(mesh, **{".*kernel": (None, "model")})))
    model = small_sequential()
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.zeros((13, 4), "float32"), np.zeros((13, 8), "float32")
    with pytest.raises(KerasmeshError, match="last batch") as e:
        model.fit(x, y, 6, verbose=0)  # batch size given by position
    assert e.value.kind == "batch_size"
    model.fit(x[:12], y[:12], batch_size=6, verbose=0)


def test_check_before_training_reads_the_batch_of_on_batch_calls(mesh):
    dist = keras.distribution.ModelParallel(layout_map=layout_map(mesh))
    with dist.scope():
        model = small_sequential()
        with pytest.raises(KerasmeshError, match="Batch size 3"):
            guard.check_before_training(
                model, "train_on_batch", (np.zeros((3, 4)), np.zeros((3, 8))))
        guard.check_before_training(model, "predict_on_batch",
                                    (np.zeros((4, 4)),))


def data_parallel_model():
    set_distribution(keras.distribution.DataParallel())
    model = small_sequential(2)
    model.compile(optimizer="sgd", loss="mse")
    return model


X, Y = np.zeros((100, 4), "float32"), np.zeros((100, 2), "float32")


@pytest.mark.parametrize("call, says", [
    (lambda m: m.fit(X, Y, batch_size=16, verbose=0),
     ["The last batch of the training data", "last batch of 4", "drop 4 (to 96)",
      "add 4 (to 104)"]),
    (lambda m: m.fit(X, Y, batch_size=10, verbose=0),
     ["Batch size 10 of the training data", "(2 left over)", "such as 8 or 16"]),
    (lambda m: m.fit(X, Y, batch_size=3, verbose=0),
     ["Batch size 3", "(3 left over)", "such as 8"]),
    (lambda m: m.fit(X, Y, batch_size=20, verbose=0),
     ["Batch size 20", "(4 left over)", "such as 16 or 24"]),
    (lambda m: m.fit(X, Y, batch_size=16, validation_split=0.2, verbose=0),
     ["The last batch of the validation split (0.2)", "20 samples",
      "`validation_data`"]),
    (lambda m: m.fit(X[:96], Y[:96], batch_size=16,
                     validation_data=(X[:20], Y[:20]), verbose=0),
     ["The last batch of the validation data", "20 samples"]),
    (lambda m: m.fit(X[:96], Y[:96], batch_size=16,
                     validation_data=(X[:16], Y[:16]),
                     validation_batch_size=12, verbose=0),
     ["Batch size 12 of the validation data", "`validation_batch_size`"]),
    (lambda m: m.evaluate(X, Y, batch_size=16, verbose=0),
     ["The last batch of the data to evaluate"]),
    (lambda m: m.predict(X, batch_size=16, verbose=0),
     ["The last batch of the data to predict"]),
    (lambda m: m.predict(X[:4], verbose=0),
     ["4 samples in batches of 32 leave a last batch of 4"]),
])
def test_data_parallel_batches_the_axis_cant_split_fail_first(call, says):
    model = data_parallel_model()
    weights = [np.array(w) for w in model.get_weights()]
    with pytest.raises(KerasmeshError) as e:
        call(model)
    assert e.value.kind == "batch_size"
    text = " ".join([e.value.message] + [b[1] for b in e.value.bullets])
    for s in says:
        assert s in text
    assert 'batch axis "batch" (8)' in e.value.message
    # Nothing ran: the weights are as they were.
    assert all((a == np.array(b)).all()
               for a, b in zip(weights, model.get_weights()))


def test_data_parallel_batches_that_split_evenly_train(mesh):
    model = data_parallel_model()
    model.fit(X[:80], Y[:80], batch_size=16, validation_split=0.2,
              verbose=0)
    model.fit(X[:96], Y[:96], batch_size=16,
              validation_data=(X[:24], Y[:24]), validation_batch_size=8,
              verbose=0)
    assert model.evaluate(X[:96], Y[:96], batch_size=32, verbose=0) >= 0
    assert model.predict(X[:96], batch_size=16, verbose=0).shape == (96, 2)
