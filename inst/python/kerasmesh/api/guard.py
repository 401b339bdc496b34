"""What R calls as "guard.<function>"."""

from ..train.guard import (
    set_auto_check,
)

__all__ = [
    "set_auto_check",
]
