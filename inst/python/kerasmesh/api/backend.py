"""What R calls as "backend.<function>"."""

from ..core.backend import (
    backend_state,
    set_environ,
)

__all__ = [
    "backend_state",
    "set_environ",
]
