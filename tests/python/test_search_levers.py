"""The levers searched with the layout: which are allowed, the
micro-batch counts each mesh splits, and the remat choices that blend."""

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.cost.recompute import Levers
from kerasmesh.search import levers
from remat_models import residual_blocks


def plain():
    return keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])


def test_every_remat_choice_for_a_model_with_blocks_none_without():
    space = levers.lever_space(residual_blocks(), None, None, 16)
    assert space.remats == ("none", "save_matmuls", "full")
    assert levers.lever_space(plain(), None, None, 16).remats == ("none",)


def test_remat_asked_of_a_model_without_blocks_is_a_classed_error():
    with pytest.raises(KerasmeshError) as e:
        levers.lever_space(plain(), ["none", "full"], None, 16)
    assert e.value.kind == "remat_blocks"
    with pytest.raises(KerasmeshError) as e:
        levers.lever_space(plain(), "most", None, 16)
    assert e.value.kind == "remat"


def test_micro_batches_must_divide_the_batch_and_split_over_data():
    space = levers.lever_space(plain(), None, None, 16)
    assert space.ks(2) == [1, 2, 4, 8]
    assert space.ks(8) == [1, 2]
    assert space.base(4) == Levers("none", 1)
    limited = levers.lever_space(plain(), None, [4, 8], 16)
    assert limited.ks(4) == [4]
    assert limited.base(8) is None
    with pytest.raises(KerasmeshError) as e:
        levers.lever_space(plain(), None, 3, 16)
    assert e.value.kind == "accumulation_steps" and "(3)" in str(e.value)


def test_only_neighbouring_choices_blend_and_only_over_blocks():
    space = levers.lever_space(residual_blocks(), None, None, 16)
    assert space.blocks == 3
    assert space.pairs() == [("save_matmuls", "none"),
                             ("full", "save_matmuls")]
    skipping = levers.lever_space(residual_blocks(), ["none", "full"],
                                  None, 16)
    assert skipping.remats == ("none", "full") and skipping.pairs() == []
    assert levers.lever_space(plain(), None, None, 16).pairs() == []


def test_a_reduced_model_blends_over_the_full_depth():
    space = levers.lever_space(residual_blocks(), None, None, 16, depth=32)
    assert space.blocks == 32
    assert levers.lever_space(plain(), None, None, 16, depth=32).blocks \
        is None
