"""What R calls as "describe.<function>"."""

from ..core.describe import (
    kind_of,
)

__all__ = [
    "kind_of",
]
