"""What R calls as "arrays.<function>"."""

from ..arrays.values import (
    as_array,
    variable_values,
    as_lists,
    check_representable,
)

__all__ = [
    "as_array",
    "variable_values",
    "as_lists",
    "check_representable",
]
