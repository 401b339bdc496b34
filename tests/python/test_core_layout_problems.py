"""One variable's placement under one layout, from shapes alone, and
what goes wrong."""

from kerasmesh.core import layout_problems as placement
from kerasmesh.plan.planner import first_error

SIZES = {"data": 2, "model": 4}


def test_a_mesh_axis_used_twice_is_an_error():
    placed = placement.place("dense/kernel", [16, 8], ["model", "model"],
                             "dense.*", SIZES)
    error = first_error(placed["problems"])
    assert error is not None and error.kind == "layout_axes"
    assert "twice" in error.message and '"dense/kernel"' in error.message


def test_a_mesh_axis_twice_in_one_entry_is_an_error():
    placed = placement.place("dense/kernel", [16, 8],
                             [("model", "model"), None], "dense.*", SIZES)
    assert [p["kind"] for p in placed["problems"]] == ["layout_axes"]
    assert "twice" in placed["problems"][0]["message"]


def test_no_layout_replicates_on_every_device():
    placed = placement.place("v", [3, 5], None, None, SIZES)
    assert placed == {"axes": [None, None], "shard_shape": [3, 5],
                      "copies": 8, "problems": []}


def test_a_short_layout_is_padded_with_a_warning():
    placed = placement.place("v", [8, 4, 2], ["model"], "r", SIZES)
    assert placed["axes"] == ["model", None, None]
    assert placed["shard_shape"] == [2, 4, 2]
    assert placed["copies"] == 2
    [p] = placed["problems"]
    assert (p["kind"], p["severity"]) == ("layout_rank", placement.WARNING)


def test_a_long_layout_is_an_error_and_leaves_the_shape_whole():
    placed = placement.place("v", [8], ["model", None], "r", SIZES)
    assert placed["shard_shape"] == [8] and placed["copies"] == 8
    [p] = placed["problems"]
    assert (p["kind"], p["severity"]) == ("layout_rank", placement.ERROR)


def test_an_indivisible_dimension_carries_its_facts():
    placed = placement.place("v", [6, 4], ["model", None], "r", SIZES)
    [p] = placed["problems"]
    assert p["kind"] == "layout_divisibility"
    assert p["facts"] == {"dimension": 1, "size": 6, "axis": "model",
                          "axis_size": 4}
    assert placed["shard_shape"] == [2, 4]


def test_unknown_axes_are_named_with_the_mesh_axes():
    placed = placement.place("v", [8], ["nope"], "r", SIZES)
    [p] = placed["problems"]
    assert p["kind"] == "layout_axes"
    assert '"nope"' in p["bullets"][0][1] and '"data"' in p["bullets"][0][1]


def test_locate_carries_the_placement_and_its_bytes():
    placed = placement.locate("v", [8, 4], ["model", None], "r", SIZES, 2)
    assert placed.rule == "r" and placed.problems == []
    assert placed.placement.shard_shape == (2, 4)
    assert placed.placement.device_bytes == 2 * 4 * 2
    assert placed.as_dict()["copies"] == 2


def test_placer_looks_rules_up_as_keras_does():
    import keras

    mesh = keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*kernel"] = (None, "model")
    lm["d/kernel"] = ("model", None)
    lm[".*bias"] = ("model",)
    lm["d.*"] = (None,)
    placer = placement.Placer(lm)
    exact = placer.place("d/kernel", [8, 8], 4)
    assert exact.rule == "d/kernel" and exact.placement.splits == (4, 1)
    other = placer.place("e/kernel", [8, 8], 4)
    assert other.rule == ".*kernel" and other.placement.splits == (1, 4)
    # Two patterns match: replicated, with Keras's error named.
    clash = placer.place("d/bias", [8], 4)
    assert clash.rule is None and clash.clash == [".*bias", "d.*"]
    assert clash.placement.copies == 8
    assert [p["kind"] for p in clash.problems] == ["layout_ambiguous"]
    assert placer.place("x/y", [3], 4).placement.copies == 8
