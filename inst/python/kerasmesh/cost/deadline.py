"""Wall-time deadlines that stop Python code where it stands.

`layout_cost()`'s `timeout` counts from the call: building the model,
tracing the step and compiling it. Compiling runs in a thread that is
simply no longer waited for (`cost._compile()`); building and tracing run
in the main thread, in Python code (a layer's `call()`) or in R (the
builder), neither of which can be waited for from outside. So
`Deadline.armed()` has a watcher thread send SIGALRM to the main thread at
the deadline, and a handler raise `DeadlinePassed` there: a `time.sleep()`
or any Python bytecode stops at once. What it can't stop is one C call
that does not return to Python (one long NumPy or XLA call): the deadline
is raised when it returns. R code is stopped by R's own `setTimeLimit()`
(the R side sets it around the builder). Where Python can't raise (the
signal lands in a garbage collector's callback or a `__del__`, which
Python reports as "Exception ignored"), the report is kept off the
console and the signal sent again.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from ..core.errors import KerasmeshError
from ..core import kinds
from ..core import heap


class DeadlinePassed(BaseException):
    """Raised in the main thread at the deadline.

    A BaseException, like KeyboardInterrupt, so that code which turns
    every `Exception` into an error of its own (Keras's, kerasmesh's
    shape checks) lets it through.
    """

    def __init__(self, *args):
        super().__init__(*(args or ("kerasmesh stopped this code: the "
                                    "call's timeout passed.",)))


class _Alarm:
    """What the signal handler, the unraisable hook and the watcher thread
    of one `Deadline.armed()` share: whether the alarm may still raise
    (`armed`), whether the watcher sent SIGALRM (`sent`) and the handler
    ran since (`handled`), and whether Python swallowed the raise
    (`swallowed`: it landed where Python reports instead of raising)."""

    def __init__(self):
        self.armed = True
        self.sent = False
        self.handled = False
        self.swallowed = False


class Deadline:
    """A wall-time deadline `seconds` from now.

    Attributes:
        fired: whether `DeadlinePassed` was raised.
        phase: what was running, for the error message ("building the
            model", "tracing the step"); callers set it as they go.
    """

    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds
        self.fired = False
        self.phase = "starting"

    def left(self) -> float:
        """Seconds until the deadline (negative after it)."""
        return self.end - time.monotonic()

    def passed(self) -> bool:
        return self.fired or self.left() <= 0

    @contextlib.contextmanager
    def armed(self) -> Iterator[Deadline]:
        """Raise `DeadlinePassed` in the main thread at the deadline.

        Outside the main thread, or when SIGALRM has a handler Python did
        not set, nothing is armed (callers still check `passed()`). The
        previous handler (and `sys.unraisablehook`) is back on exit, after
        the watcher has stopped and any signal it sent has been handled.
        """
        if threading.current_thread() is not threading.main_thread() or \
                not hasattr(signal, "pthread_kill") or \
                signal.getsignal(signal.SIGALRM) is None:
            yield self
            return
        alarm = _Alarm()

        def handler(signum, frame):
            alarm.handled = True
            if alarm.armed and (not self.fired or alarm.swallowed):
                self.fired, alarm.swallowed = True, False
                raise DeadlinePassed()

        unraisable = sys.unraisablehook

        def swallowed(report: Any) -> None:
            if isinstance(report.exc_value, DeadlinePassed):
                alarm.swallowed = True
            else:
                unraisable(report)

        stop = threading.Event()
        previous = signal.signal(signal.SIGALRM, handler)
        sys.unraisablehook = swallowed
        watcher = threading.Thread(
            target=_watch, args=(self, alarm, stop, threading.get_ident()),
            daemon=True, name="kerasmesh-deadline")
        try:
            watcher.start()
            yield self
        finally:
            # Nested, so that the cleanup runs even when the deadline
            # lands on its first line (the handler raises only once).
            try:
                alarm.armed = False
            finally:
                alarm.armed = False
                stop.set()
                watcher.join()
                _wait_until(lambda: alarm.handled or not alarm.sent, 1.0)
                signal.signal(signal.SIGALRM, previous)
                sys.unraisablehook = unraisable


def _watch(clock: Deadline, alarm: _Alarm, stop: threading.Event,
           main: int) -> None:
    """Send SIGALRM to thread `main` at `clock`'s deadline, unless
    `stop` is set first; again while the raise it makes is swallowed."""
    wait = max(clock.left(), 0)
    while not stop.wait(wait):
        alarm.sent, alarm.handled = True, False
        signal.pthread_kill(main, signal.SIGALRM)
        _wait_until(lambda: alarm.handled or stop.is_set(), 1.0)
        # A raise Python could not make reaches the unraisable hook when
        # the callback it landed in returns.
        if stop.wait(0.05) or not alarm.swallowed:
            return
        wait = 0


def _wait_until(done, seconds: float) -> None:
    """Poll `done()` for up to `seconds`, letting signal handlers run."""
    end = time.monotonic() + seconds
    while not done() and time.monotonic() < end:
        time.sleep(0.001)


# Compiles still running after their caller stopped waiting.
PENDING: list[threading.Thread] = []


# XLA's HLO passes (sharding propagation, SPMD partitioning, buffer
# assignment), which give the memory and the collectives, run as always;
# only LLVM's code generation is cut short, about halving compile time.
QUICK = {"xla_backend_optimization_level": 0,
         "xla_llvm_disable_expensive_passes": True}

# XLA's default CPU scheduler orders a step for concurrency: it runs each
# recomputation of a rematerialized block as early as it can, so on CPU
# rematerialization saves no memory, and the temporaries exceed what the
# memory-aware schedulers of accelerators give. kerasmesh's CPU compiles
# use XLA's memory-optimized CPU scheduler instead.
MEMORY_SCHEDULE = {
    "xla_cpu_scheduler_type": "CPU_SCHEDULER_TYPE_MEMORY_OPTIMIZED"}

# XLA's CPU pipeline merges every all-reduce of a step into one
# (`cpu-all-reduce-combiner`): the full-size gradients of all the weights
# split over the batch's axis are then alive at once, where a GPU merges
# all-reduces only up to a few MiB and turns each one that devices slice
# into a reduce-scatter (`hlo.parse_collectives()` counts those as such).
# A 70B model's temporaries on 32 devices: 170 GB merged. kerasmesh's CPU
# compiles keep the all-reduces apart.
APART_ALL_REDUCES = {"xla_disable_hlo_passes": "cpu-all-reduce-combiner"}


# How often, in seconds, the memory a running compile has freed goes back
# to the operating system: a 70B step's compile on 32 devices peaks at
# 1.6 GiB of this process so, 1.8 GiB otherwise, at the same speed.
GIVE_BACK_EVERY = 0.5


def compile_within(lowered: Any, clock: Deadline, timeout: float,
                   options: dict | None = None) -> Any:
    """`lowered.compile()` with XLA's `options` (`target.Target`'s),
    waiting until the deadline at most.

    XLA's compiler can't be interrupted from Python: it runs in a thread,
    and on a timeout we stop waiting and drop its result. The thread is not
    a daemon, so Python's exit waits for it (a process that exits while
    XLA compiles aborts in XLA's C++ code); R calls `wait_for_compiles()`
    when it exits, for the same reason. What the process freed before
    the compile, and what the compile frees while it runs, go back to the
    operating system every `GIVE_BACK_EVERY` seconds (`heap.give_back()`).

    Raises:
        KerasmeshError: kind `timeout`; XLA's own error as it is.
    """
    if clock.left() <= 0:
        raise timeout_error(timeout, "Tracing the step used up the time; "
                                     "XLA did not start compiling.")
    box: dict[str, Any] = {}
    options = dict(options or {})

    def work() -> None:
        try:
            box["compiled"] = lowered.compile(compiler_options=options)
        except Exception as e:  # noqa: BLE001 - re-raised in the caller
            box["error"] = e

    worker = threading.Thread(target=work, name="kerasmesh-compile")
    heap.give_back()
    worker.start()
    while worker.is_alive() and clock.left() > 0:
        worker.join(min(GIVE_BACK_EVERY, max(clock.left(), 0)))
        heap.give_back()
    if worker.is_alive():
        PENDING.append(worker)
        raise timeout_error(timeout, "XLA was still compiling when the "
                                     "time ran out; it finishes in a "
                                     "background thread and its result "
                                     "is dropped.")
    if "error" in box:
        raise box["error"]
    return box["compiled"]


# Who ran out of time: the first words of its `timeout` error, and the
# way out. `layout_cost()` is the default; the search says its own.
COSTING = ("Costing the training step",
           "Raise `timeout`, or cost a smaller model or batch.")
SEARCHING = ("The search",
             "Raise `timeout`, or search with `blocks` or a smaller space "
             "(pin rules with `fixed`).")


def timeout_error(timeout: float, what: str,
                  task: tuple[str, str] = COSTING) -> KerasmeshError:
    """The `timeout` error of `task` (`COSTING` or `SEARCHING`), saying
    what ran."""
    doing, way_out = task
    return KerasmeshError(
        kinds.TIMEOUT, f"{doing} took longer than {timeout:g} s.",
        x=what, i=way_out)


def wait_for_compiles() -> int:
    """Wait for compiles left running by timeouts; return how many."""
    n = 0
    while PENDING:
        PENDING.pop().join()
        n += 1
    return n
