"""One definition of the numbers R may send."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kerasmesh.core.checks import divisors, is_number, is_positive, is_whole


@pytest.mark.parametrize("x", [True, False, None, "4", math.nan, math.inf,
                               -math.inf, [4]])
def test_bools_strings_and_non_finite_values_are_not_numbers(x):
    assert not is_number(x) and not is_whole(x) and not is_positive(x)


def test_whole_numbers_may_come_as_doubles_or_numpy_scalars():
    assert is_whole(4.0) and is_whole(4) and is_whole(np.int64(4))
    assert not is_whole(4.5)
    assert is_whole(0) and not is_whole(0, minimum=1)
    assert not is_whole(-1)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_positive_is_above_zero(x):
    assert is_positive(x) == (x > 0)


@given(st.integers(min_value=-10, max_value=10), st.integers(0, 3))
def test_whole_respects_the_minimum(x, minimum):
    assert is_whole(x, minimum) == (x >= minimum)
    assert is_whole(float(x), minimum) == (x >= minimum)


def test_divisors_in_order_even_for_rs_largest_integer():
    assert divisors(1) == [1]
    assert divisors(36) == [1, 2, 3, 4, 6, 9, 12, 18, 36]
    assert divisors(2**31 - 1) == [1, 2**31 - 1]
