"""What R calls as "arrays.<function>"."""

from ..arrays.values import (
    as_array,
    variable_values,
)

__all__ = [
    "as_array",
    "variable_values",
]
