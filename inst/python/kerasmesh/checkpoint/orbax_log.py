"""Orbax's log kept off the console while kerasmesh saves or reads.

Orbax logs through absl's Python logger. Each of its writer threads that
fails logs the error with its whole traceback ("_SignalingThread.run()
raised an exception") before the error reaches the code that waits for
the write, which kerasmesh then raises as a classed error saying what
happened: a directory removed during a background save printed some 300
lines of Orbax's tracebacks first, more than one per thread. While a
kerasmesh save or read is under way (`quiet_orbax()`, nested or in
several threads: a count) and for `GRACE` seconds after (the other
threads of a failed write report the same error after the first), the
records of Orbax's own modules are dropped; at any other time (a user's
own Orbax, Keras's `OrbaxCheckpoint`) they pass as they are.

The same holds for what asyncio logs of Orbax's tasks ("Task exception
was never retrieved": a damaged step read, each array's error once more),
and for one error TensorStore prints itself: a read or write that ends
after Orbax closed the event loop waiting for it (a damaged step, a
directory removed meanwhile) prints "RuntimeError: Event loop is closed"
through `sys.excepthook` or `sys.unraisablehook`. The filter and the
hooks stay installed once installed, passing everything on outside those
spans.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator

# Seconds after the last save or read ends during which Orbax's records
# are still dropped: its writer threads end within a second of the first
# failure here, which is what the waiting save raised.
GRACE = 10.0


class OrbaxQuiet(logging.Filter):
    """A filter on absl's logger that drops Orbax's records while
    `held()`; installed once, when first needed."""

    def __init__(self):
        super().__init__()
        self._lock = threading.Lock()
        self._count = 0
        self._until = 0.0
        self._installed = False

    def quiet(self) -> bool:
        return self._count > 0 or time.monotonic() < self._until

    def filter(self, record: logging.LogRecord) -> bool:
        return not (self.quiet() and (_is_orbax(record.pathname) or
                                      _unretrieved(record)))

    def hold(self) -> None:
        with self._lock:
            if not self._installed:
                for name in ("absl", "asyncio"):
                    logging.getLogger(name).addFilter(self)
                sys.excepthook = _ExceptHook(sys.excepthook, self)
                sys.unraisablehook = _UnraisableHook(sys.unraisablehook,
                                                     self)
                self._installed = True
            self._count += 1

    def release(self) -> None:
        with self._lock:
            self._count = max(0, self._count - 1)
            self._until = time.monotonic() + GRACE


class _ExceptHook:
    """`sys.excepthook`, dropping TensorStore's "Event loop is closed"
    while `quiet`: the error of a callback into an event loop Orbax
    closed, raised where no Python code called it."""

    def __init__(self, previous, quiet: OrbaxQuiet):
        self.previous, self.owner = previous, quiet

    def __call__(self, kind, value, tb) -> None:
        if self.owner.quiet() and _closed_loop(value, tb):
            return
        self.previous(kind, value, tb)


class _UnraisableHook(_ExceptHook):
    """`sys.unraisablehook`, dropping the same error while `quiet`."""

    def __call__(self, report) -> None:
        if self.owner.quiet() and \
                _closed_loop(report.exc_value, report.exc_traceback):
            return
        self.previous(report)


def _closed_loop(value: BaseException, tb) -> bool:
    return isinstance(value, RuntimeError) and \
        str(value) == "Event loop is closed" and tb is not None and \
        tb.tb_frame.f_code.co_name.endswith("call_soon_threadsafe")


_ORBAX_DIR = os.sep + "orbax" + os.sep


def _is_orbax(pathname: str) -> bool:
    return _ORBAX_DIR in (pathname or "")


def _unretrieved(record: logging.LogRecord) -> bool:
    """asyncio's report of a task or future whose error nobody read."""
    return record.name == "asyncio" and str(record.msg).partition(
        "\n")[0].endswith("exception was never retrieved")


QUIET = OrbaxQuiet()


@contextlib.contextmanager
def quiet_orbax() -> Iterator[None]:
    """Orbax's log dropped for the span of the block."""
    QUIET.hold()
    try:
        yield
    finally:
        QUIET.release()
