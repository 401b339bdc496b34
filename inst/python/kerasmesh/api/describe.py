"""What R calls as "describe.<function>"."""

from ..core.describe import (
    object_type,
)

__all__ = [
    "object_type",
]
