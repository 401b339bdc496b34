"""Mesh validation: examples and properties against the rules."""

import math

import keras
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kerasmesh import KerasmeshError, call
from kerasmesh.mesh.device_mesh import (check_axis_names, count_factorizations,
                            describe_factorizations,
                            describe_mesh, device_mesh, factorizations)

AXES = ["data", "model", "stage", "expert"]


def kind_of(fn, *args, **kwargs):
    with pytest.raises(KerasmeshError) as info:
        fn(*args, **kwargs)
    return info.value.kind


def test_book_mesh():
    mesh = device_mesh([2, 4], ["data", "model"])
    assert mesh["shape"] == [2, 4]
    assert mesh["axis_names"] == ["data", "model"]
    assert mesh["devices"] == [f"cpu:{i}" for i in range(8)]
    assert mesh["mesh"].devices.shape == (2, 4)


def test_doubles_and_inference():
    assert device_mesh([2.0, None], ["data", "model"])["shape"] == [2, 4]
    assert device_mesh([-1, 2.0], ["data", "model"])["shape"] == [4, 2]


def test_wrong_product_lists_valid_shapes():
    with pytest.raises(KerasmeshError) as info:
        device_mesh([3, 4], ["data", "model"])
    text = str(info.value)
    assert "needs 12 devices" in text and "8 cpu devices" in text
    assert "8 devices can form 1\u00d78, 2\u00d74, 4\u00d72 or 8\u00d71." in text
    with pytest.raises(KerasmeshError) as info:
        device_mesh([1], ["data"])
    assert "Shape 1 needs 1 device; " in str(info.value)


@pytest.mark.parametrize("shape,names,devices,kind", [
    ([3, 4], ["data", "model"], None, "mesh_shape"),
    ([2, 4], ["data", "data"], None, "axis_names"),
    ([0, 8], ["data", "model"], None, "mesh_shape"),
    ([2.5, 3.2], ["data", "model"], None, "mesh_shape"),
    ([None, None], ["data", "model"], None, "mesh_shape"),
    ([2, 4], ["data"], None, "axis_names"),
    ([2, 4], ["data", ""], None, "axis_names"),
    ([2, 4], None, None, "axis_names"),
    ([1], ["data"], ["cpu:99"], "devices"),
    ([2], ["data"], ["cpu:1", "cpu:1"], "devices"),
    ([2], ["data"], ["cpu:1", "gpu:0"], "devices"),
    ([2], ["data"], 9, "devices"),
    ([True], ["data"], None, "mesh_shape"),
    (["2"], ["data"], None, "mesh_shape"),
])
def test_bad_input_kinds(shape, names, devices, kind):
    assert kind_of(device_mesh, shape, names, devices) == kind


def test_envelope_returns_errors_as_plain_values():
    result = call("mesh.device_mesh", shape=[3, 4], axis_names=["data", "model"])
    assert result["ok"] is False
    assert result["kind"] == "mesh_shape", result
    assert result["bullets"][0][0] == "x"
    result = call("mesh.no_such_function")
    assert result["ok"] is False and result["kind"] == "python"
    assert result["python_type"] == "AttributeError"


@given(n=st.integers(1, 64), rank=st.integers(1, 3))
def test_factorizations_multiply_to_n(n, rank):
    shapes = factorizations(n, rank)
    assert shapes and len(set(shapes)) == len(shapes)
    assert all(math.prod(s) == n and len(s) == rank for s in shapes)
    assert describe_factorizations(n, rank).startswith(f"{n} device")
    assert count_factorizations(n, rank) == len(shapes)


def test_hints_for_a_long_mesh_shape_are_counted_not_listed():
    """A 400-axis shape used to enumerate millions of factorisations."""
    import time

    start = time.monotonic()
    text = describe_factorizations(8, 400)
    assert text == ("8 devices can form 10,746,800 shapes of rank 400: too "
                    "many to list.")
    assert describe_factorizations(720720, 5).endswith("656,238 more.")
    assert len(factorizations(720720, 5, limit=12)) == 12
    with pytest.raises(KerasmeshError) as e:
        device_mesh([1] * 399 + [3], [f"a{i}" for i in range(400)])
    assert e.value.kind == "mesh_shape"
    assert "too many to list" in e.value.bullets[-1][1]
    assert time.monotonic() - start < 5


sizes = st.one_of(st.integers(-2, 9), st.floats(-1, 9, allow_nan=False),
                  st.none())


@settings(max_examples=150, deadline=None)
@given(shape=st.lists(sizes, min_size=1, max_size=3),
       n_devices=st.integers(1, 8))
