"""kerasmesh's handshake on 127.0.0.1: threads stand in for processes."""

import socket
import threading
import time

import pytest

from kerasmesh.distributed import handshake as h
from kerasmesh.core.errors import KerasmeshError


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(roles, timeout=10):
    """Run `roles` [(process_id, num_processes), ...] at once; process 0
    serves. Returns each role's outcome: None or the exception."""
    port = free_port()
    deadline = time.monotonic() + timeout
    out = [None] * len(roles)

    def role(i, pid, n):
        try:
            if pid == 0 and i == 0:
                h.serve("127.0.0.1", port, n, deadline)
            else:
                h.check_in("127.0.0.1", port, pid, n, deadline)
        except Exception as e:  # noqa: BLE001 - the outcome under test
            out[i] = e

    threads = [threading.Thread(target=role, args=(i, *r))
               for i, r in enumerate(roles)]
    threads[0].start()
    time.sleep(0.1)
    for t in threads[1:]:
        t.start()
    for t in threads:
        t.join(timeout + 10)
    assert not any(t.is_alive() for t in threads)
    return out


def test_processes_that_agree_check_in():
    assert run([(0, 3), (1, 3), (2, 3)]) == [None, None, None]


def test_a_duplicate_id_fails_every_process():
    out = run([(0, 2), (1, 2), (1, 2)])
    assert all(isinstance(e, KerasmeshError) for e in out)
    assert {e.kind for e in out} == {"distributed_connect"}
    assert all("process id 1" in e.message for e in out)


def test_a_process_claiming_id_0_fails_every_process():
    out = run([(0, 2), (0, 2)])
    assert all(isinstance(e, KerasmeshError) for e in out)


def test_disagreeing_counts_fail_every_process():
    out = run([(0, 2), (1, 3), (2, 3)])
    assert all(isinstance(e, KerasmeshError) for e in out)
    assert all("disagree" in e.message for e in out)
    assert "counts 2" in out[0].bullets[0][1]


def test_a_missing_process_times_out_naming_it():
    started = time.monotonic()
    out = run([(0, 3), (1, 3)], timeout=3)
    assert time.monotonic() - started < 10
    assert isinstance(out[0], h.HandshakeTimeout)
    assert out[0].missing == [2]
    assert isinstance(out[1], KerasmeshError) or \
        isinstance(out[1], h.HandshakeTimeout)


def test_a_port_in_use_is_an_error_naming_it():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(KerasmeshError) as info:
            h.serve("127.0.0.1", port, 2, time.monotonic() + 5)
    assert info.value.kind == "distributed_connect"
    assert str(port) in info.value.message


def test_a_coordinator_that_is_not_kerasmesh_is_named():
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]

        def close_connections():
            for _ in range(50):
                try:
                    other.settimeout(0.1)
                    conn, _ = other.accept()
                    conn.close()
                except OSError:
                    pass

        t = threading.Thread(target=close_connections)
        t.start()
        with pytest.raises(KerasmeshError) as info:
            h.check_in("127.0.0.1", port, 1, 2, time.monotonic() + 2)
        t.join()
    assert info.value.kind == "distributed_connect"
    assert f"127.0.0.1:{port}" in info.value.message


def test_the_port_is_free_again_after_the_handshake():
    port = free_port()
    deadline = time.monotonic() + 10
    t = threading.Thread(target=h.check_in,
                         args=("127.0.0.1", port, 1, 2, deadline))
    t.start()
    h.serve("127.0.0.1", port, 2, deadline)
    t.join()
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
