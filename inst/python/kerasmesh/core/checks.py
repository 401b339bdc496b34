"""Predicates for numbers from R: one definition of "a whole number".

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
