"""What R calls as "checkpoint.<function>"."""

from ..checkpoint.store import (
    info,
    restore,
    save,
)

__all__ = [
    "info",
    "restore",
    "save",
]
