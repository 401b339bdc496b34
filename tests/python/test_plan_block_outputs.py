"""Each block's output split over the batch axis: the rule the search adds,
and the planner's warning and fix where a layout map lacks it."""

import keras
import pytest

from kerasmesh.core.resolve import RuleResolver
from kerasmesh.cost import layout_cost as cost
from kerasmesh.plan.outputs import layer_output_paths
from kerasmesh.plan.planner import plan_layout
from kerasmesh.plan.block_outputs import block_output_rules
from kerasmesh.search.space import SearchSpace
from remat_models import hub_backbone
from small_models import mlp
from kerasmesh.core.text import string

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


def both_axes_map(mesh):
    """Tensor parallel over "model", fully sharded over "data"."""
    lm = keras.distribution.LayoutMap(mesh)
    lm["token_embedding/embeddings"] = ("model", "data")
    lm["token_embedding/reverse_embeddings"] = ("data", "model")
    lm[".*(query|key|value)/kernel"] = ("data", "model", None)
    lm[".*attention_output/kernel"] = ("model", None, "data")
    lm[".*feedforward_(intermediate|gate)_dense/kernel"] = ("data", "model")
    lm[".*feedforward_output_dense/kernel"] = ("model", "data")
    return lm


def test_weights_split_over_both_axes_move_less_over_the_batch_axis(mesh):
    # Without the rule, XLA all-reduces activations over "data" in every
    # block.
    model = keras_hub_llama()
    lm = both_axes_map(mesh)
    without = _data_traffic(lm)
    [(key, axes)] = block_output_rules(model, SIZES, "data")
    lm[key] = tuple(axes)
    assert _data_traffic(lm) < 0.5 * without


def _block_output_groups(model, lm):
    plan = plan_layout(model, lm)
    return [g for g in plan["groups"] if g["kind"] == "block_outputs"]


def test_the_plan_warns_of_weights_split_over_both_axes_and_fixes_it(mesh):
    model = keras_hub_llama()
    lm = both_axes_map(mesh)
    [group] = _block_output_groups(model, lm)
    assert group["severity"] == "warning"
    assert '"data"' in group["message"] and '"model"' in group["message"]
    [(key, axes)] = block_output_rules(model, SIZES, "data")
    assert group["fix"] == {"remove": [], "add": [[key, axes]]}
    # The key as R prints it, its backslashes escaped.
    assert any(b[0] == "i" and string(key) in b[1] for b in group["bullets"])
    lm[key] = tuple(axes)
    assert _block_output_groups(model, lm) == []


def test_no_warning_for_one_axis_one_device_axes_or_a_model_without_blocks(
        mesh):
    model = keras_hub_llama()
    tensor_parallel = keras.distribution.LayoutMap(mesh)
    tensor_parallel[".*feedforward_(intermediate|gate)_dense/kernel"] = \
        (None, "model")
    assert _block_output_groups(model, tensor_parallel) == []
    fully_sharded = keras.distribution.LayoutMap(mesh)
    fully_sharded[".*feedforward_(intermediate|gate)_dense/kernel"] = \
        ("data", None)
    assert _block_output_groups(model, fully_sharded) == []
    import jax

    flat = keras.distribution.DeviceMesh((8, 1), ("data", "model"),
                                         jax.devices())
    over_both = keras.distribution.LayoutMap(flat)
    over_both[".*feedforward_(intermediate|gate)_dense/kernel"] = \
        ("data", "model")
    assert _block_output_groups(model, over_both) == []
    plain = keras.distribution.LayoutMap(mesh)
    plain[".*kernel"] = ("data", "model")
    assert _block_output_groups(mlp(), plain) == []
