"""What R calls as "errors.<function>"."""

from ..core.errors import (
    kinds,
    value_fact,
)

__all__ = [
    "kinds",
    "value_fact",
]
