"""Layout rules: validation at assignment, lookup as Keras does it."""

import re

import keras
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kerasmesh import KerasmeshError
from kerasmesh.layout_map.rules import (lookup, new_layout_map, remove_rule,
                                   set_rule, set_rules)
from kerasmesh.core.resolve import rule_keys
from kerasmesh.mesh.device_mesh import device_mesh


@pytest.fixture(scope="module")
def mesh():
    return device_mesh([2, 4], ["data", "model"])["mesh"]


def kind_of(fn, *args):
    with pytest.raises(KerasmeshError) as info:
        fn(*args)
    return info.value.kind


def test_rules_and_lookup(mesh):
    lm = new_layout_map(mesh, ["dense.*kernel", "dense.*bias"],
                        [[None, "model"], ["model"]])
    assert lm["keys"] == ["dense.*kernel", "dense.*bias"]
    assert lm["axes"] == [[None, "model"], ["model"]]
    keras_map = lm["layout_map"]
    assert isinstance(keras_map, keras.distribution.LayoutMap)
    assert lookup(keras_map, "dense_1/kernel") == {
        "key": "dense.*kernel", "axes": [None, "model"]}
    assert lookup(keras_map, "sequential/dense/kernel") == {
        "key": None, "axes": None}


def test_set_and_remove_copy(mesh):
    lm = new_layout_map(mesh)["layout_map"]
    added = set_rule(lm, "a", ["model"])
    assert len(lm) == 0 and added["keys"] == ["a"]
    removed = remove_rule(added["layout_map"], "a")
    assert removed["keys"] == [] and len(added["layout_map"]) == 1


def test_set_rules_adds_and_removes_in_order_on_one_copy(mesh):
    lm = new_layout_map(mesh, ["a", "b"], [["model"], ["data"]])["layout_map"]
    out = set_rules(lm, ["a", "c", "a"],
                    [None, [None, "model"], ["data"]])
    assert out["keys"] == ["b", "c", "a"]
    assert out["axes"] == [["data"], [None, "model"], ["data"]]
    assert rule_keys(lm) == ["a", "b"]


@pytest.mark.parametrize("keys,layouts,kind", [
    (["b", "b"], [["model"], ["data"]], "layout_key_exists"),
    (["c", 3], [["model"], None], "layout_key"),
    (["c", "d"], [["model"], ["modle"]], "layout_axes"),
    (["c", "d"], [["model"]], "layout_axes"),
    (["c", "nope"], [["model"], None], "layout_key_missing"),
])
def test_set_rules_refuses_what_set_rule_and_remove_rule_refuse(
        mesh, keys, layouts, kind):
    lm = new_layout_map(mesh)["layout_map"]
    assert kind_of(set_rules, lm, keys, layouts) == kind
    assert len(lm) == 0


@pytest.mark.parametrize("key,axes,kind", [
    ("k", [None, "modle"], "layout_axes"),
    ("k", ["model", "model"], "layout_axes"),
    ("dense[", ["model"], "layout_key"),
    (3, ["model"], "layout_key"),
    ("", ["model"], "layout_key"),
    ("k", [3], "layout_axes"),
])
def test_bad_rules(mesh, key, axes, kind):
    assert kind_of(new_layout_map, mesh, [key], [axes]) == kind


def test_duplicate_key(mesh):
    lm = new_layout_map(mesh, ["k"], [["model"]])["layout_map"]
    assert kind_of(set_rule, lm, "k", ["data"]) == "layout_key_exists"


def test_ambiguous_lookup(mesh):
    lm = new_layout_map(mesh, [".*kernel", "dense.*"],
                        [[None, "model"], ["model"]])["layout_map"]
    assert kind_of(lookup, lm, "dense/kernel") == "layout_ambiguous"


axis = st.sampled_from([None, "data", "model", "stage"])


@settings(max_examples=100, deadline=None)
@given(axes=st.lists(axis, min_size=0, max_size=4))
def test_axes_valid_iff_in_mesh_and_unique(mesh, axes):
    used = [a for a in axes if a is not None]
    valid = all(a in ("data", "model") for a in used) and \
        len(set(used)) == len(used)
    if valid:
        lm = new_layout_map(mesh, ["k"], [axes])
        assert lm["axes"] == [axes]
    else:
        assert kind_of(new_layout_map, mesh, ["k"], [axes]) == "layout_axes"


@settings(max_examples=100, deadline=None)
@given(key=st.text(alphabet="ab.*()+?|", min_size=1, max_size=6),
       path=st.text(alphabet="ab/", max_size=6))
def test_lookup_agrees_with_keras(mesh, key, path):
    try:
        re.compile(key)
    except re.error:
        assert kind_of(new_layout_map, mesh, [key], [["model"]]) == \
            "layout_key"
        return
    try:
        lm = new_layout_map(mesh, [key], [["model"]])["layout_map"]
    except KerasmeshError as e:
        # A key that could make matching hang, such as "(|)+", is refused.
        assert e.kind == "layout_key" and "could make matching hang" in \
            e.message
        return
    ours = lookup(lm, path)["axes"]
    theirs = lm[path]
    assert ours == (None if theirs is None else list(theirs.axes))


def keras_map_with(mesh, key):
    """A Keras LayoutMap made without kerasmesh, holding `key`."""
    keras_map = keras.distribution.LayoutMap(mesh)
    keras_map[key] = (None, "model")
    return keras_map


@pytest.mark.parametrize("key", ["(a+)+b", "(a|ab)*c", "dense["])
def test_keys_of_a_keras_layout_map_are_checked(mesh, key):
    from kerasmesh.train.distribution import model_parallel
    from kerasmesh.layout_map.rules import describe_layout_map

    keras_map = keras_map_with(mesh, key)
    assert kind_of(describe_layout_map, keras_map) == "layout_key"
    assert kind_of(model_parallel, keras_map) == "layout_key"


def test_a_bad_key_added_after_describing_is_refused_on_copy(mesh):
    keras_map = keras_map_with(mesh, "ok")
    keras_map["(a+)+b"] = (None, "model")
    assert kind_of(set_rule, keras_map, "x", ["model"]) == "layout_key"
    assert kind_of(remove_rule, keras_map, "x") == "layout_key"
