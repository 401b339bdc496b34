"""Ctrl-C during a shim call: Python's own SIGINT handler in place of
reticulate 1.28's (which calls R), its C handler kept, both put back."""

import _thread
import signal
import threading

import pytest

from kerasmesh.core import interrupts
from kerasmesh.core.os_signals import action_handler, os_action, \
    set_os_action


@pytest.fixture()
def reticulate_128():
    """SIGINT as reticulate 1.28 leaves it: a Python handler of module
    `rpytools.signals` (which would call R), and a C handler that is not
    Python's (here: ignored, so that a test can tell it apart)."""
    calls = []

    def _signal_handler(signum, frame):
        calls.append(signum)

    _signal_handler.__module__ = "rpytools.signals"
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    theirs = os_action(signal.SIGINT)
    signal.signal(signal.SIGINT, _signal_handler)
    set_os_action(signal.SIGINT, theirs)
    yield _signal_handler, calls
    signal.signal(signal.SIGINT, signal.default_int_handler)


def test_a_shim_call_raises_ctrl_c_without_calling_r(reticulate_128):
    handler, calls = reticulate_128
    with pytest.raises(KeyboardInterrupt):
        with interrupts.shim_interrupts():
            assert signal.getsignal(signal.SIGINT) is \
                signal.default_int_handler
            # reticulate's C half stays: it marks the interrupt for R.
            assert action_handler(os_action(signal.SIGINT)) == \
                int(signal.SIG_IGN)
            _thread.interrupt_main()  # what reticulate's C handler does
            for _ in range(1000):
                pass  # Python runs the handler between bytecodes
    assert calls == []
    assert signal.getsignal(signal.SIGINT) is handler
    assert action_handler(os_action(signal.SIGINT)) == int(signal.SIG_IGN)


def test_both_halves_are_back_after_a_call_that_ends_normally(
        reticulate_128):
    handler, _ = reticulate_128
    with interrupts.shim_interrupts():
        pass
    assert signal.getsignal(signal.SIGINT) is handler
    assert action_handler(os_action(signal.SIGINT)) == int(signal.SIG_IGN)


def test_nothing_changes_where_sigint_is_not_reticulates():
    before = signal.getsignal(signal.SIGINT)
    with interrupts.shim_interrupts():
        assert signal.getsignal(signal.SIGINT) is before


def test_nothing_changes_outside_the_main_thread(reticulate_128):
    handler, _ = reticulate_128
    seen = []

    def call():
        with interrupts.shim_interrupts():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=call)
    thread.start()
    thread.join()
    assert seen == [handler]
