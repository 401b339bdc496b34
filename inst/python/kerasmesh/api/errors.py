"""What R calls as "errors.<function>"."""

from ..core.errors import (
    kinds,
    set_r_warning,
    value_fact,
)

__all__ = [
    "kinds",
    "set_r_warning",
    "value_fact",
]
