"""What R calls as "search.<function>"."""

from ..search.walk import (
    device_memory,
    search_layout,
)

__all__ = [
    "device_memory",
    "search_layout",
]
