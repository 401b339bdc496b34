"""What R calls as "checkpoint_callback.<function>"."""

from ..checkpoint.callback import (
    callback,
)

__all__ = [
    "callback",
]
