"""What R calls as "search.<function>"."""

from ..search.walk import (
    search_layout,
)

__all__ = [
    "search_layout",
]
