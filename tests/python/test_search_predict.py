"""Predictions from the profile (`pipeline.py`, step 4): each figure on its
remat choice's line through 1 and 2 blocks (blends included), memory scaled by the
micro-batch with an accumulator and the verification's correction, time
as k walks of the compiled schedule, traffic."""

from types import SimpleNamespace

import pytest

from kerasmesh.cost.recompute import Levers
from kerasmesh.remat.choice import blend
from kerasmesh.search.arguments import timing_machine
from kerasmesh.search.predict import MEMORY, Predictor, Profile
from kerasmesh.search.tuning import RESHARD_PENALTY
from search_fakes import figures, settings

REMATS = ("none", "save_matmuls", "full")


def blocks_profile(micro_batch=8):
    """Per block: static 4, temp 3 ("none"), 2 ("save_matmuls"), 1
    ("full"), gradients 1; with no blocks: static 6, temp 1, inputs 1,
    gradients 1."""
    def f(static, temp, gradients):
        return figures(static=static, temp=temp, inputs=1,
                       gradients=gradients, micro_batch=micro_batch)
    return Profile(0, 0, {("none", 1): f(10, 4, 2), ("none", 2): f(14, 7, 3),
                          ("save_matmuls", 1): f(10, 3, 2),
                          ("save_matmuls", 2): f(14, 5, 3),
                          ("full", 1): f(10, 2, 2), ("full", 2): f(14, 3, 3)})


def predictor(**kw):
    return Predictor(settings(**kw), "float32")


def temp(pr, p, remat):
    return pr._full(p, remat, lambda f: f.temp)


def test_each_figure_lies_on_the_line_through_one_and_two_blocks():
    pr, p = predictor(blocks=10, remats=REMATS), blocks_profile()
    assert pr._full(p, "none", lambda f: f.static) == 6 + 10 * 4
    assert temp(pr, p, "none") == 1 + 10 * 3
    # Another remat: its own line.
    assert temp(pr, p, "save_matmuls") == 1 + 10 * 2
    assert temp(pr, p, "full") == 1 + 10 * 1


def test_what_a_remat_holds_once_is_counted_once():
    # "full" gathers one block's weights to recompute it (10 here): at 1
    # and 2 blocks alike, so it is the intercept of its line, not its
    # slope, and a blend holds it once.
    pr, p = predictor(blocks=10, remats=REMATS), blocks_profile()
    p.figures[("full", 1)] = figures(static=10, temp=12, inputs=1)
    p.figures[("full", 2)] = figures(static=14, temp=13, inputs=1)
    assert temp(pr, p, "full") == 11 + 10 * 1
    assert temp(pr, p, blend(3, 10)) == 11 + 3 * 1 + 7 * 2


def test_the_line_meets_the_compiles_it_was_drawn_through():
    p = blocks_profile()
    for depth, want in ((1, 4), (2, 7)):
        assert temp(predictor(blocks=depth, remats=REMATS), p, "none") == \
            want
    assert temp(predictor(blocks=2, remats=REMATS), p, "full") == 3


def test_a_blend_adds_each_choices_slope_per_block_it_covers():
    pr, p = predictor(blocks=10, remats=REMATS), blocks_profile()
    # 3 blocks "full" (1 a block), 7 "save_matmuls" (2 a block).
    assert temp(pr, p, blend(3, 10)) == 1 + 3 * 1 + 7 * 2
    assert temp(pr, p, blend(3, 10, "save_matmuls", "none")) == \
        1 + 3 * 2 + 7 * 3


def test_without_blocks_a_figure_is_the_compiles_own():
    p = Profile(0, 0, {("none", None): figures(temp=7),
                       ("full", None): figures(temp=2)})
    pr = predictor(remats=("none", "full"))
    assert pr.depths("full") == [None]
    assert temp(pr, p, "none") == 7 and temp(pr, p, "full") == 2


