"""What R calls as "search.<function>"."""

from ..search.pipeline import search_layout

__all__ = [
    "search_layout",
]
