"""A signal's handler as the operating system has it (`struct
sigaction`), read and put back as bytes: what Python's `signal` module
can't do for a handler set in C, by R or by reticulate. Python's
`signal.signal()` installs Python's own C handler; putting the bytes
back is the only way to restore theirs."""

from __future__ import annotations

import ctypes

# Larger than any platform's `struct sigaction`, which is only copied.
_SIGACTION_BYTES = 1024


def os_action(signum: int) -> ctypes.Array | None:
    """`signum`'s `struct sigaction` now, as bytes; None where the C
    library can't say."""
    buffer = ctypes.create_string_buffer(_SIGACTION_BYTES)
    try:
        status = _libc().sigaction(signum, None, buffer)
    except (AttributeError, OSError):
        return None
    return buffer if status == 0 else None


def set_os_action(signum: int, action: ctypes.Array) -> bool:
    """Put back a `struct sigaction` `os_action()` read; whether the C
    library took it."""
    try:
        return _libc().sigaction(signum, action, None) == 0
    except (AttributeError, OSError):
        return False


def action_handler(action: ctypes.Array) -> int:
    """The handler in `action`, as an address: 0 is the default, 1 is
    ignored. It is the first field of `struct sigaction` on Linux and
    macOS."""
    return ctypes.c_void_p.from_buffer(action).value or 0


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None)
