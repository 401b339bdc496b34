"""The walk over one mesh's layouts at fixed levers, and the exhaustive
enumeration of a small space."""

import time

import pytest

from kerasmesh.search import walk
from kerasmesh.search.candidates import Context, Search
from kerasmesh.search.levers import LeverSpace
from kerasmesh.search.meshes import MeshOption
from kerasmesh.search.space import SearchSpace
from test_search_entry import biases_pinned, mlp

BASE = ("none", 1)


def search(mesh, budget=None):
    model = mlp()
    space = SearchSpace(model, mesh, biases_pinned(mesh))
    step = {"batch_size": 16, "optimizer": "sgd", "loss": "mse",
            "input_shapes": None, "batch_dim": "data"}
    ctx = Context({None: model}, None, step, budget, "traffic",
                  time.monotonic() + 120, LeverSpace(("none",), None, 16))
    return Search(space, ctx, MeshOption((2, 4), mesh))


def best(s):
    return min(s.ctx.score(f) for f in s.seen.values() if f is not None)


@pytest.fixture(scope="module")
def everything(mesh):
    s = search(mesh)
    walk.exhaust(s, BASE)
    return s


def test_exhaust_costs_every_layout_of_the_space(everything):
    assert everything.method == "exhaustive"
    assert len(everything.seen) == everything.space.size() == 25
    assert all(lv == BASE for _, lv in everything.seen)


def test_the_walk_reaches_the_exhaustive_optimum_with_fewer_compiles(
        mesh, everything):
    s = search(mesh)
    walk.walk(s, [tuple([0] * len(s.space.classes))], BASE)
    assert len(s.seen) < 25
    assert best(s)[:2] == best(everything)[:2]


def test_a_walk_out_of_time_stops(mesh):
    s = search(mesh)
    s.ctx.deadline = time.monotonic() - 1
    walk.walk(s, [tuple([0] * len(s.space.classes))], BASE)
    assert s.ctx.out_of_time and not s.log
