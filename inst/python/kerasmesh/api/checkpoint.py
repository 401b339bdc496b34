"""What R calls as "checkpoint.<function>"."""

from ..checkpoint.callback import (
    callback,
)
from ..checkpoint.restore import (
    info,
    restore,
)
from ..checkpoint.store import (
    save,
    wait,
)

__all__ = [
    "callback",
    "info",
    "restore",
    "save",
    "wait",
]
