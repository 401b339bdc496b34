"""What R calls as "session.<function>"."""

from ..core.session import (
    end,
    start,
)

__all__ = [
    "end",
    "start",
]
