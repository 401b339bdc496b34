"""Rules for layer outputs: recognised, listed, and never 'matches nothing'."""

import warnings

import keras
import numpy as np
import pytest
from keras import layers

from kerasmesh.train import guard
from kerasmesh.plan import planner as plan
from kerasmesh.plan.outputs import layer_output_paths, looks_like_output_key


@pytest.fixture(scope="module")
def mesh():
    return keras.distribution.DeviceMesh(
        (2, 4), ("batch", "model"), keras.distribution.list_devices())


def output_sharding_map(mesh, extra=()):
    """Keras's own end-to-end output-sharding case."""
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*dense.*kernel"] = (None, "model")
    lm[".*dense.*bias"] = ("model",)
    lm[".*dense.*output"] = ("batch", None)
    for key, axes in extra:
        lm[key] = axes
    return lm


def functional():
    inputs = layers.Input(shape=[28, 28, 1])
    y = layers.Flatten()(inputs)
    y = layers.Dense(units=200, use_bias=False, activation="relu")(y)
    y = layers.Dropout(0.4)(y)
    y = layers.Dense(units=16, activation="softmax")(y)
    return keras.Model(inputs=inputs, outputs=y)


def test_output_paths_are_those_keras_looks_up(mesh):
    """Recorded from Keras's own `get_tensor_layout()` calls in fit()."""
    seen = []

    class Recording(keras.distribution.ModelParallel):
        def get_tensor_layout(self, path):
            seen.append(path)
            return super().get_tensor_layout(path)

    dist = Recording(layout_map=output_sharding_map(mesh),
                     batch_dim_name="batch")
    with dist.scope():
        model = functional()
        model.compile(loss="mse")
        model.fit(np.zeros((16, 28, 28, 1)), np.zeros((16, 16)),
                  batch_size=8, verbose=0)
        seq = keras.Sequential([keras.Input((4,)), layers.Dense(8)])
        seq.predict(np.zeros((8, 4)), verbose=0)
    ours = {o["path"] for o in layer_output_paths(model)} | \
        {o["path"] for o in layer_output_paths(seq)}
    assert set(seen) <= ours


def test_output_rules_are_listed_with_their_layers_not_unmatched(mesh):
    p = plan.plan_layout(functional, output_sharding_map(mesh))
    assert p["summary"]["unmatched"] == []
    assert not [q for q in p["problems"] if q["kind"].startswith("unmatched")]
    [rule] = p["outputs"]
    assert rule["key"] == ".*dense.*output"
    assert rule["layers"] == 2
    assert rule["classes"] == ["Dense"]
    assert len(rule["listing"]) == 1
    assert all(path.endswith("/output") for path in rule["paths"])


def test_output_rule_matching_no_layer_warns(mesh):
    lm = output_sharding_map(mesh, [("encoder.*output", ("batch", None))])
    p = plan.plan_layout(functional, lm)
    [q] = [q for q in p["problems"] if q["rule"] == "encoder.*output"]
    assert q["kind"] == "unmatched_output_rule"
    assert q["severity"] == "warning"
    assert "no layer output" in q["message"]
    assert p["summary"]["unmatched"] == ["encoder.*output"]


def test_looks_like_output_key():
    assert looks_like_output_key(".*dense.*output")
    assert looks_like_output_key("(dense|conv).*output$")
    assert not looks_like_output_key(".*attention_output.kernel")


def test_no_false_warning_at_fit_for_output_rules(mesh):
    """Keras's end-to-end output-sharding case, through the fit() guard."""
    dist = keras.distribution.ModelParallel(
        layout_map=output_sharding_map(mesh), batch_dim_name="batch")
    guard.install()
    try:
        with dist.scope():
            model = functional()
            model.compile(loss="mse")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model.fit(np.zeros((16, 28, 28, 1)), np.zeros((16, 16)),
                          batch_size=8, verbose=0)
    finally:
        guard.uninstall()
    ours = [w for w in caught
            if issubclass(w.category, guard.KerasmeshLayoutWarning)]
    assert ours == []
