"""Arrays from R's flat values: nothing changes silently."""

import numpy as np
import pytest

from kerasmesh import KerasmeshError
from kerasmesh.arrays.values import (_refuse, as_array, positions,
                                     variable_values)
from kerasmesh.core.errors import KerasmeshWarning

NAN = float("nan")


def error_of(*args):
    with pytest.raises(KerasmeshError) as info:
        as_array(*args)
    return info.value


def test_values_fill_the_shape_in_r_order():
    a = as_array([1, 2, 3, 4, 5, 6], [2, 3])
    assert a.tolist() == [[1, 3, 5], [2, 4, 6]]
    assert a.flags["C_CONTIGUOUS"] and a.dtype == np.float32


def test_nan_stays_nan_in_a_floating_dtype():
    assert np.isnan(as_array([1.0, NAN], [2])).tolist() == [False, True]


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8", "bool"])
def test_nan_is_refused_by_integer_and_boolean_dtypes(dtype):
    e = error_of([1.0, NAN, 3.0, NAN], [4], dtype)
    assert e.kind == "array_na"
    assert e.bullets[0][1] == "NA at positions 2 and 4."


@pytest.mark.parametrize("values, dtype, shown", [
    ([1, 300], "int8", "300"), ([-1], "uint8", "-1"),
    ([1.5], "int32", "1.5"), ([2.0**63], "int64", "9.223372036854776e+18"),
    ([2], "bool", "2"), ([1e300], "float32", "1e+300")])
def test_values_the_dtype_cannot_hold_are_refused(values, dtype, shown):
    e = error_of(values, [len(values)], dtype)
    assert e.kind == "array_range"
    assert e.bullets[0][1].startswith(f"Can't store {shown} ")


def test_whole_numbers_a_float_rounds_give_a_classed_warning():
    with pytest.warns(KerasmeshWarning) as record:
        a = as_array([16777217.0, 1.0], [2], "float32")
    assert record[0].message.kind == "array_precision"
    assert "16777217 became 16777216" in record[0].message.bullets[0][1]
    assert a[0] == 16777216.0


def test_exact_values_give_no_warning(recwarn):
    as_array([16777216.0, 0.1, 2.0**30], [3], "float32")
    as_array([2.0**40 + 1], [1], "float64")
    assert not [w for w in recwarn if w.category is KerasmeshWarning]


def test_positions_are_one_based_and_bounded():
    mask = np.zeros(20, dtype=bool)
    mask[[0, 2, 4, 6, 8, 10, 12]] = True
    assert positions(mask) == "1, 3, 5, 7, 9 and 2 more"


def test_variable_values_refuses_what_is_not_a_model():
    for bad in (42, "model", {"a": 1}):
        with pytest.raises(KerasmeshError) as info:
            variable_values(bad)
        assert info.value.kind == "model"


def test_every_value_out_of_range_is_named_up_to_three():
    raw = np.array([1000.0, -1000.0, 1000.0])
    with pytest.raises(KerasmeshError) as e:
        _refuse(np.abs(raw) > 127, raw, "`int8`", "-128 to 127")
    assert e.value.bullets[0][1].startswith(
        "Can't store 1000 and -1000 (at positions 1, 2 and 3)")
    raw = np.array([500.0, 600.0, 700.0, 800.0])
    with pytest.raises(KerasmeshError) as e:
        _refuse(raw > 127, raw, "`int8`", "-128 to 127")
    assert e.value.bullets[0][1].startswith("Can't store 500, 600, 700, ...")


def test_a_refusal_names_rows_at_their_place_in_the_users_array():
    # Rows 4 and 2 of a 5 x 2 array, column-major: x[4, 2] is 999.
    values = [4.0, 2.0, 999.0, 7.0]
    with pytest.raises(KerasmeshError) as info:
        as_array(values, [2, 2], "int8", arg="x", rows=[4, 2], n_rows=5)
    assert info.value.kind == "array_range"
    assert info.value.bullets[0][1] == \
        "Can't store 999 (in `x` at position 9)."
    # All rows: positions as they are, the array named.
    with pytest.raises(KerasmeshError) as info:
        as_array([1.0, 300.0], [2], "int8", arg="y")
    assert info.value.bullets[0][1] == \
        "Can't store 300 (in `y` at position 2)."
