"""Python threads that keep running while R runs R code.

reticulate 1.39 and later hand Python's lock (the GIL) back whenever R's
main thread returns from Python to R, so a Python thread (a background
checkpoint save) runs beside R code, `Sys.sleep()` and R's prompt.
Earlier reticulate (Debian 12's 1.28) keeps the lock in R's main thread
for the whole session, and cannot give it up safely: R's garbage
collector releases Python objects without taking the lock. A Python
thread then runs only while R is inside a Python call: a background save
would stop where `save_checkpoint()` returned, holding its directory's
lock, until R next called Python.

`EventHook` keeps such threads running between `hold()` and `release()`,
through the two functions R's event loop calls in its main thread (R
calls no other thread's code):

* `R_PolledEvents`, which R calls while it evaluates R code, as often as
  it checks for Ctrl-C (thousands of times a second), and while it waits.
  Every `BUSY_TURN`-th call the hook lets go of Python's lock for
  `BUSY_USEC` microseconds (C's `usleep()`): a Python thread waiting for
  it takes it, runs until it waits for something or Python's switch
  interval (5 ms) passes, and R goes on, as it would beside Python code.
  (A mere `sched_yield()` was not enough: with the other core busy, R's
  thread took the lock back before the waiting thread was scheduled, and
  a save made no progress for 30 s.)
* `Rg_PolledEvents`, which R calls only while it waits (`Sys.sleep()`, a
  console waiting for input), every `POLL_USEC` microseconds while the
  hook is in place (`R_wait_usec`; R's tcltk package sets it for Tk's
  events the same way). There the hook gives the lock away for
  `WAIT_USEC` microseconds each time (C's `usleep()`): R has nothing to
  do meanwhile.

What threads do in C (writing files, checksums) runs without the lock
throughout. The calls in between go to the functions R had, which run
as before.

The functions run no Python code and nothing that runs Python's signal
handlers: reticulate's SIGINT handler calls back into R, and inside R's
event loop that loses a Ctrl-C, or unwinds R through Python's frames and
C++ ("terminate called after throwing an instance of
'Rcpp::LongjumpException'": R ends). `time.sleep()` and Python's locks
run those handlers when a signal cuts their wait short; C's own
`sched_yield()` and `usleep()`, called through ctypes (which lets go of
the lock around a C call), do not. The functions are made of functions
written in C (`next`, `map`, `itertools.cycle`, `operator.call`, `int`,
those two), called from a ctypes thunk in R's main thread, which holds the
lock. `release()` may run
in any thread (the saving thread, when it ends): R reads a function's
address once per call, and every function the hook ever installed stays
alive, so a call already under way finishes safely. The hook is released
at Python's exit too: its functions must never run once Python is gone.

What no hook reaches: one long C call in R that does not check for
Ctrl-C (a `system()` call waiting for a program, one long matrix
product); threads wait for it to return. Where R's event loop can't be
found in the process (a Python without R, R on Windows), nothing is
hooked and `hold()` says so.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import itertools
import operator
import threading

# R code: Python's lock lent every this many calls of R's event loop (a
# thousand times a second or so while R evaluates R code), for this many
# microseconds: long enough for a waiting thread to be scheduled and take
# it, short enough that R code runs a few percent slower at most.
BUSY_TURN = 8
BUSY_USEC = 200
# R waiting: its event loop polled every this many microseconds, and the
# lock lent for this many each time.
POLL_USEC = 1_000
WAIT_USEC = 2_000

_EVENT_FUNCTION = ctypes.CFUNCTYPE(None)
# R's own functions, called with the lock held, as R calls them.
_R_FUNCTION = ctypes.PYFUNCTYPE(None)
# R's event-loop functions, and the lending each gets: (variable, R's
# own calls between two lendings, the lending).
_HOOKS = (("R_PolledEvents", BUSY_TURN - 1, BUSY_USEC),
          ("Rg_PolledEvents", 1, WAIT_USEC))


class EventHook:
    """R's event loop, lending Python's lock to Python's threads between
    `hold()` (main thread) and `release()` (any thread). One per process
    (`HOOK`)."""

    def __init__(self):
        self._needed = False
        self._lock = threading.Lock()
        self._saved: tuple[list[int | None], int] | None = None
        self._installed: list[list[int]] = []
        self._alive: list[ctypes._CFuncPtr] = []  # for good: R may call

    def set_needed(self, needed: bool) -> None:
        """Whether R keeps Python's lock while it runs R code (reticulate
        before 1.39), as R's side of the bridge says when it starts."""
        self._needed = bool(needed)

    def hold(self) -> bool:
        """Keep Python's threads running while R runs, until `release()`.
        Returns whether the hook is in place (False where it is not
        needed, can't be installed, or outside the main thread)."""
        if not self._needed or \
                threading.current_thread() is not threading.main_thread():
            return False
        variables = self._variables()
        if variables is None:
            return False
        functions, wait = variables
        with self._lock:
            if self._saved is None:
                self._saved = ([f.value for f in functions], wait.value)
                lenders = [lending_function(f.value, own, lend)
                           for f, (_, own, lend) in zip(functions, _HOOKS)]
                self._alive.extend(lenders)
                addresses = [ctypes.cast(f, ctypes.c_void_p).value
                             for f in lenders]
                self._installed.append(addresses)
                for f, address in zip(functions, addresses):
                    f.value = address
                if wait.value <= 0 or wait.value > POLL_USEC:
                    wait.value = POLL_USEC
        return True

    def release(self) -> None:
        """Put back R's functions and polling interval. A function another
        package put in place after the hook's stays (it calls the hook's,
        which passes calls on)."""
        variables = self._variables()
        with self._lock:
            saved, self._saved = self._saved, None
            if saved is None or variables is None:
                return
            functions, wait = variables
            for f, ours, theirs in zip(functions, self._installed[-1],
                                       saved[0]):
                if f.value == ours:
                    f.value = theirs
            wait.value = saved[1]

    def _variables(self) -> tuple[list[ctypes.c_void_p],
                                  ctypes.c_int] | None:
        """R's event-loop functions (`_HOOKS`) and `R_wait_usec`, or None
        without R."""
        try:
            library = ctypes.PyDLL(None)
            return ([ctypes.c_void_p.in_dll(library, name)
                     for name, _, _ in _HOOKS],
                    ctypes.c_int.in_dll(library, "R_wait_usec"))
        except (OSError, ValueError, AttributeError):
            return None


def lending_function(previous: int | None, own: int,
                     lend_usec: int) -> ctypes._CFuncPtr:
    """A C function for R's event loop that calls R's `previous` one (or
    does nothing) `own` times, then lends Python's lock for `lend_usec`
    microseconds (or a moment), in turn, running no Python code (see the
    module's documentation)."""
    libc = ctypes.CDLL(None)  # functions of its own: argtypes are set
    libc.usleep.argtypes = [ctypes.c_uint]
    theirs = _R_FUNCTION(previous) if previous else int
    lend = functools.partial(libc.usleep, lend_usec) if lend_usec else \
        libc.sched_yield
    calls = [theirs] * own + [lend]
    turn = map(operator.call, itertools.cycle(calls))
    return _EVENT_FUNCTION(functools.partial(next, turn))


HOOK = EventHook()
atexit.register(HOOK.release)
