"""What R calls as "arrays.<function>"."""

from ..core.arrays import (
    as_array,
    variable_values,
    as_lists,
    check_representable,
    to_r,
)

__all__ = [
    "as_array",
    "variable_values",
    "as_lists",
    "check_representable",
    "to_r",
]
