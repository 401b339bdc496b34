"""The rounds of a search: structured starts on every mesh, how
promising each is, and levers only where nothing fits."""

import time

import keras

from kerasmesh.search import configs
from kerasmesh.search.candidates import Context, Search
from kerasmesh.search.levers import LeverSpace
from kerasmesh.search.meshes import MeshOption
from kerasmesh.search.space import SearchSpace


def transformerish():
    """A residual width of 64 (the size most kernels share), an MLP of
    256 and a projection."""
    inputs = keras.Input((64,))
    x = keras.layers.Dense(64, use_bias=False, name="proj")(inputs)
    hidden = keras.layers.Dense(256, use_bias=False, name="up")(x)
    outputs = keras.layers.Dense(64, use_bias=False, name="down")(hidden)
    return keras.Model(inputs, outputs, name="t")


def search(mesh, budget=None, remats=("none",), steps=None):
    model = transformerish()
    space = SearchSpace(model, mesh)
    step = {"batch_size": 16, "optimizer": "adam", "loss": "mse",
            "input_shapes": None, "batch_dim": "data"}
    ctx = Context({None: model}, None, step, budget, "traffic",
                  time.monotonic() + 120, LeverSpace(remats, steps, 16))
    return Search(space, ctx, MeshOption((2, 4), mesh))


def placements(s, choice):
    return {c.template: tuple(a) for c, a in
            zip(s.space.classes, s.space.axes(choice))
            if c.template != "proj/kernel"}


def test_structured_starts_are_tensor_parallel_fully_sharded_and_both(mesh):
    s = search(mesh)
    starts = [placements(s, c) for c in
              configs.structured_starts(s, None, False)]
    assert {"up/kernel": (None, "model"),
            "down/kernel": ("model", None)} in starts
    assert {"up/kernel": (None, "data"),
            "down/kernel": ("data", None)} in starts
    assert {"up/kernel": ("data", "model"),
            "down/kernel": ("model", "data")} in starts
    unsplit = {"up/kernel": (None, None), "down/kernel": (None, None)}
    assert unsplit not in starts
    assert unsplit in [placements(s, c) for c in
                       configs.structured_starts(s, None, True)]


def figs(memory, activations=0.0, traffic=1.0):
    return {"memory": memory, "activations": activations, "gradients": 0.0,
            "traffic": traffic, "steps": 1, "remat": "none",
            "reshardings": 0}


def test_promise_puts_what_levers_can_fit_before_what_they_can_not(mesh):
    s = search(mesh, budget=100.0, remats=("none", "full"))
    fits, fixable, hopeless = figs(50), figs(400, 350), figs(300, 10)
    keys = [configs.promise(s.ctx, s, f) for f in (fits, fixable, hopeless)]
    assert keys == sorted(keys)
    assert [k[0] for k in keys] == [0, 1, 2]
    s.ctx.levers = LeverSpace(("none",), (1,), 16)  # no lever to pull
    assert configs.promise(s.ctx, s, fixable)[0] == 2


def test_a_start_that_fits_gets_no_levers(mesh):
    s = search(mesh, remats=("none", "full"))
    dp = tuple([0] * len(s.space.classes))
    key = s.ctx.score(s.evaluate(dp, ("none", 1)))
    assert key[0] == 0
    chosen = configs._levers_round(s.ctx, [s], [(key, 0, dp)])
    assert chosen == [(key, 0, dp, ("none", 1))]
    assert len(s.log) == 1  # nothing more compiled
