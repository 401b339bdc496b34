"""The levers searched with the layout: which are allowed, and the fewest
that fit."""

import keras
import pytest

from kerasmesh.core.errors import KerasmeshError
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
    assert space.base(4) == ("none", 1)
    limited = levers.lever_space(plain(), None, [4, 8], 16)
    assert limited.ks(4) == [4]
    assert limited.base(8) is None
    with pytest.raises(KerasmeshError) as e:
        levers.lever_space(plain(), None, 3, 16)
    assert e.value.kind == "accumulation_steps" and "(3)" in str(e.value)


def test_memory_at_more_micro_batches_shrinks_with_the_activations():
    f = {"memory": 100.0, "activations": 80.0, "gradients": 5.0, "steps": 1}
    assert levers.predict_memory(f, 1) == 100.0
    assert levers.predict_memory(f, 4) == pytest.approx(20 + 20 + 5)
    g = dict(f, steps=2)
    assert levers.predict_memory(g, 4) == pytest.approx(20 + 40)


def fake(memory_of):
    """An evaluate() over a table of memory by levers, and its calls."""
    calls = []

    def evaluate(lv):
        calls.append(lv)
        remat, k = lv
        act = memory_of[remat]
        return {"memory": 10 + act / k, "activations": act / k,
                "gradients": 0.0, "steps": k, "remat": remat}
    return evaluate, calls


def with_blends(evaluate, saved, saving):
    """`evaluate` that also costs blends: "save_matmuls"'s activations
    (`saved`) less `saving` times the share of blocks on "full"."""
    def blended(lv):
        remat, k = lv
        if isinstance(remat, str):
            return evaluate(lv)
        share = remat.count("full") / len(remat)
        return evaluate(("save_matmuls", k)) | {
            "memory": 10 + (saved - share * saving) / k, "remat": remat}
    return blended


def test_the_fewest_levers_that_fit_are_chosen():
    space = levers.LeverSpace(("none", "save_matmuls", "full"), None, 64)
    evaluate, calls = fake({"none": 400, "save_matmuls": 100, "full": 30})
    found = levers.choose(evaluate, lambda f: f["memory"] <= 50, space, 8,
                          50.0)
    # "none" needs 16 micro-batches, but 8 devices split at most 8 of 64.
    # "save_matmuls" fits with 4; "full" would need fewer: it fits at 1.
    assert found == [("save_matmuls", 4), ("full", 1)]
    assert ("none", 1) in calls and ("full", 1) in calls


def test_no_lever_is_tried_once_the_cheapest_fits():
    space = levers.LeverSpace(("none", "save_matmuls", "full"), None, 64)
    evaluate, calls = fake({"none": 10, "save_matmuls": 5, "full": 1})
    found = levers.choose(evaluate, lambda f: f["memory"] <= 50, space, 8,
                          50.0)
    assert found == [("none", 1)] and calls == [("none", 1)]


def test_full_remat_on_the_first_blocks_when_matmuls_alone_do_not_fit():
    # 10 blocks; at 4 micro-batches "save_matmuls" needs 110, "full" 60.
    space = levers.LeverSpace(("none", "save_matmuls", "full"), None, 64,
                              blocks=10)
    evaluate, calls = fake({"none": 1600, "save_matmuls": 400, "full": 200})

    blended = with_blends(evaluate, 400, 200)

    found = levers.choose(blended, lambda f: f["memory"] <= 95, space, 8,
                          95.0)
    # 5 a block between the two: 4 blocks take 110 to 90, 2% under 95.
    assert found == [("save_matmuls", 8), ("full", 4),
                     (("full",) * 4 + ("save_matmuls",) * 6, 4)]
    assert levers.blend_levers(blended, lambda f: f["memory"] <= 95,
                               space, 4, None) is None
    no_blocks = levers.LeverSpace(space.remats, None, 64)
    assert levers.blend_levers(blended, lambda f: f["memory"] <= 95,
                               no_blocks, 4, 95.0) is None


def test_blends_are_tried_between_the_counts_full_and_matmuls_fit_at():
    from kerasmesh.remat.choice import blend

    # "full" fits at 1 micro-batch, "save_matmuls" only at 8: a blend may
    # fit at 1, 2 or 4 (fewer collectives than 8, less recomputed than
    # "full"); the objective decides among them.
    space = levers.LeverSpace(("none", "save_matmuls", "full"), None, 64,
                              blocks=10)
    evaluate, calls = fake({"none": 1600, "save_matmuls": 300, "full": 40})

    blended = with_blends(evaluate, 300, 260)

    found = levers.choose(blended, lambda f: f["memory"] <= 60, space, 8,
                          60.0)
    # At 1 only "full" on every block fits; at 2, 13 a block from 160 to
    # 30 takes 8 blocks to 2% under 60; at 4, 6.5 a block from 85, 5.
    assert found == [("save_matmuls", 8), ("full", 1),
                     (blend(8, 10), 2), (blend(5, 10), 4)]
    assert levers.blend_steps([("full", 4)], [1, 2, 4, 8]) == [4, 8]
    assert levers.blend_steps([("save_matmuls", 2)], [1, 2, 4, 8]) == []


def test_a_blend_is_refitted_from_the_memory_known():
    from kerasmesh.remat.choice import blend

    parts = levers.refit_parts
    assert parts("save_matmuls", False, 10) == ("full", "save_matmuls", 0)
    assert parts("save_matmuls", True, 10) == ("save_matmuls", "none", 10)
    assert parts(blend(3, 10), True, 10) == ("full", "save_matmuls", 3)
    assert parts(blend(3, 10, "save_matmuls", "none"), False, 10) == \
        ("save_matmuls", "none", 3)
    assert parts("full", False, 10) is None
    assert parts("none", False, 10) is None
    assert parts(("none",) * 10, True, 10) is None
    assert parts(("save_matmuls",) + ("full",) * 9, True, 10) is None
    # 10 blocks: "save_matmuls" 110, "full" 60: 5 a block; aiming 2%
    # under 95 (93.1) takes 4 blocks.
    assert levers.refit({0: 110.0, 10: 60.0}, 95.0, 10) == 4
    # 4 gave 94 (memory is not linear in the blocks): on the line from 4
    # to 10, one more.
    assert levers.refit({0: 110.0, 4: 94.0, 10: 60.0}, 95.0, 10) == 5
    # 4 gave 80: between 0 and 4 (7.5 a block), 3 reach 87.5.
    assert levers.refit({0: 110.0, 4: 80.0, 10: 60.0}, 95.0, 10) == 3
    # With nothing known over the aim, along the two fewest under it: 4
    # at 80, 10 at 60 (3.33 a block) leave room for 3 fewer.
    assert levers.refit({4: 80.0, 10: 60.0}, 95.0, 10) == 1
    # A count already known, or no count between: nothing.
    assert levers.refit({0: 110.0, 4: 93.0, 10: 60.0}, 95.0, 10) is None
    assert levers.refit({0: 90.0, 10: 60.0}, 95.0, 10) is None
    assert levers.refit({0: 200.0, 10: 120.0}, 95.0, 10) is None
