"""What goes wrong placing a tensor under a layout: each problem's kind,
severity and facts, as the planner reports them."""

from kerasmesh.core.kinds import ERROR, WARNING
from kerasmesh.core.placer import check_placement
from kerasmesh.plan.planner import first_error

SIZES = {"data": 2, "model": 4}


def test_a_mesh_axis_used_twice_is_an_error():
    placed = check_placement("dense/kernel", [16, 8], ["model", "model"],
                             "dense.*", SIZES).as_dict()
    error = first_error(placed["problems"])
    assert error is not None and error.kind == "layout_axes"
    assert "twice" in error.message and '"dense/kernel"' in error.message


def test_a_mesh_axis_twice_in_one_entry_is_an_error():
    placed = check_placement("dense/kernel", [16, 8],
                             [("model", "model"), None], "dense.*",
                             SIZES).as_dict()
    assert [p["kind"] for p in placed["problems"]] == ["layout_axes"]
    assert "twice" in placed["problems"][0]["message"]


def test_no_layout_replicates_on_every_device():
    placed = check_placement("v", [3, 5], None, None, SIZES).as_dict()
    assert placed == {"axes": [None, None], "shard_shape": [3, 5],
                      "copies": 8, "problems": []}


def test_a_short_layout_is_padded_with_a_warning():
    placed = check_placement("v", [8, 4, 2], ["model"], "r",
                             SIZES).as_dict()
    assert placed["axes"] == ["model", None, None]
    assert placed["shard_shape"] == [2, 4, 2]
    assert placed["copies"] == 2
    [p] = placed["problems"]
    assert (p["kind"], p["severity"]) == ("layout_rank", WARNING)


def test_a_long_layout_is_an_error_and_leaves_the_shape_whole():
    placed = check_placement("v", [8], ["model", None], "r",
                             SIZES).as_dict()
    assert placed["shard_shape"] == [8] and placed["copies"] == 8
    [p] = placed["problems"]
    assert (p["kind"], p["severity"]) == ("layout_rank", ERROR)


def test_an_indivisible_dimension_carries_its_facts():
    placed = check_placement("v", [6, 4], ["model", None], "r",
                             SIZES).as_dict()
    [p] = placed["problems"]
    assert p["kind"] == "layout_divisibility"
    assert p["facts"] == {"dimension": 1, "size": 6, "axis": "model",
                          "axis_size": 4}
    assert placed["shard_shape"] == [2, 4]


def test_unknown_axes_are_named_with_the_mesh_axes():
    placed = check_placement("v", [8], ["nope"], "r", SIZES).as_dict()
    [p] = placed["problems"]
    assert p["kind"] == "layout_axes"
    assert '"nope"' in p["bullets"][0][1] and '"data"' in p["bullets"][0][1]
