"""How the search costs candidates: quick compiles with levers, and the
weight and optimizer floor that spares compiles without hiding a fit."""

import time

import keras
import pytest

from kerasmesh.search import candidates
from kerasmesh.search.levers import LeverSpace
from kerasmesh.search.meshes import MeshOption
from kerasmesh.search.space import SearchSpace

BASE = ("none", 1)


def blocks(n):
    """n blocks of one 32 x 32 kernel each, then a 32 x 8 head."""
    x = inputs = keras.Input((32,))
    for i in range(n):
        x = keras.layers.Dense(32, use_bias=False, name=f"block_{i}")(x)
    outputs = keras.layers.Dense(8, use_bias=False, name="head")(x)
    return keras.Model(inputs, outputs)


def search(mesh, depth=None, budget=None, slot_ratio=0.0):
    models = {None: blocks(3)} if depth is None else \
        {1: blocks(1), 2: blocks(2)}
    space = SearchSpace(list(models.values())[-1], mesh)
    step = {"batch_size": 8, "optimizer": "sgd", "loss": "mse",
            "input_shapes": None, "batch_dim": "data"}
    ctx = candidates.Context(models, depth, step, budget, "traffic",
                             time.monotonic() + 120,
                             LeverSpace(("none",), None, 8),
                             slot_ratio=slot_ratio)
    return candidates.Search(space, ctx, MeshOption((2, 4), mesh))


def test_class_counts_grow_a_block_a_depth(mesh):
    s = search(mesh, depth=10)
    counts = {c.template: n for c, n in zip(s.space.classes, s.counts)}
    assert counts == {"block_#/kernel": (1, 2), "head/kernel": (1, 1)}


def test_weight_bytes_are_the_full_models_shards(mesh):
    s = search(mesh, depth=10)
    unsplit = tuple([0] * len(s.space.classes))
    assert s.weight_bytes(unsplit) == 4 * (10 * 32 * 32 + 32 * 8)
    assert s.weight_bytes(unsplit, depth=2) == 4 * (2 * 32 * 32 + 32 * 8)
    whole = search(mesh)
    assert whole.weight_bytes(unsplit) == 4 * (3 * 32 * 32 + 32 * 8)


def test_the_floor_counts_the_optimizer_slots(mesh):
    s = search(mesh, slot_ratio=2.0)
    unsplit = tuple([0] * len(s.space.classes))
    assert s.floor(unsplit) == pytest.approx(
        s.weight_bytes(unsplit) * (1 + candidates.SLOT_SHARE * 2))


def test_the_floor_is_under_xlas_total_for_every_compile(mesh):
    s = search(mesh)
    for c in [tuple([0] * len(s.space.classes)),
              tuple([1] * len(s.space.classes))]:
        s.evaluate(c, BASE)
        assert s.seen[(c, BASE)]["memory"] >= s.weight_bytes(c)
    assert s.ctx.bound_holds


def test_layouts_whose_weights_break_the_budget_are_spared(mesh):
    s = search(mesh, budget=1.0)
    unsplit = tuple([0] * len(s.space.classes))
    assert s.hopeless(unsplit) and s.pruned == {unsplit}
    s.ctx.bound_holds = False  # a compile came in under the floor
    assert not s.hopeless(unsplit)
    assert not search(mesh, budget=1e12).hopeless(unsplit)


def test_a_compile_under_the_floor_turns_the_floor_off(mesh, monkeypatch):
    s = search(mesh)
    monkeypatch.setattr(s, "weight_bytes", lambda c, d=None: 1e15)
    s.evaluate(tuple([0] * len(s.space.classes)), BASE)
    assert not s.ctx.bound_holds


def test_levers_are_part_of_a_candidate(mesh):
    s = search(mesh)
    s.ctx.levers = LeverSpace(("none",), None, 8)
    unsplit = tuple([0] * len(s.space.classes))
    one, two = s.evaluate(unsplit, BASE), s.evaluate(unsplit, ("none", 2))
    assert (one["steps"], two["steps"]) == (1, 2)
    # Accumulators: one per trainable weight.
    assert two["memory"] > one["memory"] and one["gradients"] > 0
    assert len(s.log) == 2 and s.evaluate(unsplit, BASE) is one


def test_scores_rank_fits_by_value_then_fewer_levers():
    ctx = candidates.Context({}, None, {}, 100.0, "traffic", 0.0,
                             LeverSpace(("none", "full"), None, 8))

    def f(memory, traffic, remat="none", steps=1):
        return {"memory": memory, "traffic": traffic, "remat": remat,
                "steps": steps, "reshardings": 0}
    assert ctx.score(f(50, 10)) < ctx.score(f(50, 10, "full"))
    assert ctx.score(f(50, 10)) < ctx.score(f(90, 5, steps=4))
    assert ctx.score(f(99, 1000)) < ctx.score(f(101, 1))
    assert ctx.value(dict(f(50, 10), reshardings=1)) > ctx.value(f(50, 10))


def test_candidates_leave_time_for_the_full_depth_compile(mesh):
    s = search(mesh, depth=40)
    ctx = s.ctx
    assert ctx.reserve() == 0.0  # nothing compiled yet
    ctx.compile_seconds = {1: 2.0, 2: 3.0}
    assert ctx.reserve() == pytest.approx(candidates.VERIFY_FACTOR * 41.0)
    ctx.end = time.monotonic() + 0.9 * ctx.reserve()
    assert ctx.left() > 0  # nothing fits yet: keep searching
    ctx.best = 1.0
    assert ctx.left() < 0  # what is left can't hold the full compile
    ctx.compile_seconds = {1: 0.1, 2: 0.1}
    assert 0 < ctx.left() <= 0.9 * candidates.VERIFY_FACTOR * 41.0
    assert search(mesh).ctx.reserve() == 0.0
