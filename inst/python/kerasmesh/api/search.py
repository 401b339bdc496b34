"""What R calls as "search.<function>"."""

from ..search.entry import (
    search_layout,
)

__all__ = [
    "search_layout",
]
