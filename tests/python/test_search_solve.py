"""The solve (`pipeline.py`, step 4): every configuration the profile
predicts, in the search's order, with the blend of the fewest heavier
blocks that fits."""

import pytest

from kerasmesh.cost.recompute import Levers
from kerasmesh.remat.choice import blend
from kerasmesh.search.predict import Predictor, Profile
from kerasmesh.search.solve import Candidate, Prediction, _blends, candidates
from search_fakes import figures, mesh_layouts, settings, space

REMATS = ("none", "save_matmuls", "full")


def prediction(value, memory, fits, remat="none", k=1, layout=0):
    return Prediction(Candidate(0, layout, None, Levers(remat, k)), memory,
                      value, fits)


def test_fits_come_first_by_value_then_fewer_levers_then_memory():
    slow = prediction(2.0, 50.0, True)
    full = prediction(1.0, 90.0, True, remat="full")
    two = prediction(1.0, 60.0, True, k=2)
    two_less = prediction(1.0, 40.0, True, k=2, layout=1)
    breaks = prediction(0.0, 200.0, False)
    breaks_less = prediction(5.0, 150.0, False)
    ranked = sorted([slow, full, breaks, two, breaks_less, two_less],
                    key=lambda p: p.key)
    # Value first; on a tie "none" x 2 (rank (0, 2)) before "full" x 1
    # (rank (2, 1)), and less memory first; then what breaks the budget,
    # least memory first.
    assert ranked == [two_less, two, full, slow, breaks_less, breaks]


def test_the_order_breaks_ties_by_place_so_it_is_total():
    a = prediction(1.0, 50.0, True, layout=1)
    b = prediction(1.0, 50.0, True, layout=0)
    assert sorted([a, b], key=lambda p: p.key) == [b, a]


def per_block(temp_light, temp_heavy):
    """A profile of 10 blocks: static 1 + 1 a block, temp 0 + `temp_*` a
    block for "save_matmuls" and "full" (and "none": 8 a block)."""
    return Profile(0, 0, {
        ("none", 1): figures(static=2, temp=8),
        ("none", 2): figures(static=3, temp=16),
        ("save_matmuls", 1): figures(static=2, temp=temp_light),
        ("save_matmuls", 2): figures(static=3, temp=2 * temp_light),
        ("full", 1): figures(static=2, temp=temp_heavy),
        ("full", 2): figures(static=3, temp=2 * temp_heavy)})


def blends_under(budget, p=None):
    s = settings(blocks=10, budget=budget, remats=REMATS)
    p = p or per_block(4.0, 1.0)
    return s, Predictor(s, "float32"), p


def test_a_blend_has_the_fewest_heavier_blocks_that_fit():
    # "save_matmuls": 11 + 40 = 51, "full": 11 + 10 = 21: 3 a block.
    s, pr, p = blends_under(35.0)
    found = _blends(s, pr, p, 1)
    assert found == [Levers(blend(6, 10), 1)]
    assert pr.memory(p, found[0]) <= 35.0
    assert pr.memory(p, Levers(blend(5, 10), 1)) > 35.0


def test_no_blend_where_the_lighter_fits_or_the_heavier_does_not():
    # "none" (91) breaks 60 and "save_matmuls" (51) fits: 4 a block
    # between them, 8 blocks of "save_matmuls" reach 59.
    s, pr, p = blends_under(60.0)
    assert _blends(s, pr, p, 1) == \
        [Levers(blend(8, 10, "save_matmuls", "none"), 1)]
    s, pr, p = blends_under(100.0)
    assert _blends(s, pr, p, 1) == []
    s, pr, p = blends_under(20.0)
    assert _blends(s, pr, p, 1) == []
    for s in (settings(blocks=10, remats=REMATS),
              settings(blocks=None, budget=35.0, remats=REMATS)):
        assert _blends(s, Predictor(s, "float32"), per_block(4, 1), 1) == []


def test_a_blend_needs_both_choices_profiled():
    s, pr, p = blends_under(35.0)
    del p.figures[("full", 2)]
    assert _blends(s, pr, p, 1) == []


def test_every_configuration_of_a_profile_with_the_first_remat():
    s = settings(remats=("none", "full"), batch_size=8, budget=100.0)
    pr = Predictor(s, "float32")
    profiles = {
        (0, 0): Profile(0, 0, {("none", None): figures(temp=80, weights=1),
                               ("full", None): figures(temp=20,
                                                       weights=2)}),
        # Only another remat, or refused by XLA: nothing to predict.
        (0, 1): Profile(0, 1, {("full", None): figures(temp=1)}),
        (0, 2): Profile(0, 2, {("none", None): figures()}, failed="no"),
    }
    nodes = {"model": [0] * 8, "data": [0, 1] * 4}
    ranked = candidates(s, space(mesh_layouts(3, nodes=nodes)), pr,
                        profiles)
    assert {p.candidate.layout for p in ranked} == {0}
    # Micro-batches of 8 the data axis (2) splits: 1, 2 and 4; two
    # device orders; two remat choices.
    assert len(ranked) == 3 * 2 * 2
    assert {p.candidate.levers.accumulation_steps for p in ranked} == \
        {1, 2, 4}
    assert {p.candidate.order for p in ranked} == {"model", "data"}
    assert ranked == sorted(ranked, key=lambda p: p.key)
    best = ranked[0]
    assert best.fits and best.candidate.levers == Levers("none", 1)
    assert best.memory == pytest.approx(80.0) and best.value == 1.0


def test_blends_are_among_the_candidates_when_a_budget_calls_for_them():
    s, pr, p = blends_under(35.0)
    ranked = candidates(s, space(mesh_layouts(1)), pr, {(0, 0): p})
    remats = {p.candidate.levers.remat for p in ranked
              if p.candidate.levers.accumulation_steps == 1}
    assert blend(6, 10) in remats
    assert remats >= set(REMATS)
