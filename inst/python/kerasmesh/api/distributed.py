"""What R calls as "distributed.<function>"."""

from ..distributed.connect import disconnect
from ..distributed.initialize import (
    initialize,
    process_count,
    process_index,
)

__all__ = [
    "disconnect",
    "initialize",
    "process_count",
    "process_index",
]
