"""The optimizer's variables for a plan: built shape-only, each slot
paired with the model variable whose layout it copies."""

import keras
import pytest

from kerasmesh.plan import slots
from kerasmesh.core.errors import KerasmeshError


def small_model():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(8)])


def test_adam_has_two_slots_per_variable_paired_with_it():
    model = small_model()
    optimizer, pairs = slots.optimizer_variables("adam", model,
                                                 model.trainable_variables)
    assert type(optimizer).__name__ == "Adam"
    paired = [(v.path, ref.path) for v, ref in pairs if ref is not None]
    kernel = model.trainable_variables[0].path
    assert sum(1 for _, ref in paired if ref == kernel) == 2
    # The counters belong to no model variable.
    assert any(ref is None for _, ref in pairs)


def test_an_optimizer_object_is_copied_not_built():
    model = small_model()
    mine = keras.optimizers.SGD(momentum=0.9)
    optimizer, _ = slots.optimizer_variables(mine, model,
                                             model.trainable_variables)
    assert optimizer is not mine and not mine.built


def test_an_unknown_optimizer_is_an_optimizer_error_with_the_value():
    model = small_model()
    with pytest.raises(KerasmeshError) as info:
        slots.optimizer_variables("adamish", model, model.trainable_variables)
    e = info.value
    assert e.kind == "optimizer"
    assert e.bullets[0][1].startswith("Received {value}: ")
    assert e.bullets[0][2] == {"type": "character", "length": 1,
                               "values": ["adamish"]}
