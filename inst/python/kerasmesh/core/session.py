"""What the shim sets up when R first reaches it, and undoes when
kerasmesh is unloaded."""

from __future__ import annotations

from collections.abc import Callable

from . import broken_pipes
from .platforms import cpu_without_gpus
from .errors import set_r_warning


def start(r_warning: Callable) -> None:
    """Register `r_warning`, R's function that signals a warning (see
    `core.errors`), ignore SIGPIPE as Python does (`core.broken_pipes`),
    and keep JAX's CUDA plugin quiet on a machine without GPUs
    (`core.platforms`)."""
    set_r_warning(r_warning)
    broken_pipes.ignore()
    cpu_without_gpus()


def end() -> None:
    """Undo `start()`."""
    set_r_warning(None)
    broken_pipes.restore()
