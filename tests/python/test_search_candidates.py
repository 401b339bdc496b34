"""How the search costs candidates: quick compiles, extrapolation, and the
weight floor that spares compiles without ever hiding a fit."""

import time

import keras
import pytest

from kerasmesh.search import candidates
from kerasmesh.search.space import SearchSpace


def blocks(n):
    """n blocks of one 32 x 64 kernel each, then a 64 x 8 head."""
    x = inputs = keras.Input((32,))
    for i in range(n):
        x = keras.layers.Dense(32, use_bias=False, name=f"block_{i}")(x)
    outputs = keras.layers.Dense(8, use_bias=False, name="head")(x)
    return keras.Model(inputs, outputs)


def search(mesh, depth=None, budget=None):
    models = {None: blocks(3)} if depth is None else \
        {1: blocks(1), 2: blocks(2)}
    space = SearchSpace(list(models.values())[-1], mesh)
    step = {"batch_size": 8, "optimizer": "sgd", "loss": "mse",
            "input_shapes": None, "batch_dim": "data"}
    return candidates.Search(models, depth, space, step, budget, "traffic",
                             None, None, time.monotonic() + 120, None)


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


def test_the_floor_is_under_xlas_total_for_every_compile(mesh):
    s = search(mesh)
    for c in [tuple([0] * len(s.space.classes)),
              tuple([1] * len(s.space.classes))]:
        s.evaluate(c)
        assert s.seen[c]["memory"] >= s.weight_bytes(c)
    assert s.bound_holds


def test_hopeless_layouts_are_spared_only_once_a_fit_is_known(mesh):
    s = search(mesh, budget=1.0)
    unsplit = tuple([0] * len(s.space.classes))
    assert not s.hopeless(unsplit)  # nothing fits yet: compile it
    s.fits = True
    assert s.hopeless(unsplit) and s.pruned == {unsplit}
    s.bound_holds = False  # a compile came in under the floor
    assert not s.hopeless(unsplit)
    roomy = search(mesh, budget=1e12)
    roomy.fits = True
    assert not roomy.hopeless(unsplit)


def test_a_compile_under_the_floor_turns_the_floor_off(mesh, monkeypatch):
    s = search(mesh)
    monkeypatch.setattr(s, "weight_bytes", lambda c, d=None: 1e15)
    s.evaluate(tuple([0] * len(s.space.classes)))
    assert not s.bound_holds


def test_extrapolation_is_linear_in_every_figure():
    f1 = {"memory": 10.0, "by_axes": {"a": 1.0}, "flops": 5.0}
    f2 = {"memory": 14.0, "by_axes": {"a": 3.0, "b": 2.0}, "flops": 7.0}
    f = candidates._extrapolate(f1, f2, 5)
    assert f == {"memory": 26.0, "traffic": 17.0,
                 "by_axes": {"a": 9.0, "b": 8.0}, "flops": 13.0}


def test_step_time_takes_each_collective_at_its_slowest_axis():
    f = {"by_axes": {"a": 100.0, "a+b": 100.0}, "flops": 1e3}
    assert candidates.step_time(f, {"a": 100.0, "b": 10.0}, 1e3) == \
        pytest.approx(1 + 10 + 1)
