"""Batch sizes against the batch axis: the problems a plan reports and the
argument check."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kerasmesh.plan import batches
from kerasmesh.core.errors import KerasmeshError

SIZES = {"data": 2, "model": 4}


def test_a_batch_that_splits_evenly_has_no_problem():
    assert batches.batch_problems("data", 16, SIZES) == []
    assert batches.batch_problems("data", None, SIZES) == []
    assert batches.batch_problems("data", 16, SIZES, samples=64) == []


def test_an_unknown_batch_axis_lists_the_mesh_axes():
    [p] = batches.batch_problems("batch", 16, SIZES)
    assert p["kind"] == "layout_axes"
    assert '"data" and "model"' in p["bullets"][0][1]


def test_an_uneven_batch_suggests_the_nearest_multiples():
    [p] = batches.batch_problems("model", 10, SIZES)
    assert p["kind"] == "batch_size"
    assert "such as 8 or 12" in p["bullets"][-1][1]


def test_an_uneven_last_batch_is_a_problem_of_its_own():
    [p] = batches.batch_problems("data", 16, SIZES, samples=65)
    assert p["kind"] == "batch_size"
    assert "last batch of 1" in p["bullets"][0][1]


@given(st.integers(1, 64), st.sampled_from([1, 2, 4, 8]))
def test_problems_exactly_when_the_axis_does_not_divide(size, ways):
    found = batches.batch_problems("data", size, {"data": ways})
    assert bool(found) == (size % ways != 0)


def test_check_batch_size_gives_ints_and_keeps_none():
    assert batches.check_batch_size(None) is None
    assert batches.check_batch_size(16.0) == 16
    assert type(batches.check_batch_size(16.0)) is int


@pytest.mark.parametrize("bad", [0, -1, 2.5, "16", True, [16]])
def test_check_batch_size_refuses_what_is_not_a_positive_whole_number(bad):
    with pytest.raises(KerasmeshError) as info:
        batches.check_batch_size(bad)
    assert info.value.kind == "argument"
    assert info.value.bullets[0][1] == "Received {value}."


def test_check_batch_size_stops_at_r_integers():
    with pytest.raises(KerasmeshError) as info:
        batches.check_batch_size(batches.MAX_WHOLE + 1)
    assert "2,147,483,648" in info.value.bullets[0][1]
