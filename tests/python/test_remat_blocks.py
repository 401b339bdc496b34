"""What a model's blocks are."""

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.remat.blocks import find_blocks

from remat_models import HUB, hub_backbone, residual_blocks
from small_models import mlp


@pytest.mark.parametrize("family", sorted(HUB))
def test_a_backbones_blocks_are_its_transformer_layers(family):
    pytest.importorskip("keras_hub")
    model = hub_backbone(family)
    assert find_blocks(model) == list(model.transformer_layers)
    assert len(find_blocks(model)) == 3


def test_a_tasks_blocks_are_its_backbones():
    keras_hub = pytest.importorskip("keras_hub")
    backbone = hub_backbone("llama")
    task = keras_hub.models.Llama3CausalLM(backbone=backbone,
                                           preprocessor=None)
    assert find_blocks(task) == list(backbone.transformer_layers)


def test_repeated_layers_that_hold_layers_are_blocks():
    model = residual_blocks(n_blocks=4)
    assert [b.name for b in find_blocks(model)] == \
        [f"block_{i}" for i in range(4)]


def test_a_custom_block_class_repeated_is_a_block():
    class Block(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = keras.layers.Dense(8)

        def call(self, x):
            return x + self.inner(x)

    inputs = keras.Input((8,))
    x = inputs
    for i in range(2):
        x = Block(name=f"b{i}")(x)
    x = keras.layers.Dense(8, name="odd")(x)
    model = keras.Model(inputs, x)
    assert [b.name for b in find_blocks(model)] == ["b0", "b1"]


def test_one_composite_layer_or_repeated_plain_layers_are_not_blocks():
    inputs = keras.Input((8,))
    x = keras.Sequential([keras.layers.Dense(8)], name="only")(inputs)
    x = keras.layers.Dense(8, name="d1")(x)
    x = keras.layers.Dense(8, name="d2")(x)
    with pytest.raises(KerasmeshError) as e:
        find_blocks(keras.Model(inputs, x, name="flat"))
    assert e.value.kind == "remat_blocks"
    assert 'layers = )`, from "only", "d1" and "d2".' in str(e.value)


def test_named_layers_are_blocks_anywhere_in_the_model():
    model = residual_blocks()
    assert [b.name for b in find_blocks(model, ["up_1", "block_2"])] == \
        ["up_1", "block_2"]
    with pytest.raises(KerasmeshError) as e:
        find_blocks(mlp(), ["dense", "nope"])
    assert e.value.kind == "remat_blocks"
    assert 'no layer named "nope"' in str(e.value)
