"""The layouts profiled on a mesh (every one of a small space, else the
families people train with, each once) and the floor under a layout's
memory."""

import itertools

import keras
import pytest

from kerasmesh.search import families
from kerasmesh.search.families import Floor, layouts
from kerasmesh.search.space import SearchSpace
from kerasmesh.search.tuning import SLOT_SHARE
from remat_models import residual_blocks


def device_mesh(shape):
    return keras.distribution.DeviceMesh(
        shape, ("data", "model"), keras.distribution.list_devices())


def narrow():
    """One Dense 32 -> 6: 5 kernel placements (6: only "data" divides it)
    times 2 bias placements on a 2 x 4 mesh."""
    inputs = keras.Input((32,))
    outputs = keras.layers.Dense(6, name="dense")(inputs)
    return keras.Model(inputs, outputs, name="narrow")


@pytest.fixture(scope="module")
def blocks():
    """Two residual blocks of 32 -> 128 -> 32, then a head of 4."""
    return residual_blocks(n_blocks=2, width=32, hidden=128)


def axes(space, choice):
    """{class template: its placement} under `choice`."""
    return dict(zip((c.template for c in space.classes), space.axes(choice)))


def test_a_small_space_is_profiled_whole(monkeypatch):
    space = SearchSpace(narrow(), device_mesh((2, 4)))
    assert space.size() == 10
    monkeypatch.setattr(families, "EXHAUSTIVE", 10)
    found = layouts(space, "data")
    assert [label for label, _ in found][:2] == ["data parallel",
                                                 "layout 2"]
    assert found[0][1] == (0, 0)
    choices = [c for _, c in found]
    assert sorted(choices) == sorted(itertools.product(range(5), range(2)))
    monkeypatch.setattr(families, "EXHAUSTIVE", 9)
    assert len(layouts(space, "data")) == 4


def test_a_space_past_the_limit_is_profiled_by_families(
        blocks, monkeypatch):
    space = SearchSpace(blocks, device_mesh((2, 4)))
    monkeypatch.setattr(families, "EXHAUSTIVE", space.size() - 1)
    found = dict(layouts(space, "data"))
    assert list(found) == ["data parallel", "fully sharded",
                           "tensor parallel",
                           "tensor parallel, fully sharded"]
    dp = axes(space, found["data parallel"])
    assert all(a is None for placed in dp.values() for a in placed)
    # Fully sharded: each weight's largest dimension the data axis splits.
    fs = axes(space, found["fully sharded"])
    assert fs["block_#/up_#/kernel"] == (None, "data")
    assert fs["block_#/down_#/kernel"] == ("data", None)
    assert fs["head/kernel"] == ("data", None)
    # Megatron: the hidden width on the model axis, the residual width
    # (the size most classes share) whole.
    tp = axes(space, found["tensor parallel"])
    assert tp["block_#/up_#/kernel"] == (None, "model")
    assert tp["block_#/up_#/bias"] == ("model",)
    assert tp["block_#/down_#/kernel"] == ("model", None)
    assert tp["block_#/down_#/bias"] == (None,)
    both = axes(space, found["tensor parallel, fully sharded"])
    assert both["block_#/up_#/kernel"] == ("data", "model")
    assert both["block_#/down_#/kernel"] == ("model", "data")


def test_the_start_comes_last_and_each_layout_once(blocks, monkeypatch):
    space = SearchSpace(blocks, device_mesh((2, 4)))
    monkeypatch.setattr(families, "EXHAUSTIVE", 0)
    found = layouts(space, "data")
    start = tuple(1 for _ in space.classes)
    assert layouts(space, "data", start)[-1] == ("start", start)
    # The start equal to a family is that family, once.
    assert layouts(space, "data", found[2][1]) == found
    assert len({c for _, c in found}) == len(found)


def test_a_start_a_small_space_does_not_enumerate_is_profiled_too(
        monkeypatch):
    # Pinned rules leave a class one option: the enumeration keeps it at
    # data parallel's, and a start placing it otherwise comes last.
    space = SearchSpace(narrow(), device_mesh((2, 4)))
    monkeypatch.setattr(families, "EXHAUSTIVE", 10)
    monkeypatch.setattr(SearchSpace, "free", property(lambda self: [0]))
    found = layouts(space, "data", (1, 1))
    assert found[-1] == ("start", (1, 1))
    assert [c for _, c in found[:-1]] == [(k, 0) for k in range(5)]


def test_a_mesh_with_one_axis_of_one_device_drops_that_axis_families(
        blocks, monkeypatch):
    monkeypatch.setattr(families, "EXHAUSTIVE", 0)
    model_only = [label for label, _ in
                  layouts(SearchSpace(blocks, device_mesh((1, 8))), "data")]
    assert model_only == ["data parallel", "tensor parallel"]
    data_only = [label for label, _ in
                 layouts(SearchSpace(blocks, device_mesh((8, 1))), "data")]
    assert data_only == ["data parallel", "fully sharded"]


def weights(n_blocks, width=32, hidden=128, head=4):
    """Float32 bytes of `residual_blocks()`'s weights."""
    block = width * hidden + hidden + hidden * width + width
    return 4 * (n_blocks * block + width * head + head)


def test_the_floor_is_the_weights_and_a_share_of_the_slots(blocks):
    space = SearchSpace(blocks, device_mesh((2, 4)))
    dp = tuple(0 for _ in space.classes)
    assert Floor(space, None, None, 0.0)(dp) == weights(2)
    assert Floor(space, None, None, 2.0)(dp) == \
        pytest.approx(weights(2) * (1 + SLOT_SHARE * 2.0))
    fs = families.fully_sharded(space, dp, "data")
    assert Floor(space, None, None, 0.0)(fs) < weights(2) / 1.9


def test_the_floor_at_full_depth_grows_by_a_block_per_block(blocks):
    space = SearchSpace(blocks, device_mesh((2, 4)))
    dp = tuple(0 for _ in space.classes)
    floor = Floor(space, residual_blocks(n_blocks=1, width=32, hidden=128),
                  10, 0.0)
    assert floor(dp) == weights(10)
