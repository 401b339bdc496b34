"""A signal's handler read as the operating system has it and put back,
whatever Python's `signal` module installed meanwhile."""

import signal

from kerasmesh.core.os_signals import action_handler, os_action, \
    set_os_action


def test_an_os_handler_is_read_and_put_back():
    before = signal.getsignal(signal.SIGUSR1)
    try:
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        ignored = os_action(signal.SIGUSR1)
        assert action_handler(ignored) == int(signal.SIG_IGN)
        signal.signal(signal.SIGUSR1, lambda *a: None)  # Python's C handler
        assert action_handler(os_action(signal.SIGUSR1)) not in (0, 1)
        assert set_os_action(signal.SIGUSR1, ignored)
        assert action_handler(os_action(signal.SIGUSR1)) == \
            int(signal.SIG_IGN)
    finally:
        signal.signal(signal.SIGUSR1, before)
