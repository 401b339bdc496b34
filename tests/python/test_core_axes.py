"""Axes in every form a user has them, one check for every entry point."""

import keras
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kerasmesh import KerasmeshError
from kerasmesh.core.axes import check_axes, format_axes, layout_entries
from kerasmesh.report.shards import tensor_shards
from kerasmesh.layout_map.rules import new_layout_map
from kerasmesh.mesh.device_mesh import device_mesh

MESH_AXES = ["data", "model"]


@pytest.fixture(scope="module")
def mesh():
    return device_mesh([2, 4], MESH_AXES)["mesh"]


def error_of(fn, *args, **kwargs):
    with pytest.raises(KerasmeshError) as info:
        fn(*args, **kwargs)
    return info.value


@pytest.mark.parametrize("axes", [
    [None, "model"], (None, "model"),
    keras.distribution.TensorLayout((None, "model")),
])
def test_lists_tuples_and_tensor_layouts_give_the_same_axes(axes):
    assert check_axes(axes, MESH_AXES, "k") == (None, "model")


def test_a_name_or_none_alone_is_one_dimension():
    assert check_axes("model", MESH_AXES, "k") == ("model",)
    assert check_axes(None, MESH_AXES, "k") == (None,)


@pytest.mark.parametrize("axes", [
    {"a": 1}, 42, keras.Variable([1.0, 2.0]), object()])
def test_other_python_objects_are_refused_naming_key_and_value(axes):
    e = error_of(check_axes, axes, MESH_AXES, "dense.*kernel")
    assert e.kind == "layout_axes"
    assert e.message.startswith('The layout for "dense.*kernel" must be')
    received = e.bullets[0][1]
    assert received.startswith("Received ")
    assert "Python list" not in received and "Python tuple" not in received


def test_a_received_value_travels_as_a_fact_for_r_to_word():
    e = error_of(check_axes, {"a": 1}, MESH_AXES, "k")
    assert e.bullets[0] == ("x", "Received {value}.", {
        "type": "named_list", "length": 1, "names": ["a"], "values": [1]})
    e = error_of(check_axes, [None, 3], MESH_AXES, "k")
    assert e.bullets[0] == ("x", "Dimension 2 is {value}.", {
        "type": "numeric", "length": 1, "values": [3]})
    assert "Dimension 2 is the number 3." in str(e)


@pytest.mark.parametrize("pair", [
    ("data", "model"), ["data", "model"], "data+model"])
def test_several_axes_on_one_dimension_are_refused_everywhere(mesh, pair):
    e = error_of(check_axes, [None, pair], MESH_AXES, "k")
    assert e.kind == "layout_axes"
    assert "several mesh axes" in e.message
    assert e.bullets[0][1] == 'Dimension 2 names "data" and "model".'
    e = error_of(new_layout_map, mesh, ["k"], [(None, pair)])
    assert e.kind == "layout_axes" and "several mesh axes" in e.message
    e = error_of(tensor_shards, mesh, (None, pair), [8, 8])
    assert e.kind == "layout_axes" and "several mesh axes" in e.message


def test_keras_itself_cannot_place_several_axes_on_one_dimension(mesh):
    # Why kerasmesh refuses them: Keras 3.15's TensorLayout rejects a tuple
    # of axes once it has a mesh, so no LayoutMap can hold one.
    layout_map = keras.distribution.LayoutMap(mesh)
    with pytest.raises(ValueError, match="Invalid axis names"):
        layout_map["k"] = (None, ("data", "model"))


def test_an_axis_named_with_a_plus_is_one_axis():
    assert check_axes(["a+b"], ["a+b", "c"], "k") == ("a+b",)


def test_unknown_and_repeated_axes(mesh):
    assert error_of(check_axes, ["shard"], MESH_AXES, "k").bullets[0][1] == \
        'Unknown axis: "shard".'
    e = error_of(check_axes, ["model", "model"], MESH_AXES, None)
    assert e.message == "`axes` can't use a mesh axis twice."


def test_layout_entries_keeps_tensor_layout_axes():
    layout = keras.distribution.TensorLayout(("data", None))
    assert layout_entries(layout) == ["data", None]
    assert format_axes([None, ("data", "model")]) == '(NA, "data+model")'


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from([None, "data", "model"]), max_size=4))
def test_every_form_agrees(entries):
    used = [a for a in entries if a is not None]
    forms = [list(entries), tuple(entries),
             keras.distribution.TensorLayout(tuple(entries))]
    if len(used) != len(set(used)):
        kinds = {error_of(check_axes, f, MESH_AXES, "k").kind for f in forms}
        assert kinds == {"layout_axes"}
    else:
        results = {check_axes(f, MESH_AXES, "k") for f in forms}
        assert results == {tuple(entries)}