def test_every_remat_is_profiled_at_one_and_two_blocks_and_needs_the_first():
    pr = predictor(blocks=10, remats=REMATS)
    assert pr.depths("none") == [1, 2] and pr.depths("full") == [1, 2]
    p = blocks_profile()
    assert pr.has(p, "full") and pr.has(p, blend(3, 10))
    del p.figures[("none", 1)]
    assert not pr.has(p, "full") and not pr.has(p, "none")
    p = blocks_profile()
    del p.figures[("full", 2)]
    assert pr.has(p, "save_matmuls") and not pr.has(p, blend(3, 10))


def test_memory_scales_the_batchs_part_with_the_micro_batch():
    pr, p = predictor(blocks=10, remats=REMATS), blocks_profile()
    static, batch = 6 + 10 * 4, (1 + 10 * 3) + 1
    assert pr.scale(p, 4) == 0.25
    assert pr.memory(p, Levers("none", 1)) == static + batch
    # Above one micro-batch, an accumulator as large as the full model's
    # trainable weights (1 + 1 a block), not the 1-block compile's (2).
    accumulator = 1 + 10 * 1
    assert pr.memory(p, Levers("none", 2)) == \
        static + batch / 2 + accumulator
    assert pr.memory(p, Levers("none", 4)) == \
        static + batch / 4 + accumulator


def test_a_profile_compiled_with_micro_batches_holds_its_accumulator():
    # The batch of 8 compiled as 2 micro-batches of 4: the static part
    # already counts the accumulator.
    pr = predictor(blocks=10, remats=REMATS, steps=(2, 4))
    p = blocks_profile(micro_batch=4)
    static, batch = 6 + 10 * 4, (1 + 10 * 3) + 1
    assert pr.memory(p, Levers("none", 2)) == static + batch
    assert pr.memory(p, Levers("none", 4)) == static + batch / 2


def test_the_verifications_correction_adds_to_its_remat_and_blends():
    pr, p = predictor(blocks=10, remats=REMATS), blocks_profile()
    plain = {r: pr.memory(p, Levers(r, 1))
             for r in ("none", "full", blend(3, 10))}
    p.taught[MEMORY].correction["full"] = 10.0
    assert pr.memory(p, Levers("full", 1)) == plain["full"] + 10
    assert pr.memory(p, Levers("full", 2)) - 10 == pytest.approx(
        pr.memory(Profile(0, 0, p.figures), Levers("full", 2)))
    assert pr.memory(p, Levers("none", 1)) == plain["none"]
    # A blend: its choices' corrections by their share of the blocks,
    # until it has one of its own.
    assert pr.memory(p, Levers(blend(3, 10), 1)) == \
        pytest.approx(plain[blend(3, 10)] + 3)
    p.taught[MEMORY].correction[blend(3, 10)] = 1.0
    assert pr.memory(p, Levers(blend(3, 10), 1)) == plain[blend(3, 10)] + 1


def test_a_miss_at_a_smaller_micro_batch_teaches_a_share_every_profile_takes():
    pr, p = predictor(blocks=10, remats=REMATS), blocks_profile()
    other = blocks_profile()
    before = pr.memory(other, Levers("none", 2))
    # At half the micro-batch, 31 bytes of temporaries were predicted to
    # shrink to 15.5; XLA kept 7.75 more: half of them does not shrink.
    pr.learn(p, MEMORY, "none", 7.75, 0.5, temp(pr, p, "none"))
    assert p.taught[MEMORY].share == pytest.approx(0.5)
    assert pr.shares[MEMORY] == pytest.approx(0.5)
    assert p.taught[MEMORY].correction == {}
    # A profile without a share of its own takes the search's.
    assert pr.memory(other, Levers("none", 2)) == pytest.approx(before + 7.75)
    # At the micro-batch profiled, a miss is its remat's correction.
    pr.learn(p, MEMORY, "full", 4.0, 1.0, temp(pr, p, "full"))
    assert p.taught[MEMORY].correction == {"full": 4.0}


