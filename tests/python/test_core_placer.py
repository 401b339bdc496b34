"""Placing tensors under a layout and variables under a layout map:
the placement, the rule that decided it, and the one rule lookup."""

import pytest

from kerasmesh.core.placer import Placer, check_placement

SIZES = {"data": 2, "model": 4}


def test_check_placement_carries_the_placement_and_its_bytes():
    placed = check_placement("v", [8, 4], ["model", None], "r", SIZES, 2)
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
    placer = Placer(lm)
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


def test_a_path_matching_several_rules_is_worded_once():
    """The plan's problem and `lm[[path]]`'s error say the same."""
    import keras

    from kerasmesh import KerasmeshError
    from kerasmesh.layout_map.rules import lookup

    mesh = keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), keras.distribution.list_devices())
    lm = keras.distribution.LayoutMap(mesh)
    lm[".*kernel"] = (None, "model")
    lm["d.*"] = (None, None)
    [problem] = Placer(lm).place("d/kernel", [8, 8]).problems
    with pytest.raises(KerasmeshError) as e:
        lookup(lm, "d/kernel")
    assert e.value.kind == problem["kind"] == "layout_ambiguous"
    assert [list(b) for b in e.value.bullets] == problem["bullets"]
    assert problem["message"] == e.value.message.replace("Path", "Variable")
