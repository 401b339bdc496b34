"""R's event loop lending Python's lock to Python's threads: installed
only where R keeps the lock, R's functions and polling interval put back,
R's functions called in between, and no Python code run in R's event
loop. R itself is stood in for by three variables of this process: that
threads run while R runs R code, sleeps and waits at its prompt is tested
in R, with reticulate 1.28 and 1.41 (test-checkpoint-background.R)."""

import ctypes
import sys
import threading

from kerasmesh.core import r_events


def address(function):
    return ctypes.cast(function, ctypes.c_void_p).value if function \
        else None


class FakeR(r_events.EventHook):
    """An EventHook over stand-ins for R's `R_PolledEvents`,
    `Rg_PolledEvents` and `R_wait_usec`, which R calls through as its
    event loop does."""

    def __init__(self, previous=None, wait=0):
        super().__init__()
        self.functions = [ctypes.c_void_p(address(previous)),
                          ctypes.c_void_p(address(previous))]
        self.wait = ctypes.c_int(wait)

    def _variables(self):
        return self.functions, self.wait

    def poll(self, which=0):
        """R's event loop: 0 while R evaluates R code, 1 while it waits."""
        if self.functions[which].value:
            r_events._EVENT_FUNCTION(self.functions[which].value)()


def test_nothing_is_hooked_where_r_gives_the_lock_back():
    hook = FakeR()
    assert not hook.hold()
    assert [f.value for f in hook.functions] == [None, None]
    assert hook.wait.value == 0


def test_nothing_is_hooked_without_r_in_the_process():
    hook = r_events.EventHook()
    hook.set_needed(True)
    assert not hook.hold()
    hook.release()


def test_r_is_put_back_and_its_functions_called_in_between():
    calls = []
    previous = r_events._EVENT_FUNCTION(lambda: calls.append(1))
    hook = FakeR(previous, wait=100_000)
    hook.set_needed(True)
    assert hook.hold()
    assert hook.hold()  # once in place, it stays as it is
    assert all(f.value != address(previous) for f in hook.functions)
    assert hook.wait.value == r_events.POLL_USEC
    for _ in range(r_events.BUSY_TURN):
        hook.poll()
    assert len(calls) == r_events.BUSY_TURN - 1  # then one lending
    for _ in range(4):
        hook.poll(1)
    assert len(calls) == r_events.BUSY_TURN + 1  # every other call
    hook.release()
    assert [f.value for f in hook.functions] == [address(previous)] * 2
    assert hook.wait.value == 100_000
    hook.release()  # twice is harmless


def test_release_from_another_thread_puts_r_back():
    hook = FakeR()
    hook.set_needed(True)
    assert hook.hold()
    thread = threading.Thread(target=hook.release)
    thread.start()
    thread.join()
    assert [f.value for f in hook.functions] == [None, None]
    assert hook.wait.value == 0


def test_the_lending_functions_run_no_python_code():
    # Python code would run pending signal handlers (reticulate's calls
    # back into R): every call they make is to a function written in C.
    traced = []
    hook = FakeR()
    hook.set_needed(True)
    hook.hold()
    sys.setprofile(lambda frame, event, arg: traced.append(
        frame.f_code.co_name) if event == "call" else None)
    try:
        for _ in range(2 * r_events.BUSY_TURN):
            hook.poll()
            hook.poll(1)
    finally:
        sys.setprofile(None)
    hook.release()
    assert set(traced) == {"poll"}


def test_a_function_put_in_place_after_the_hooks_stays():
    hook = FakeR()
    hook.set_needed(True)
    hook.hold()
    theirs = r_events._EVENT_FUNCTION(lambda: None)
    hook.functions[0].value = address(theirs)
    hook.release()
    assert hook.functions[0].value == address(theirs)
    assert hook.functions[1].value is None
