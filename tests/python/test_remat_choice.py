"""Applying a remat choice: for good (`set_remat()`) or for one step
(`remat_scope()`), per layer instance, with Keras's and keras-hub's own
functions untouched."""

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.remat import choice
from kerasmesh.remat.blocks import remat_mark

from remat_models import hub_backbone, residual_blocks
from small_models import mlp


def keras_functions(layer_class):
    """The functions a global patch would replace, by identity."""
    from keras.src.ops.operation import Operation

    return (keras.layers.Layer.__call__, Operation.__call__,
            keras.layers.Layer.stateless_call, keras.Model.__call__,
            layer_class.call, keras.Sequential.call)


def test_set_remat_marks_the_blocks_and_none_removes_it():
    model = residual_blocks()
    out = choice.set_remat(model, "save_matmuls")
    assert out == {"remat": "save_matmuls",
                   "blocks": ["block_0", "block_1", "block_2"]}
    blocks = [model.get_layer(n) for n in out["blocks"]]
    assert [remat_mark(b) for b in blocks] == ["save_matmuls"] * 3
    assert choice.model_remat(model) == "save_matmuls"
    # Again: the old marks go first, so there is one wrapper per block.
    choice.set_remat(model, "full")
    assert [remat_mark(b) for b in blocks] == ["full"] * 3
    assert vars(blocks[0])["call"].__wrapped__.__func__ is \
        keras.Sequential.call
    assert choice.set_remat(model, "none") == {"remat": "none", "blocks": []}
    assert not any("call" in vars(b) for b in blocks)
    assert choice.model_remat(model) == "none"


def test_set_remat_on_named_layers():
    model = mlp()
    out = choice.set_remat(model, "full", layers=["dense", "dense_1"])
    assert out["blocks"] == ["dense", "dense_1"]
    # Those are its blocks from now on, as a cost finds them.
    assert choice.model_remat(model) == "full"
    with choice.remat_scope(model, "save_matmuls") as remat:
        assert remat == "save_matmuls"
        assert remat_mark(model.get_layer("dense")) == "save_matmuls"
    assert remat_mark(model.get_layer("dense")) == "full"
    choice.set_remat(model, "none")
    assert not any("call" in vars(x) for x in model.layers)


def test_remat_scope_leaves_keras_and_keras_hub_as_they_were():
    pytest.importorskip("keras_hub")
    model = hub_backbone("llama")
    layer_class = type(model.transformer_layers[0])
    before = keras_functions(layer_class)
    with choice.remat_scope(model, "full"):
        assert all(remat_mark(b) == "full" for b in model.transformer_layers)
        assert keras_functions(layer_class) == before
    assert keras_functions(layer_class) == before
    assert all(a is b for a, b in zip(keras_functions(layer_class), before))
    assert not any("call" in vars(b) for b in model.transformer_layers)


def test_remat_scope_undoes_itself_when_the_body_fails():
    model = residual_blocks()
    choice.set_remat(model, "full")
    calls = {b.name: vars(b)["call"] for b in model.layers
             if "call" in vars(b)}
    with pytest.raises(RuntimeError):
        with choice.remat_scope(model, "none"):
            assert choice.model_remat(model) == "none"
            raise RuntimeError("stop")
    assert {b.name: vars(b)["call"] for b in model.layers
            if "call" in vars(b)} == calls
    with choice.remat_scope(model, None) as remat:
        assert remat == "full"
    choice.set_remat(model, "none")


@pytest.mark.parametrize("bad", ["dots", "", "FULL", None, 1, [],
                                 ["full", "dots"], ("full", None)])
def test_an_unknown_choice_is_a_remat_error(bad):
    with pytest.raises(KerasmeshError) as e:
        choice.set_remat(residual_blocks(), bad)
    assert e.value.kind == "remat"
    assert '"none", "save_matmuls", "full"' in e.value.message


def test_a_model_without_blocks_is_a_remat_blocks_error_and_stays_as_is():
    model = mlp()
    with pytest.raises(KerasmeshError) as e:
        choice.set_remat(model, "full")
    assert e.value.kind == "remat_blocks"
    assert 'Model "mlp" has no blocks' in e.value.message
    assert "`set_remat(model, layers = )`" in str(e.value)
    with pytest.raises(KerasmeshError) as e:
        with choice.remat_scope(model, "save_matmuls"):
            pass
    assert e.value.kind == "remat_blocks"
    # "none" needs no blocks.
    assert choice.set_remat(model, "none")["blocks"] == []
    with choice.remat_scope(model, "none") as remat:
        assert remat == "none"


def test_set_remat_refuses_what_is_not_a_model():
    with pytest.raises(KerasmeshError) as e:
        choice.set_remat("model", "full")
    assert e.value.kind == "model"


def test_one_choice_per_block_is_applied_block_by_block():
    model = residual_blocks()
    per_block = ["full", "none", "save_matmuls"]
    out = choice.set_remat(model, per_block)
    assert out == {"remat": per_block, "blocks": ["block_0", "block_2"]}
    assert [remat_mark(model.get_layer(f"block_{i}")) for i in range(3)] == \
        ["full", None, "save_matmuls"]
    assert choice.model_remat(model) == tuple(per_block)
    # Within a scope: another blend, then the model's own again.
    with choice.remat_scope(model, choice.blend(2, 3)) as remat:
        assert remat == ("full", "full", "save_matmuls")
        assert [remat_mark(model.get_layer(f"block_{i}"))
                for i in range(3)] == list(remat)
    assert choice.model_remat(model) == tuple(per_block)
    # Blocks left out of one choice are still told apart.
    choice.set_remat(model, ["full", "none", "full"])
    assert choice.model_remat(model) == ("full", "none", "full")
    choice.set_remat(model, "none")
    assert choice.model_remat(model) == "none"


def test_one_choice_per_block_must_name_every_block():
    model = residual_blocks()
    with pytest.raises(KerasmeshError) as e:
        choice.set_remat(model, ["full", "full"])
    assert e.value.kind == "remat"
    assert "one choice per block: the model has 3 blocks" in str(e.value)
    assert choice.model_remat(model) == "none"


def test_a_remat_in_words_and_by_how_much_it_recomputes():
    assert choice.label("full") == "full"
    assert choice.label(None) == "none"
    assert choice.label(choice.blend(1, 4)) == "full x1, save_matmuls x3"
    assert choice.blend(0, 2) == ("save_matmuls", "save_matmuls")
    assert choice.rank("none") < choice.rank("save_matmuls") < \
        choice.rank(choice.blend(1, 4)) < choice.rank("full")


def test_a_blend_puts_the_heavier_choice_on_the_first_blocks():
    saved_then_none = choice.blend(2, 5, "save_matmuls", "none")
    assert saved_then_none == ("save_matmuls",) * 2 + ("none",) * 3
    # The count is clamped to the blocks.
    assert choice.blend(7, 5) == ("full",) * 5
    assert choice.blend(-1, 3) == ("save_matmuls",) * 3
