"""SIGPIPE as Python has it: ignored, so that a write to a closed pipe or
socket raises BrokenPipeError in the thread that wrote.

Python ignores SIGPIPE when it starts on its own, and so did reticulate
1.28. reticulate 1.41 starts Python without Python's signal handlers
(`Py_InitializeEx(0)`), which leaves R's handler in place: R raises an R
error inside the handler, on whichever thread wrote. On a thread of
Orbax's, JAX's or kerasmesh's that is not R's thread: R aborts ("caught
segfault"), or reports "C stack usage ... is too close to the limit" and
jumps into the R call that was waiting, which is abandoned half-done.
`ignore()` makes every reticulate version behave as Python does (as
reticulate itself does from 1.45 on); `restore()` puts back the handler
that was there.
"""

from __future__ import annotations

import ctypes
import signal
import threading

from .os_signals import action_handler, os_action, set_os_action

_SAVED: dict[str, ctypes.Array | None] = {"action": None}


def ignore() -> bool:
    """Ignore SIGPIPE unless it is ignored already or Python code set a
    handler for it; returns whether anything changed."""
    if _SAVED["action"] is not None or not hasattr(signal, "SIGPIPE") or \
            threading.current_thread() is not threading.main_thread():
        return False
    old = os_action(signal.SIGPIPE)
    if old is None or os_handler(old) == int(signal.SIG_IGN) or \
            callable(signal.getsignal(signal.SIGPIPE)):
        return False
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    _SAVED["action"] = old
    return True


def restore() -> bool:
    """Put back the handler `ignore()` replaced; returns whether there
    was one."""
    old = _SAVED["action"]
    if old is None:
        return False
    set_os_action(signal.SIGPIPE, old)
    _SAVED["action"] = None
    return True


def os_handler(action: ctypes.Array | None = None) -> int | None:
    """The handler the operating system runs for SIGPIPE now (or in
    `action`), as an address: 0 is the default, 1 is ignored; None where
    the C library can't say."""
    action = action if action is not None else os_action(signal.SIGPIPE)
    if action is None:
        return None
    return action_handler(action)