# A machine of 1e9 FLOP/s and 1e9 bytes/s on each axis, no latency: a
# step of 2e9 FLOPs and two all-reduces of 1e9 bytes between 2 devices
# (each device sends 2 (n - 1) / n = 1 share of the bytes), one of
# weights, one of activations: 2 s, 1 s and 1 s.
MACHINE = timing_machine(SimpleNamespace(shape=(2, 4)),
                         {"data": 1e9, "model": 1e9}, 1e9)
NODES = [0] * 8


def step(flops=2e9, collectives=True, **others):
    ops = [{"collective": "all-reduce", "bytes": 1e9, "groups": [[0, 1]],
            "axes": ["data"], "weights": True},
           {"collective": "all-reduce", "bytes": 1e9, "groups": [[0, 1]],
            "axes": ["data"]}] if collectives else []
    entries = [["c", "matmul", flops, 0.0]] + \
        ([["y", 0], ["y", 1]] if collectives else [])
    return figures(flops=flops, trace=entries, ops=ops, **others)


def timed(**kw):
    return predictor(objective="time", timing=MACHINE, **kw)


def test_time_is_k_walks_at_the_micro_batch_weights_moved_each_time():
    pr, p = timed(), Profile(0, 0, {("none", None): step()})
    assert pr.time(p, NODES, Levers("none", 1)) == pytest.approx(4.0)
    # Compute and activations halve, the weights' all-reduce does not.
    assert pr.time(p, NODES, Levers("none", 2)) == \
        pytest.approx(2 * (1.0 + 1.0 + 0.5))
    assert pr.time(p, NODES, Levers("none", 4)) == \
        pytest.approx(4 * (0.5 + 1.0 + 0.25))
    assert pr.value(p, NODES, Levers("none", 2)) == \
        pr.time(p, NODES, Levers("none", 2))


def test_time_of_blocks_is_on_the_line_of_the_walks():
    pr = timed(blocks=10, remats=("none", "full"))
    p = Profile(0, 0, {("none", 1): step(2e9, False),
                       ("none", 2): step(3e9, False),
                       ("full", 1): step(2.5e9, False),
                       ("full", 2): step(4e9, False)})
    assert pr.time(p, NODES, Levers("none", 1)) == pytest.approx(1 + 10)
    assert pr.time(p, NODES, Levers("full", 1)) == \
        pytest.approx(1 + 10 * 1.5)


def test_a_cpu_compile_hides_the_weights_collectives_under_compute():
    pr = timed()
    p = Profile(0, 0, {("none", None): step(by_class=True)})
    assert pr.time(p, NODES, Levers("none", 1)) == pytest.approx(3.0)


def test_a_layout_xla_reshards_is_slower_by_the_penalty():
    pr = timed()
    p = Profile(0, 0, {("none", None): step(reshardings=2)})
    assert pr.reshardings(p) == 2
    assert pr.time(p, NODES, Levers("none", 1)) == \
        pytest.approx(4.0 * (1 + RESHARD_PENALTY))


def test_traffic_moves_weights_each_micro_batch_and_scales_activations():
    pr = predictor()
    p = Profile(0, 0, {("none", None): figures(weights=100,
                                               activations=40)})
    assert pr.traffic(p, Levers("none", 1)) == 140
    assert pr.traffic(p, Levers("none", 2)) == 2 * (100 + 20)
    assert pr.value(p, NODES, Levers("none", 2)) == 240
    blocks = predictor(blocks=10)
    p = Profile(0, 0, {("none", 1): figures(weights=10, activations=4),
                       ("none", 2): figures(weights=20, activations=8)})
    assert blocks.traffic(p, Levers("none", 1)) == 100 + 40


def test_the_predicted_figures_are_the_configurations():
    pr, p = predictor(blocks=10, remats=REMATS), blocks_profile()
    lv = Levers("full", 2)
    f = pr.figures_at(p, lv)
    assert f["memory"] == pr.memory(p, lv)
    assert f["traffic"] == pr.traffic(p, lv)
