"""What R calls as "distributed.<function>"."""

from ..distributed.initialize import (
    initialize,
    process_count,
    process_index,
)

__all__ = [
    "initialize",
    "process_count",
    "process_index",
]
