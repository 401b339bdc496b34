"""The shim's start and end: R's warning function registered and
dropped, SIGPIPE ignored and put back (test_core_broken_pipes.py tests
the signal itself, in Pythons of their own)."""

from kerasmesh.core import broken_pipes, errors, session


def test_start_registers_r_warning_and_end_drops_it(monkeypatch):
    calls = []
    monkeypatch.setattr(broken_pipes, "ignore", lambda: calls.append("in"))
    monkeypatch.setattr(broken_pipes, "restore",
                        lambda: calls.append("out"))
    old = errors.set_r_warning(None)
    try:
        fn = object()
        session.start(fn)
        assert errors.set_r_warning(fn) is fn
        session.end()
        assert errors.set_r_warning(None) is None
    finally:
        errors.set_r_warning(old)
    assert calls == ["in", "out"]
