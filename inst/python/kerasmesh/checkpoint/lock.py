"""The checkpoint directory's lock, `.kerasmesh.lock`: writers of one
directory take turns.

Process 0 of a run takes it with `flock()` for the whole save, background
part included, and writes who holds it (process id, host, time) into the
file, so that a writer kept waiting can say who may hold it. Waiting is
bounded by the save's deadline and polls, so Ctrl-C (a KeyboardInterrupt
in the main thread) stops it between two tries; the other processes of
the run learn whether process 0 got it (`agreed()`) instead of waiting at
a barrier it may never reach. A lock left by a killed writer is no
obstacle: the kernel releases `flock()` locks with the process.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import time

try:
    import fcntl
except ImportError:  # no flock() (Windows): one writer at a time
    fcntl = None

from ..core.errors import KerasmeshError
from ..core import kinds
from ..distributed.initialize import process_index
from .commit import agreed, write_error
from .seal import read_json

LOCK_FILE = ".kerasmesh.lock"
_FIRST_WAIT, _LONGEST_WAIT = 0.01, 0.25
# File systems without flock(): one writer at a time is then the user's.
_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL)


class HeldLock:
    """The lock a save holds (nothing outside process 0): `release()`
    closes its file, which releases it; releasing twice is harmless."""

    def __init__(self, fd: int | None = None, path: str | None = None):
        self.fd, self.path = fd, path

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)

    def lost(self) -> bool:
        """Whether the file at the lock's path is no longer the one held:
        the directory was removed, moved or replaced since the lock was
        taken (a background save's directory can vanish under it). False
        where nothing is held (outside process 0, once released)."""
        if self.fd is None or self.path is None:
            return False
        try:
            return not os.path.samestat(os.fstat(self.fd),
                                        os.stat(self.path))
        except OSError:
            return True


def hold(directory: str, deadline: float) -> HeldLock:
    """Take the directory's lock in process 0, waiting at most until
    `deadline` (`time.monotonic()`); every process returns or raises.

    Raises:
        KerasmeshError: `checkpoint_lock` when another writer held it until
            the deadline; `checkpoint_directory` when the lock path is not
            a regular file; `checkpoint_write` when it can't be created.
    """
    held, failure = HeldLock(), None
    if process_index() == 0:
        try:
            held = acquire(directory, deadline)
        except KerasmeshError as e:
            failure = e
    if agreed(failure is not None):
        held.release()
        raise failure or KerasmeshError(
            kinds.CHECKPOINT_LOCK, "The checkpoint directory's lock must be "
            "free.", x="Process 0 could not take it; its error says why.")
    return held


def acquire(directory: str, deadline: float) -> HeldLock:
    """Open and `flock()` the lock file, polling until `deadline`."""
    path = os.path.join(directory, LOCK_FILE)
    fd = open_lock(path)
    if fcntl is None:
        return HeldLock(fd, path)
    wait, started = _FIRST_WAIT, time.monotonic()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                os.close(fd)
                raise lock_timeout(path, time.monotonic() - started) from None
            time.sleep(min(wait, left))
            wait = min(2 * wait, _LONGEST_WAIT)
        except OSError as e:
            if e.errno in _NO_LOCKS:
                break
            os.close(fd)
            raise write_error(directory, -1, e.strerror or str(e)) from e
    write_holder(fd)
    return HeldLock(fd, path)


def open_lock(path: str) -> int:
    """The lock file's descriptor, created when missing.

    Raises:
        KerasmeshError: `checkpoint_directory` when something else has its
            name (a folder, a FIFO, a symbolic link); `checkpoint_write`
            when the file system refuses it.
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise write_error(os.path.dirname(path), -1,
                          e.strerror or str(e)) from e
    if mode is not None and not stat.S_ISREG(mode):
        raise not_a_lock_file(path, mode)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | \
        getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags, 0o644)
    except OSError as e:
        raise write_error(os.path.dirname(path), -1,
                          e.strerror or str(e)) from e


def not_a_lock_file(path: str, mode: int) -> KerasmeshError:
    what = "a directory" if stat.S_ISDIR(mode) else \
        "a symbolic link" if stat.S_ISLNK(mode) else \
        "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
    return KerasmeshError(
        kinds.CHECKPOINT_DIRECTORY, "The checkpoint directory's lock file "
        "must be a regular file.",
        x=f"{path} is {what}, so kerasmesh can't lock the directory.",
        i="Move it away (kerasmesh creates its lock file itself), or save "
          "into another directory.")


def write_holder(fd: int) -> None:
    """Write who holds the lock into the lock file (best effort)."""
    record = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                         "since": time.time()}).encode()
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, record, 0)
    except OSError:
        pass  # the lock holds without the record


def holder(path: str) -> str:
    """Who may hold the lock, from its file: "process 12 on host h since
    <time>", or what is known."""
    record = read_json(path)
    if not isinstance(record, dict) or \
            not isinstance(record.get("pid"), int):
        return "a writer that did not say who it is"
    since = record.get("since")
    when = time.strftime(" since %Y-%m-%d %H:%M:%S",
                         time.localtime(since)) \
        if isinstance(since, (int, float)) else ""
    return f"process {record['pid']} on host {record.get('host', '?')}{when}"


def lock_timeout(path: str, waited: float) -> KerasmeshError:
    return KerasmeshError(
        kinds.CHECKPOINT_LOCK, "The checkpoint directory's lock must be "
        "free within `timeout`.",
        x=f"{path} was held for {waited:.0f} s by {holder(path)}, "
          "another writer of this directory.",
        i="Wait for that save to end and save again, pass a larger "
          "`timeout`, or save into another directory.")
