"""The search keeps each block's output split over the batch axis."""

import keras
import pytest

from kerasmesh.core.resolve import RuleResolver
from kerasmesh.cost import layout_cost as cost
from kerasmesh.plan.outputs import layer_output_paths
from kerasmesh.search.activations import block_output_rules
from kerasmesh.search.space import SearchSpace
from remat_models import hub_backbone
from small_models import mlp

pytest.importorskip("keras_hub")

SIZES = {"data": 2, "model": 4}


@pytest.fixture(scope="module")
def llama():
    return hub_backbone("llama", num_layers=3)


def test_one_rule_lays_every_blocks_output_out_over_the_batch(llama):
    [(key, axes)] = block_output_rules(llama, SIZES, "data")
    assert axes == ["data", None, None]
    resolver = RuleResolver([key])
    hits = [o["path"] for o in layer_output_paths(llama)
            if resolver.resolve(o["path"])[0] is not None]
    assert hits == [f"transformer_layer_{i}/output" for i in range(3)]


def test_no_rule_without_blocks_a_split_batch_or_where_fixed_rules_are(
        llama, mesh):
    assert block_output_rules(mlp(), SIZES, "data") == []
    assert block_output_rules(llama, {"data": 1, "model": 8}, "data") == []
    fixed = keras.distribution.LayoutMap(mesh)
    fixed["transformer_layer_1/output"] = ("data", "model", None)
    assert block_output_rules(llama, SIZES, "data", fixed) == []
    unrelated = keras.distribution.LayoutMap(mesh)
    unrelated["token_embedding/embeddings"] = ("model", None)
    assert len(block_output_rules(llama, SIZES, "data", unrelated)) == 1


def test_every_layout_of_the_space_carries_the_rule(llama, mesh):
    space = SearchSpace(llama, mesh, batch_dim="data")
    dp = tuple([0] * len(space.classes))
    lm = space.layout_map(dp)
    key = space.outputs[0][0]
    assert tuple(lm["transformer_layer_0/output"].axes) == \
        ("data", None, None)
    assert space.all_rules(dp) == [(key, ["data", None, None])]
    assert SearchSpace(llama, mesh).outputs == []


def _data_traffic(layout_map):
    """Bytes per device per step over "data", compiled by XLA."""
    r = cost.layout_cost(
        keras_hub_llama, keras.distribution.ModelParallel(layout_map=layout_map,
                                                batch_dim_name="data"),
        8, "adam", input_shapes={"token_ids": 64, "padding_mask": 64},
        quick=True)
    c = r["collectives"]
    return sum(b for a, b in zip(c["axes"], c["bytes"]) if a == "data")


def keras_hub_llama():
    """A small Llama-3 backbone whose heads and widths 4 devices split."""
    import keras_hub

    return keras_hub.models.Llama3Backbone(
        vocabulary_size=256, num_query_heads=8, num_key_value_heads=4,
        hidden_dim=64, intermediate_dim=128, num_layers=2)


def test_weights_split_over_both_axes_move_less_over_the_batch_axis(mesh):
    # Tensor parallel over "model", fully sharded over "data": without the
    # rule, XLA all-reduces activations over "data" in every block.
    model = keras_hub_llama()
    lm = keras.distribution.LayoutMap(mesh)
    lm["token_embedding/embeddings"] = ("model", "data")
    lm["token_embedding/reverse_embeddings"] = ("data", "model")
    lm[".*(query|key|value)/kernel"] = ("data", "model", None)
    lm[".*attention_output/kernel"] = ("model", None, "data")
    lm[".*feedforward_(intermediate|gate)_dense/kernel"] = ("data", "model")
    lm[".*feedforward_output_dense/kernel"] = ("model", "data")
    without = _data_traffic(lm)
    [(key, axes)] = block_output_rules(model, SIZES, "data")
    lm[key] = tuple(axes)
    assert _data_traffic(lm) < 0.5 * without
