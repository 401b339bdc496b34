"""What R calls as "arrays.<function>"."""

from ..arrays.values import (
    as_array,
    to_r,
    variable_values,
)

__all__ = [
    "as_array",
    "to_r",
    "variable_values",
]