def test_shape_valid_iff_rules_hold(shape, n_devices):
    names = AXES[: len(shape)]

    def size_ok(s):
        return s is None or s == -1 or (float(s).is_integer() and s >= 1)

    unknown = [s for s in shape if s is None or s == -1]
    known = math.prod(int(s) for s in shape
                      if s is not None and s != -1 and size_ok(s))
    valid = all(size_ok(s) for s in shape) and len(unknown) <= 1 and (
        n_devices % known == 0 if unknown else known == n_devices)
    if valid:
        mesh = device_mesh(shape, names, n_devices)
        assert math.prod(mesh["shape"]) == n_devices
        assert len(mesh["devices"]) == n_devices
    else:
        assert kind_of(device_mesh, shape, names, n_devices) == "mesh_shape"


@settings(max_examples=100, deadline=None)
@given(names=st.lists(st.one_of(st.text(max_size=3), st.none()),
                      min_size=0, max_size=4))
def test_axis_names_valid_iff_unique_nonempty_xla_readable_strings(names):
    rank = 2
    valid = (len(names) == rank and all(
        isinstance(a, str) and a and
        all(" " <= ch <= "~" and ch != "\\" for ch in a) for a in names)
        and len(set(names)) == rank)
    if valid:
        assert device_mesh([2, 4], names)["axis_names"] == names
    else:
        assert kind_of(device_mesh, [2, 4], names) == "axis_names"


@settings(max_examples=100, deadline=None)
@given(ids=st.lists(st.integers(0, 10), min_size=1, max_size=8))
def test_devices_valid_iff_known_and_unique(ids):
    devices = [f"cpu:{i}" for i in ids]
    valid = all(i < 8 for i in ids) and len(set(ids)) == len(ids)
    if valid:
        mesh = device_mesh([len(ids)], ["data"], devices)
        assert mesh["devices"] == devices
    else:
        assert kind_of(device_mesh, [len(ids)], ["data"], devices) == \
            "devices"


def test_describe_mesh_answers_none_for_other_objects_unless_strict():
    mesh = device_mesh([2, 4], ["data", "model"])["mesh"]
    assert describe_mesh(mesh, strict=False)["shape"] == [2, 4]
    assert describe_mesh("mesh", strict=False) is None
    assert describe_mesh(keras.distribution.LayoutMap(mesh),
                         strict=False) is None
    with pytest.raises(KerasmeshError) as info:
        describe_mesh("mesh")
    assert info.value.kind == "device_mesh"


def test_a_layout_on_another_mesh_names_both_meshes(mesh):
    from kerasmesh.mesh.device_mesh import check_same_mesh

    devices = keras.distribution.list_devices()
    check_same_mesh(mesh, keras.distribution.DeviceMesh(
        (2, 4), ("data", "model"), devices), "start")
    other = keras.distribution.DeviceMesh((4, 2), ("data", "model"), devices)
    with pytest.raises(KerasmeshError) as e:
        check_same_mesh(mesh, other, "fixed")
    assert e.value.kind == "mesh_mismatch"
    assert '`fixed` is on a mesh of 4×2 ("data", "model"); `mesh` is ' \
        '2×4 ("data", "model").' in str(e.value)
    reordered = keras.distribution.DeviceMesh((2, 4), ("data", "model"),
                                              devices[::-1])
    with pytest.raises(KerasmeshError, match="other devices"):
        check_same_mesh(mesh, reordered, "start")


@pytest.mark.parametrize("name", ["batch", ["data"], 1, None])
def test_a_batch_axis_not_on_the_mesh_is_a_batch_dim_name_error(name):
    from kerasmesh.mesh.device_mesh import check_batch_dim_name

    assert check_batch_dim_name("model", ["data", "model"]) == "model"
    with pytest.raises(KerasmeshError) as e:
        check_batch_dim_name(name, ["data", "model"])
    assert e.value.kind == "batch_dim_name"


@pytest.mark.parametrize("name", ["c\\d", "\u00e4", "tab\there"])
def test_an_axis_name_xla_cant_read_back_is_refused(name):
    with pytest.raises(KerasmeshError) as e:
        device_mesh([2, 4], ["data", name])
    assert e.value.kind == "axis_names"
    assert "printable ASCII without a backslash" in str(e.value)
    assert repr(name) in str(e.value)


@pytest.mark.parametrize("name, says", [(None, "Name 2 is NA."),
                                        ("", "Name 2 is empty.")])
def test_a_missing_axis_name_is_said_as_it_is(name, says):
    with pytest.raises(KerasmeshError) as e:
        check_axis_names(["a", name], 2)
    assert e.value.bullets[0][1] == says
