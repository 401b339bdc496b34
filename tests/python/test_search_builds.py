"""The models a search builds must agree: the same shapes on every call,
and, with `blocks`, at every depth."""

import itertools

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.search import builds
from kerasmesh.search import pipeline as search


def dense(width, name="net"):
    inputs = keras.Input((8,))
    outputs = keras.layers.Dense(width, name="dense")(inputs)
    return keras.Model(inputs, outputs, name=name)


def test_the_same_model_built_twice_passes():
    builds.check_rebuild(dense(8), dense(8))
    assert builds.shape_changes(dense(8), dense(8)) == []


def test_other_shapes_on_the_next_call_name_the_variable_and_both():
    with pytest.raises(KerasmeshError) as e:
        builds.check_rebuild(dense(8), dense(16))
    assert e.value.kind == "search_builder"
    assert 'Variable "dense/kernel" had shape 8×8, then 8×16.' in \
        str(e.value)


def test_another_number_of_variables_is_an_error():
    two = keras.Sequential([keras.Input((8,)),
                            keras.layers.Dense(4, name="a"),
                            keras.layers.Dense(4, name="b")], name="net")
    with pytest.raises(KerasmeshError, match="4 variables, then 2") as e:
        builds.check_rebuild(two, dense(4))
    assert e.value.kind == "search_builder"


def test_a_search_whose_builder_changes_each_call_is_an_error(mesh):
    widths = itertools.count(8, 8)

    def changing():
        return dense(next(widths))

    fixed = keras.distribution.LayoutMap(mesh)
    fixed["dense/bias"] = (None,)
    with pytest.raises(KerasmeshError) as e:
        search.search_layout(changing, mesh, 16, "sgd", "mse", fixed=fixed)
    assert e.value.kind == "search_builder"
    assert "dense/kernel" in str(e.value)


def test_widths_that_change_with_the_block_count_are_named(mesh):
    def blocks(n):
        inputs = keras.Input((8,))
        x = inputs
        for i in range(n):
            x = keras.layers.Dense(8, name=f"block_{i}")(x)
        outputs = keras.layers.Dense(n, name="head")(x)
        return keras.Model(inputs, outputs, name="net")

    with pytest.raises(KerasmeshError) as e:
        search.search_layout(blocks, mesh, 16, "sgd", "mse", blocks=4)
    assert e.value.kind == "search_builder"
    text = str(e.value)
    assert 'Variable "head/kernel" has shape 8×1 with 1 block and ' \
        "8×2 with 2 (1 more variable too)." in text
    assert "number of blocks" in text


def test_depths_built_alike_pass():
    builds.check_depths({1: dense(8), 2: dense(8), None: dense(4)})
