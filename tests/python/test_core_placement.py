"""One variable's placement under one layout, from shapes alone."""

from kerasmesh.core import placement
from kerasmesh.plan.planner import first_error

SIZES = {"data": 2, "model": 4}


def test_a_mesh_axis_used_twice_is_an_error():
    placed = placement.place("dense/kernel", [16, 8], ["model", "model"],
                             "dense.*", SIZES, 8)
    error = first_error(placed["problems"])
    assert error is not None and error.kind == "layout_axes"
    assert "twice" in error.message and '"dense/kernel"' in error.message


def test_a_mesh_axis_twice_in_one_entry_is_an_error():
    placed = placement.place("dense/kernel", [16, 8],
                             [("model", "model"), None], "dense.*", SIZES, 8)
    assert [p["kind"] for p in placed["problems"]] == ["layout_axes"]
    assert "twice" in placed["problems"][0]["message"]


def test_no_layout_replicates_on_every_device():
    placed = placement.place("v", [3, 5], None, None, SIZES, 8)
    assert placed == {"axes": [None, None], "shard_shape": [3, 5],
                      "copies": 8, "problems": []}


def test_a_short_layout_is_padded_with_a_warning():
    placed = placement.place("v", [8, 4, 2], ["model"], "r", SIZES, 8)
    assert placed["axes"] == ["model", None, None]
    assert placed["shard_shape"] == [2, 4, 2]
    assert placed["copies"] == 2
    [p] = placed["problems"]
    assert (p["kind"], p["severity"]) == ("layout_rank", placement.WARNING)


def test_a_long_layout_is_an_error_and_leaves_the_shape_whole():
    placed = placement.place("v", [8], ["model", None], "r", SIZES, 8)
    assert placed["shard_shape"] == [8] and placed["copies"] == 8
    [p] = placed["problems"]
    assert (p["kind"], p["severity"]) == ("layout_rank", placement.ERROR)


def test_an_indivisible_dimension_carries_its_facts():
    placed = placement.place("v", [6, 4], ["model", None], "r", SIZES, 8)
    [p] = placed["problems"]
    assert p["kind"] == "layout_divisibility"
    assert p["facts"] == {"dimension": 1, "size": 6, "axis": "model",
                          "axis_size": 4}
    assert placed["shard_shape"] == [2, 4]


def test_unknown_axes_are_named_with_the_mesh_axes():
    placed = placement.place("v", [8], ["nope"], "r", SIZES, 8)
    [p] = placed["problems"]
    assert p["kind"] == "layout_axes"
    assert '"nope"' in p["bullets"][0][1] and '"data"' in p["bullets"][0][1]


def test_plural_and_listing_read_as_english():
    assert placement.plural(1, "entry") == "1 entry"
    assert placement.plural(2, "entry") == "2 entries"
    assert placement.plural(3, "variable") == "3 variables"
    assert placement.listing(["a"]) == '"a"'
    assert placement.listing(["a", "b", "c", "d", "e"]) == \
        '"a", "b", "c" and 2 more'
