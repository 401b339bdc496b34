"""Orbax's log kept off the console while kerasmesh saves or reads, and
only then."""

import logging
import os
import sys

from kerasmesh.checkpoint import orbax_log


def record(pathname, name="absl", msg="_SignalingThread.run() raised"):
    return logging.LogRecord(name, logging.ERROR, pathname, 1, msg, None,
                             None)


def local_quiet():
    """An OrbaxQuiet that is not installed on the process's loggers."""
    quiet = orbax_log.OrbaxQuiet()
    quiet._installed = True
    return quiet


ORBAX = os.path.join(os.sep, "site-packages", "orbax", "checkpoint",
                     "_src", "futures", "future.py")


def test_orbaxs_records_are_dropped_only_while_quiet(monkeypatch):
    monkeypatch.setattr(orbax_log, "GRACE", 0.0)
    quiet = local_quiet()
    mine = record(os.path.join(os.sep, "app", "train.py"))
    assert quiet.filter(record(ORBAX))
    quiet.hold()
    assert not quiet.filter(record(ORBAX))
    assert not quiet.filter(record(
        "base_events.py", name="asyncio",
        msg="Task exception was never retrieved\nfuture: <Task ...>"))
    assert quiet.filter(mine)
    quiet.release()
    assert quiet.filter(record(ORBAX))


def test_the_grace_after_a_save_covers_threads_that_report_late(
        monkeypatch):
    monkeypatch.setattr(orbax_log, "GRACE", 60.0)
    quiet = local_quiet()
    quiet.hold()
    quiet.release()
    assert not quiet.filter(record(ORBAX))


def test_a_closed_event_loop_is_not_printed_while_quiet(monkeypatch):
    seen = []
    monkeypatch.setattr(orbax_log, "GRACE", 0.0)
    quiet = local_quiet()
    hook = orbax_log._ExceptHook(lambda *a: seen.append(a[1]), quiet)

    def call_soon_threadsafe():
        raise RuntimeError("Event loop is closed")

    try:
        call_soon_threadsafe()
    except RuntimeError as e:
        error, tb = e, sys.exc_info()[2].tb_next
    quiet.hold()
    hook(RuntimeError, error, tb)
    assert seen == []
    quiet.release()
    hook(RuntimeError, error, tb)
    assert seen == [error]
    other = ValueError("mine")
    quiet.hold()
    hook(ValueError, other, None)
    quiet.release()
    assert seen == [error, other]
