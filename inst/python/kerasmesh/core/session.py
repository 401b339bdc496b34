"""What the shim sets up when R first reaches it, and undoes when
kerasmesh is unloaded."""

from __future__ import annotations

from collections.abc import Callable

from . import broken_pipes
from .platforms import cpu_without_gpus
from .errors import set_r_warning
from .r_events import HOOK


def start(r_warning: Callable, r_keeps_gil: bool = False) -> None:
    """Register `r_warning`, R's function that signals a warning (see
    `core.errors`), ignore SIGPIPE as Python does (`core.broken_pipes`),
    keep JAX's CUDA plugin quiet on a machine without GPUs
    (`core.platforms`), and say whether R keeps Python's lock while it runs
    R code (reticulate before 1.39: `core.r_events`)."""
    set_r_warning(r_warning)
    broken_pipes.ignore()
    cpu_without_gpus()
    HOOK.set_needed(r_keeps_gil)


def end() -> None:
    """Undo `start()`; R's event loop is R's own again."""
    set_r_warning(None)
    broken_pipes.restore()
    HOOK.release()
    HOOK.set_needed(False)
