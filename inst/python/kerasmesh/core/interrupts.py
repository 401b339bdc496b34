"""Ctrl-C during a shim call, as R's interrupt on every reticulate.

reticulate before 1.39 (Debian 12's 1.28) handles SIGINT in two halves:
its C handler marks the interrupt for R and for Python, and its Python
handler (`rpytools/signals.py`) calls an R function to ask whether R has
taken the interrupt already. While a shim call waits (a pending save, a
lock, a compile), Python runs that handler in R's thread, and R may take
the interrupt during that very call: R then leaves the call by a jump
that reticulate catches and drops, and the call fails with a Python error
"(Unknown exception occurred)" in place of the interrupt (once in seven
Ctrl-C during `checkpoint_wait()`); after such a dropped jump R's state is
not what R expects, and in tests the session later crashed or spun.

`shim_interrupts()` gives a shim call Python's own SIGINT handler
(`signal.default_int_handler`, which raises KeyboardInterrupt and calls
nothing), keeping reticulate's C handler: reticulate still marks the
interrupt, and turns the KeyboardInterrupt that ends the call into R's
interrupt. On the way out both halves are back as they were (Python's
`signal.signal()` installs Python's own C handler, so the operating
system's handler is put back from its bytes, `core.os_signals`). Nothing
changes where the Python handler is not reticulate's (reticulate 1.39 and
later handle SIGINT in C), outside the main thread, or without a C
library to read handlers with.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

from .os_signals import os_action, set_os_action

_RETICULATE_HANDLER = "rpytools.signals"


@contextlib.contextmanager
def shim_interrupts() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt, calling no R code, for the span
    of the block (see the module's documentation)."""
    swap = _swappable()
    if swap is None:
        yield
        return
    python_handler, os_handler = swap
    signal.signal(signal.SIGINT, signal.default_int_handler)
    set_os_action(signal.SIGINT, os_handler)  # reticulate's C half stays
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, python_handler)
        set_os_action(signal.SIGINT, os_handler)


def _swappable() -> tuple | None:
    """(reticulate's Python handler, the operating system's handler)
    where the Python half of SIGINT calls R; None elsewhere."""
    if threading.current_thread() is not threading.main_thread():
        return None
    handler = signal.getsignal(signal.SIGINT)
    if getattr(handler, "__module__", None) != _RETICULATE_HANDLER:
        return None
    action = os_action(signal.SIGINT)
    return None if action is None else (handler, action)
