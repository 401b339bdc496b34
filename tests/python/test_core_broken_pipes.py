"""SIGPIPE ignored as Python ignores it, and put back. Each case runs in a
Python of its own: the signal's disposition belongs to the process."""

import os
import subprocess
import sys
import textwrap

SHIM = os.path.join(os.path.dirname(__file__), "..", "..", "inst", "python")


def _run(code):
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "PYTHONPATH": SHIM}, capture_output=True,
        text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_a_handler_that_is_not_python_is_replaced_and_put_back():
    # SIG_DFL stands for R's handler: one Python did not set.
    assert _run("""
        import signal
        from kerasmesh.core import broken_pipes as bp
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        print(bp.ignore(), bp.os_handler(), bp.ignore())
        print(bp.restore(), bp.os_handler(), bp.restore())
        print(bp.ignore(), bp.os_handler())
    """) == ["True", "1", "False", "True", "0", "False", "True", "1"]


def test_a_write_to_a_closed_pipe_in_a_thread_is_a_python_error():
    assert _run("""
        import os, signal, threading
        from kerasmesh.core import broken_pipes as bp
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        bp.ignore()
        out = []
        def write():
            r, w = os.pipe()
            os.close(r)
            try:
                os.write(w, b"x")
            except BrokenPipeError:
                out.append("BrokenPipeError")
        t = threading.Thread(target=write)
        t.start()
        t.join()
        print(*out)
    """) == ["BrokenPipeError"]


def test_ignored_already_or_a_python_handler_is_left_alone():
    assert _run("""
        import signal
        from kerasmesh.core import broken_pipes as bp
        print(bp.ignore(), bp.os_handler())
        signal.signal(signal.SIGPIPE, lambda *a: None)
        print(bp.ignore(), callable(signal.getsignal(signal.SIGPIPE)))
        print(bp.restore())
    """) == ["False", "1", "False", "True", "False"]


def test_outside_the_main_thread_nothing_changes():
    assert _run("""
        import signal, threading
        from kerasmesh.core import broken_pipes as bp
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        out = []
        t = threading.Thread(target=lambda: out.append(bp.ignore()))
        t.start()
        t.join()
        print(*out, bp.os_handler())
    """) == ["False", "0"]
