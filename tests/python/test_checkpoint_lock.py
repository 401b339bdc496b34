"""The checkpoint directory's lock: waiting is bounded and interruptible,
and a writer kept waiting is told who holds it."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from kerasmesh.checkpoint import lock as cl
from kerasmesh.core.errors import KerasmeshError

SHIM = os.path.join(os.path.dirname(__file__), "..", "..", "inst", "python")


def holding(directory):
    """A live process holding the directory's lock, until killed."""
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {SHIM!r})
        from kerasmesh.checkpoint import lock
        held = lock.acquire({directory!r}, time.monotonic() + 10)
        print("held", flush=True)
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


@pytest.fixture()
def held(tmp_path):
    proc = holding(str(tmp_path))
    yield str(tmp_path), proc
    proc.kill()
    proc.wait()


def test_a_held_lock_is_waited_for_until_the_deadline_then_named(held):
    d, proc = held
    start = time.monotonic()
    with pytest.raises(KerasmeshError) as info:
        cl.hold(d, time.monotonic() + 0.5)
    assert 0.5 <= time.monotonic() - start < 5
    assert info.value.kind == "checkpoint_lock"
    text = str(info.value)
    assert os.path.join(d, cl.LOCK_FILE) in text
    assert f"process {proc.pid} on host" in text


def test_a_lock_freed_while_waiting_is_taken(held):
    d, proc = held
    proc.kill()
    proc.wait()
    got = cl.hold(d, time.monotonic() + 5)
    assert got.fd is not None
    got.release()
    got.release()  # twice is harmless


def test_ctrl_c_stops_a_writer_waiting_for_the_lock(held):
    d, _ = held
    # Ctrl-C raises KeyboardInterrupt even where the child inherits SIGINT
    # ignored (a background job of a script, as in the Debian 13 check).
    code = textwrap.dedent(f"""
        import signal, sys, time
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.path.insert(0, {SHIM!r})
        from kerasmesh.checkpoint import lock
        print("waiting", flush=True)
        try:
            lock.acquire({d!r}, time.monotonic() + 100)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "waiting"
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert out.strip() == "interrupted"


@pytest.mark.parametrize("what", ["directory", "FIFO", "symbolic link"])
def test_a_lock_path_that_is_no_regular_file_is_named_for_what_it_is(
        tmp_path, what):
    path = tmp_path / cl.LOCK_FILE
    if what == "directory":
        path.mkdir()
    elif what == "FIFO":
        os.mkfifo(path)
    else:
        (tmp_path / "elsewhere").write_text("x")
        os.symlink(tmp_path / "elsewhere", path)
    with pytest.raises(KerasmeshError) as info:
        cl.hold(str(tmp_path), time.monotonic() + 1)
    assert info.value.kind == "checkpoint_directory"
    assert f"{path} is a {what}" in str(info.value) or \
        f"{path} is an {what}" in str(info.value)
    assert "space" not in str(info.value)


def test_the_holder_is_written_into_the_lock_file(tmp_path):
    got = cl.acquire(str(tmp_path), time.monotonic() + 1)
    try:
        assert cl.holder(str(tmp_path / cl.LOCK_FILE)).startswith(
            f"process {os.getpid()} on host ")
    finally:
        got.release()
    (tmp_path / "other.lock").write_text("[[[")
    assert cl.holder(str(tmp_path / "other.lock")) == \
        "a writer that did not say who it is"
