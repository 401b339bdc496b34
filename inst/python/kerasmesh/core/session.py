"""What the shim sets up when R first reaches it, and undoes when
kerasmesh is unloaded."""

from __future__ import annotations

from collections.abc import Callable

from . import broken_pipes
from .errors import set_r_warning


def start(r_warning: Callable) -> None:
    """Register `r_warning`, R's function that signals a warning (see
    `core.errors`), and ignore SIGPIPE as Python does
    (`core.broken_pipes`)."""
    set_r_warning(r_warning)
    broken_pipes.ignore()


def end() -> None:
    """Undo `start()`."""
    set_r_warning(None)
    broken_pipes.restore()
