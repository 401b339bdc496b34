"""A cost's memory levers: rematerialization and micro-batches."""

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.cost import compare
from kerasmesh.cost import layout_cost as cost
from kerasmesh.remat import choice
from kerasmesh.remat.blocks import remat_mark

from remat_models import hub_backbone, residual_blocks
from small_models import mlp

BLOCKS, WIDTH, HIDDEN = 6, 32, 128


def blocks():
    return residual_blocks(n_blocks=BLOCKS, width=WIDTH, hidden=HIDDEN)


@pytest.fixture(scope="module")
def dp():
    return keras.distribution.DataParallel(
        devices=keras.distribution.list_devices())


@pytest.fixture(scope="module")
def costs(dp):
    """The blocks model's step on 8 devices under each remat choice."""
    model = blocks()
    return {r: cost.layout_cost(model, dp, 2048, "adam", "mse", remat=r)
            for r in choice.CHOICES}


def test_remat_lowers_xla_memory_and_records_the_choice(costs):
    none = costs["none"]
    assert none["remat"] == "none" and none["recompute_flops"] == 0
    for r in ("save_matmuls", "full"):
        assert costs[r]["remat"] == r
        assert costs[r]["xla"]["temp"] < 0.75 * none["xla"]["temp"]
        # Weights, optimizer and batch are the same step's.
        for k in ("weights", "optimizer", "inputs"):
            assert costs[r]["memory"][k] == none["memory"][k]


def test_recompute_flops_are_the_blocks_forward_pass(costs):
    full, none = costs["full"], costs["none"]
    # The blocks' matrix products, per device (256 samples of 2048):
    # two products of 2 * 32 * 128 flops per sample and block.
    products = 256 * BLOCKS * 2 * (2 * WIDTH * HIDDEN)
    assert products < full["recompute_flops"] < 2 * products
    # What the compiled step's count grew by, within XLA's fusion noise.
    grew = full["flops"] - none["flops"]
    assert full["recompute_flops"] == pytest.approx(grew, rel=0.25)
    # Keeping the products recomputes less.
    assert 0 < costs["save_matmuls"]["recompute_flops"] < \
        full["recompute_flops"]


def test_a_blend_over_the_blocks_recomputes_between_its_choices(dp, costs):
    blend = choice.blend(1, BLOCKS)
    r = cost.layout_cost(blocks(), dp, 2048, "adam", "mse", remat=blend)
    assert r["remat"] == list(blend)
    assert costs["save_matmuls"]["recompute_flops"] < r["recompute_flops"] \
        < costs["full"]["recompute_flops"]


def test_a_cost_applies_remat_for_its_step_only(dp):
    model = blocks()
    choice.set_remat(model, "save_matmuls")
    marks = [remat_mark(b) for b in model.layers]
    as_is = cost.layout_cost(model, dp, 64, remat=None)
    assert as_is["remat"] == "save_matmuls"
    assert cost.layout_cost(model, dp, 64, remat="full")["remat"] == "full"
    assert cost.layout_cost(model, dp, 64, remat="none")["remat"] == "none"
    assert [remat_mark(b) for b in model.layers] == marks
    choice.set_remat(model, "none")


def test_remat_works_in_a_backbones_cost(mesh):
    pytest.importorskip("keras_hub")
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*(query|key|value)/kernel"] = (None, None, "model")
    mp = keras.distribution.ModelParallel(layout_map=lm,
                                          batch_dim_name="data")
    shapes = {"token_ids": [64], "padding_mask": [64]}
    none, full = (cost.layout_cost(lambda: hub_backbone("llama"), mp, 8,
                                   "adam",
                                   input_shapes=shapes, remat=r)
                  for r in ("none", "full"))
    assert full["xla"]["temp"] < none["xla"]["temp"]
    assert full["recompute_flops"] > 0


def test_micro_batches_count_accumulators_and_shrink_the_step(dp):
    one = cost.layout_cost(blocks, dp, 2048, "adam", "mse")
    four = cost.layout_cost(blocks, dp, 2048, "adam", "mse",
                            accumulation_steps=4)
    assert (one["accumulation_steps"], one["micro_batch_size"]) == (1, 2048)
    assert (four["accumulation_steps"], four["micro_batch_size"]) == \
        (4, 512)
    assert four["batch_size"] == one["batch_size"] == 2048
    assert four["plan"]["batch_size"] == 512
    # One accumulator per trainable variable, placed as it is (replicated
    # here): the weights' bytes once more.
    assert four["memory"]["optimizer"] == \
        one["memory"]["optimizer"] + one["memory"]["weights"]
    assert four["memory"]["inputs"] == one["memory"]["inputs"] / 4
    assert four["xla"]["temp"] < 0.5 * one["xla"]["temp"]


def test_the_optimizers_own_accumulation_is_kept_unless_steps_are_given(dp):
    adam = keras.optimizers.Adam(gradient_accumulation_steps=8)
    own = cost.layout_cost(mlp, dp, 16, adam, "mse")
    replaced = cost.layout_cost(mlp, dp, 16, adam, "mse",
                                accumulation_steps=1)
    plain = cost.layout_cost(mlp, dp, 16, "adam", "mse")
    assert replaced["memory"]["optimizer"] == plain["memory"]["optimizer"]
    assert own["memory"]["optimizer"] > plain["memory"]["optimizer"]
    assert own["accumulation_steps"] == 1
    assert own["micro_batch_size"] == 16
    assert adam.gradient_accumulation_steps == 8


@pytest.mark.parametrize("steps, words", [
    (0, "positive whole number"), (2.5, "positive whole number"),
    (True, "positive whole number"), (3, "must divide `batch_size` (16)"),
    (4, 'micro-batch of 4 samples can\'t be split evenly over batch axis '
        '"batch" (8)')])
def test_bad_accumulation_steps_are_errors_before_any_compile(dp, steps,
                                                              words):
    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(mlp, dp, 16, accumulation_steps=steps)
    assert e.value.kind == "accumulation_steps"
    assert words in str(e.value)


def test_bad_remat_is_an_error(dp):
    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(mlp, dp, 16, remat="dots")
    assert e.value.kind == "remat"
    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(mlp, dp, 16, remat="full")
    assert e.value.kind == "remat_blocks"


def test_compare_passes_the_levers_to_every_layout(dp):
    out = compare.layout_costs(blocks, [dp, dp], 64, "adam", "mse",
                               remat="full", accumulation_steps=2)
    assert [o["ok"] for o in out] == [True, True]
    assert {(o["value"]["remat"], o["value"]["micro_batch_size"])
            for o in out} == {("full", 32)}
