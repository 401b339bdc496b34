"""What R calls as "errors.<function>"."""

from ..core.errors import (
    set_r_warning,
)

__all__ = [
    "set_r_warning",
]
