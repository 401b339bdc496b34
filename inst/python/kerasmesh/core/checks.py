"""Predicates for numbers from R: one definition of "a whole number";
and the divisors of one.

R sends doubles for whole numbers (`4`, not `4L`) and TRUE/FALSE as bools,
which Python counts as ints. Callers raise their own `KerasmeshError`, so
each message names its argument and kind.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any


def is_number(x: Any) -> bool:
    """A finite real number that is not a bool."""
    return isinstance(x, Real) and not isinstance(x, bool) and \
        math.isfinite(x)


def is_whole(x: Any, minimum: int = 0) -> bool:
    """A whole number (int, or a float such as 4.0) of at least `minimum`."""
    return is_number(x) and float(x).is_integer() and x >= minimum


def is_positive(x: Any) -> bool:
    """A finite number above 0 (seconds, shares)."""
    return is_number(x) and x > 0


def divisors(n: int) -> list[int]:
    """The divisors of the positive whole number `n`, in increasing order
    (in about sqrt(n) steps: `n` may be as large as R's integers)."""
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d * d != n:
                large.append(n // d)
        d += 1
    return small + large[::-1]
