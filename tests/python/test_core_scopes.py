"""Shape-only and no-distribution scopes restore what they change."""

import keras
import pytest
from keras.src.backend.common import global_state

from kerasmesh.core import scopes


@pytest.fixture
def distribution():
    dist = keras.distribution.DataParallel()
    keras.distribution.set_distribution(dist)
    yield dist
    keras.distribution.set_distribution(None)


def test_no_distribution_inside_and_the_old_one_after(distribution):
    with scopes.no_distribution():
        assert keras.distribution.distribution() is None
    assert keras.distribution.distribution() is distribution


def test_no_distribution_restores_on_error(distribution):
    with pytest.raises(RuntimeError, match="boom"):
        with scopes.no_distribution():
            raise RuntimeError("boom")
    assert keras.distribution.distribution() is distribution


def test_shape_only_builds_without_values_or_layouts(distribution):
    pending = list(global_state.get_global_attribute(
        "uninitialized_variables") or [])
    with scopes.shape_only():
        assert keras.distribution.distribution() is None
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    assert keras.distribution.distribution() is distribution
    assert model.variables[0]._value is None
    assert list(global_state.get_global_attribute(
        "uninitialized_variables") or []) == pending


def test_shape_only_restores_on_error(distribution):
    with pytest.raises(ValueError, match="no model today"):
        with scopes.shape_only():
            keras.layers.Dense(3).build((None, 4))
            raise ValueError("no model today")
    assert keras.distribution.distribution() is distribution
    # Keras is usable again: a model built now gets values.
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    assert model.variables[0]._value is not None


def compiled_builder():
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(8)])
    model.compile(optimizer="adam", loss="mse")
    return model


def test_a_builder_that_compiles_fails_in_a_bare_stateless_scope():
    # What the planner met before: the reason for the scope below.
    with pytest.raises(ValueError, match="stateless scope"):
        with scopes.shape_only():
            compiled_builder()


def test_compile_runs_in_the_shape_only_scope_without_allocating():
    with scopes.shape_only(), scopes.compile_outside_stateless_scope():
        model = compiled_builder()
        assert global_state.get_global_attribute("stateless_scope") is not None
    assert model.optimizer is not None
    assert model.loss == "mse"
    # The weights were never given values.
    assert all(v._value is None for v in model.weights)


def test_keras_compile_is_back_after_the_scope_on_every_path():
    own = keras.Model.__dict__.get("compile")
    inherited = keras.Model.compile
    with pytest.raises(RuntimeError, match="boom"):
        with scopes.compile_outside_stateless_scope():
            assert keras.Model.compile is not inherited
            raise RuntimeError("boom")
    assert keras.Model.__dict__.get("compile") is own
    assert keras.Model.compile is inherited


def test_an_optimizer_made_in_the_builder_works_in_the_shape_only_scope():
    def builder():
        model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(8)])
        model.compile(optimizer=keras.optimizers.LossScaleOptimizer(
            keras.optimizers.Adam(1e-3)), loss="mse")
        return model

    with pytest.raises(ValueError, match="stateless scope"):
        with scopes.shape_only():
            builder()
    with scopes.shape_only(), scopes.compile_outside_stateless_scope():
        model = builder()
    assert type(model.optimizer).__name__ == "LossScaleOptimizer"
    assert all(v._value is None for v in model.weights)


def test_keras_optimizer_constructor_is_back_after_the_scope():
    from keras.src.optimizers.base_optimizer import BaseOptimizer

    own = BaseOptimizer.__dict__["__init__"]
    with pytest.raises(RuntimeError, match="boom"):
        with scopes.compile_outside_stateless_scope():
            assert BaseOptimizer.__dict__["__init__"] is not own
            raise RuntimeError("boom")
    assert BaseOptimizer.__dict__["__init__"] is own
