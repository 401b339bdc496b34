"""Placement: a layout, a shape and a mesh in; axes, splits, shard shape,
copies and bytes out."""

import math

import jax
import keras
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from kerasmesh.core.placement import (Placement, entry_axes, mesh_sizes,
                                      model_variables, sharding_placement,
                                      spec_entries, ways)

SIZES = {"data": 2, "model": 4}
MESH = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))


def test_a_layout_splits_its_dimensions_and_the_rest_is_copies():
    p = Placement.of((16, 8), ["model", None], SIZES, 4)
    assert p.axes == (("model",), ())
    assert p.splits == (4, 1)
    assert p.shard_shape == (4, 8)
    assert p.copies == 2 and p.shards == 4 and p.devices == 8
    assert p.bytes == 16 * 8 * 4 and p.device_bytes == 4 * 8 * 4
    assert p.entries == ["model", None] and p.labels == ["model", None]
    assert p.divisible


def test_no_layout_replicates_and_a_short_one_is_padded():
    whole = Placement.of((3, 5), None, SIZES)
    assert whole == Placement.replicated((3, 5), SIZES)
    assert whole.shard_shape == (3, 5) and whole.copies == 8
    padded = Placement.of((8, 4, 2), ["model"], SIZES)
    assert padded.entries == ["model", None, None]


def test_several_axes_on_one_dimension_split_over_their_product():
    p = Placement.of((16, 8), [("data", "model"), None], SIZES)
    assert p.splits == (8, 1) and p.copies == 1
    assert p.entries == [("data", "model"), None]
    assert p.labels == ["data+model", None]
    assert p.partition_spec() == PartitionSpec(("data", "model"), None)


def test_an_indivisible_dimension_rounds_the_shard_up_and_is_named():
    p = Placement.of((6, 4), ["model", None], SIZES)
    assert p.shard_shape == (2, 4)
    assert p.indivisible == (0,) and not p.divisible


def test_a_repeated_axis_is_named_and_counted_once():
    p = Placement.of((16, 8), ["model", "model"], SIZES)
    assert p.repeated == ("model",)
    assert p.copies == 2


def test_placements_are_validated_and_frozen():
    with pytest.raises(TypeError):
        Placement((2.0, 4), ((), ()), (("data", 2),))
    with pytest.raises(TypeError):
        Placement((True, 4), ((), ()), (("data", 2),))
    with pytest.raises(ValueError, match="rank"):
        Placement((2, 4), ((),), (("data", 2),))
    with pytest.raises(ValueError, match="mesh axis"):
        Placement.of((2, 4), ["nope", None], SIZES)
    with pytest.raises(ValueError, match="rank"):
        Placement.of((2,), ["data", None], SIZES)
    with pytest.raises(ValueError, match=">= 0"):
        Placement.of((-1,), None, SIZES)
    with pytest.raises(ValueError, match="itemsize"):
        Placement.of((2,), None, SIZES, 0)
    p = Placement.of((2,), None, SIZES)
    with pytest.raises(AttributeError):
        p.shape = (3,)


def test_entries_and_ways_read_any_form_of_a_layout_entry():
    assert entry_axes(None) == ()
    assert entry_axes("model") == ("model",)
    assert entry_axes(["data", "model"]) == ("data", "model")
    assert ways(("data", "model"), SIZES) == 8
    assert ways(None, SIZES) == 1


def test_mesh_sizes_read_keras_and_jax_meshes_alike():
    keras_mesh = keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())
    assert mesh_sizes(keras_mesh) == SIZES
    assert mesh_sizes(MESH) == SIZES


def test_a_placed_array_has_the_placement_of_its_sharding():
    sharding = NamedSharding(MESH, PartitionSpec(None, "model"))
    p = sharding_placement(sharding, (4, 8), 4)
    assert p.shard_shape == sharding.shard_shape((4, 8))
    assert (p.copies, p.bytes, p.device_bytes) == (2, 128, 32)
    assert spec_entries(sharding, 3) == [None, "model", None]
    one = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    alone = sharding_placement(one, (4, 8), 4)
    assert alone.mesh == () and alone.copies == 1
    assert alone.shard_shape == (4, 8) and alone.labels == [None, None]


def test_model_variables_lists_a_shared_layers_variables_once():
    dense = keras.layers.Dense(4)
    inputs = keras.Input((4,))
    model = keras.Model(inputs, dense(dense(inputs)))
    variables = model_variables(model)
    assert len(variables) == len({id(v) for v in variables}) == 2


# -- properties ----------------------------------------------------------

AXES = ("data", "model", "seq")


@st.composite
def placements(draw):
    """A mesh of up to three axes, a shape, and a layout that uses each
    mesh axis at most once, dividing its dimension or not."""
    n_axes = draw(st.integers(1, 3))
    sizes = {a: draw(st.integers(1, 4)) for a in AXES[:n_axes]}
    rank = draw(st.integers(0, 4))
    free = list(sizes)
    layout = []
    for _ in range(draw(st.integers(0, rank))):
        k = draw(st.integers(0, min(2, len(free))))
        names = [free.pop(draw(st.integers(0, len(free) - 1)))
                 for _ in range(k)]
        layout.append(None if not names else
                      names[0] if len(names) == 1 else tuple(names))
    split = [math.prod(sizes[a] for a in entry_axes(e)) for e in layout]
    split += [1] * (rank - len(layout))
    divisible = draw(st.booleans())
    shape = [draw(st.integers(1, 6)) * (k if divisible else 1)
             for k in split]
    itemsize = draw(st.sampled_from([1, 2, 4, 8]))
    return Placement.of(shape, layout, sizes, itemsize), divisible


@settings(max_examples=300, deadline=None)
@given(placements())
def test_splits_are_the_product_of_their_axes_and_cover_the_shape(case):
    p, _ = case
    for n, k, shard, names in zip(p.shape, p.splits, p.shard_shape, p.axes):
        assert k == math.prod(p.sizes[a] for a in names)
        assert shard * k >= n > (shard - 1) * k
    assert p.shards * p.copies == p.devices


@settings(max_examples=300, deadline=None)
@given(placements())
def test_bytes_on_the_devices_are_the_tensor_times_its_copies(case):
    p, divisible = case
    if divisible:
        assert all(n % k == 0 for n, k in zip(p.shape, p.splits))
        assert p.device_bytes * p.devices == p.bytes * p.copies
    else:
        assert p.device_bytes * p.devices >= p.bytes * p.copies


@settings(max_examples=60, deadline=None)
@given(placements())
def test_placement_agrees_with_jax_on_the_shard_shape(case):
    p, divisible = case
    if not divisible or p.devices > len(jax.devices()):
        return
    names = [a for a, _ in p.mesh]
    mesh = Mesh(np.array(jax.devices()[:p.devices]).reshape(
        [s for _, s in p.mesh]), names)
    sharding = p.named_sharding(mesh)
    assert sharding.shard_shape(p.shape) == p.shard_shape
    assert sharding_placement(sharding, p.shape, p.itemsize) == p
