"""Saves that finish while training goes on: one pending save at a time.

A save's first part runs in the caller's thread and is short: taking the
directory's lock and copying the arrays off the devices (Orbax's
`save_checkpointables_async()`, as Keras's `OrbaxCheckpoint(
save_on_background=True)` uses it). The rest (Orbax's write, each
process hashing the files it wrote, process 0 sealing the step, swapping
it in and pruning) runs in a Python thread of this module, holding the
lock until it ends. The thread never calls R. It runs while R runs R
code too: reticulate 1.39 and later give Python's lock back whenever R
returns from Python, and under earlier ones R's event loop lends it to
the thread until the thread ends (`core.r_events`).

There is at most one pending save per process: the next save, a restore,
`wait()` (R's `checkpoint_wait()`) and the end of `fit()` wait for it and
raise its error, as a `checkpoint_*` error. At exit, Python waits for it
and reports its error (`_finish_at_exit()`); R's exit
does the same through a finalizer (R/checkpoint.R). A process killed
meanwhile leaves only a temporary folder, which is never a step: the
steps saved before are intact, and the next save removes it.
"""

from __future__ import annotations

import atexit
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ..core.errors import KerasmeshError
from ..core import kinds
from ..core.r_events import HOOK

_SLICE = 0.1  # seconds between checks for Ctrl-C while waiting


class PendingSave:
    """One save's background part, running in a thread of its own."""

    def __init__(self, directory: str, step: int, work: Callable[[], dict]):
        self.directory, self.step, self.work = directory, step, work
        self.result: dict | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name=f"kerasmesh-checkpoint-{step}",
            daemon=False)

    def _run(self) -> None:
        try:
            self.result = self.work()
        except BaseException as e:  # noqa: BLE001 - raised where waited for
            self.error = e
        finally:
            HOOK.release()  # before `done`: the next save may hold it
            self.done.set()


_PENDING: list[PendingSave] = []  # at most one
_GUARD = threading.Lock()


def start(directory: str, step: int, work: Callable[[], dict]) -> PendingSave:
    """Run `work` (a save's background part) in its thread."""
    pending = PendingSave(directory, step, work)
    with _GUARD:
        _PENDING.append(pending)
        _finish_at_exit()
    HOOK.hold()  # the thread runs while R runs R code; it releases it
    pending.thread.start()
    return pending


def pending() -> list[dict]:
    """The pending save, as `directory` and `step` (empty when none)."""
    with _GUARD:
        return [{"directory": p.directory, "step": p.step}
                for p in _PENDING]


def wait(deadline: float = float("inf"),
         directory: str | None = None) -> dict | None:
    """Wait for the pending save (only if it writes into `directory`,
    when given) until `deadline` (`time.monotonic()`), and return its
    result; None when nothing is pending.

    Raises:
        KerasmeshError: the save's own `checkpoint_*` error when it
            failed (it is then no longer pending); `timeout` when it is
            still running at the deadline (it stays pending).
        KeyboardInterrupt: on Ctrl-C while waiting (it stays pending).
    """
    with _GUARD:
        found = [p for p in _PENDING
                 if directory is None or p.directory == directory]
    if not found:
        return None
    save = found[0]
    join(save.done, deadline, f"the background save of step {save.step}")
    with _GUARD:
        if save in _PENDING:
            _PENDING.remove(save)
    if save.error is not None:
        raise save.error
    return save.result


def join(done: threading.Event, deadline: float, what: str) -> None:
    """Wait for `done` until `deadline`, in slices, so that Ctrl-C stops
    the wait (Python handles signals in the main thread between them).

    Raises:
        KerasmeshError: `timeout`, naming `what`.
    """
    while not done.wait(max(0.0, min(_SLICE, deadline - time.monotonic()))):
        if time.monotonic() >= deadline:
            raise KerasmeshError(
                kinds.TIMEOUT, "A checkpoint call must end within its "
                "`timeout`.",
                x=f"Waiting for {what} took longer.",
                i="It goes on in the background: wait for it with "
                  "`checkpoint_wait()`, with a larger `timeout`.")


def bounded(fn: Callable[[], Any], deadline: float, what: str) -> Any:
    """`fn()` in a thread of its own, waited for until `deadline`; at the
    deadline (or on Ctrl-C) it is no longer waited for, and its result is
    dropped (`fn` must change nothing a caller sees until it returns)."""
    out: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - raised below
            out["error"] = e
        finally:
            done.set()

    threading.Thread(target=run, name="kerasmesh-checkpoint-read",
                     daemon=True).start()
    join(done, deadline, what)
    if "error" in out:
        raise out["error"]
    return out["value"]


def deadline_of(timeout: float | None) -> float:
    """The `time.monotonic()` at which `timeout` seconds from now end."""
    return float("inf") if timeout is None else \
        time.monotonic() + float(timeout)


def _at_exit() -> None:
    """Finish the pending save before Python ends, and say when it failed
    (nobody is left to raise it to)."""
    try:
        wait()
    except BaseException as e:  # noqa: BLE001 - reported, then exit goes on
        print(f"kerasmesh: a background checkpoint save failed: {e}",
              file=sys.stderr)


def _finish_at_exit() -> None:
    """Have Python's exit wait for the pending save (once). Python's
    thread pools refuse work once its exit has begun, and Orbax's write
    needs them: so the wait is registered with `threading`'s exit
    functions, which run before those pools close (in reverse order of
    registration: registered after Orbax started its pools, it runs
    before they close), else with `atexit`."""
    if _REGISTERED:
        return
    _REGISTERED.append(True)
    register = getattr(threading, "_register_atexit", atexit.register)
    register(_at_exit)


_REGISTERED: list[bool] = []
