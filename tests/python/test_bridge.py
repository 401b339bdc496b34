"""What crosses to R: plain values through `call()`, objects through
`call_object()`, warnings and errors in the envelope."""

import numpy as np
import pytest

from kerasmesh import call, call_object, plain
from kerasmesh.core import kinds
from kerasmesh.core.errors import KerasmeshWarning, envelope, warn


def test_plain_values_pass():
    value = {"a": [1, 2.5, None, "x", True], "b": ({"c": 1},)}
    assert plain(value) is value


@pytest.mark.parametrize("value", [
    np.zeros(3), np.float32(1.0), {"x": [1, np.int64(2)]}])
def test_numpy_values_are_refused_with_where_they_are(value):
    with pytest.raises(TypeError, match="numpy"):
        plain(value)


def test_call_refuses_an_array_that_call_object_returns():
    out = call("arrays.as_array", values=[1, 2, 3], shape=[3])
    assert out["ok"] is False
    assert out["python_type"] == "TypeError"
    status, value = call_object("arrays.as_array", values=[1, 2, 3],
                                shape=[3])
    assert status["ok"] is True and "value" not in status
    assert isinstance(value, np.ndarray)
    assert value.shape == (3,)


def test_arguments_travel_by_keyword_only():
    """A positional argument fails loudly, so no reordered signature on
    either side can mismatch silently."""
    with pytest.raises(TypeError):
        call("arrays.as_array", [1, 2, 3], [3])
    with pytest.raises(TypeError):
        call_object("arrays.as_array", [1, 2, 3], [3])
    out = call("arrays.as_array", values=[1], shap=[1])
    assert out["ok"] is False and out["python_type"] == "TypeError"
    assert "shap" in out["message"]


def test_call_object_errors_come_without_a_value():
    status, value = call_object("arrays.as_array", values=[1, 2], shape=[3])
    assert status["ok"] is False and status["kind"] == "array"
    assert value is None


def test_warnings_travel_in_the_envelope():
    def fn():
        warn(kinds.REPLICATED, "Something to know.", [("i", "A way out.")])
        return 1
    out = envelope(fn, (), {})
    assert out["value"] == 1
    assert out["warnings"] == [["replicated", "Something to know.",
                                [["i", "A way out."]]]]


def test_other_python_warnings_are_shown_not_swallowed():
    import warnings

    def fn():
        warnings.warn("plain python warning", RuntimeWarning, stacklevel=2)
        return 2
    with pytest.warns(RuntimeWarning, match="plain python warning"):
        out = envelope(fn, (), {})
    assert out["warnings"] == []
    assert not issubclass(RuntimeWarning, KerasmeshWarning)


def test_integers_r_cant_hold_cross_as_floats():
    # reticulate 1.28 wraps them around: 15,332,469,805,107 became
    # -563,441,613 (a search's space size).
    big = 15_332_469_805_107
    value = {"space_size": big, "n": 7, "flag": True,
             "nested": [1, (2**31, -(2**31))]}
    out = plain(value)
    assert out == {"space_size": float(big), "n": 7, "flag": True,
                   "nested": [1, (2.0**31, -(2.0**31))]}
    assert type(out["space_size"]) is float and type(out["n"]) is int
    assert out["flag"] is True
    assert isinstance(out["nested"][1], tuple)
    assert value["space_size"] == big  # the input is left as it was
    assert plain(2**31 - 1) == 2**31 - 1
    assert type(plain(2**31 - 1)) is int


def test_integers_past_a_floats_range_cross_as_infinite():
    # 320 uniquely named layers: a space of 21^320 layouts, which float()
    # refuses ("int too large to convert to float").
    huge = 21**320
    assert plain({"space_size": huge}) == {"space_size": float("inf")}
    assert plain([-huge]) == [float("-inf")]
