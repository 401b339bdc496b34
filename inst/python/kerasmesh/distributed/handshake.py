"""kerasmesh's handshake: every process checks in before JAX connects.

JAX's coordination service lets a second process with the same id wait
until it is killed (SIGABRT), accepts processes that disagree on the
number of processes, and crashes (SIGSEGV) when its port is taken. So
before JAX, process 0 listens on the coordinator's port itself, and every
other process tells it its id and count: a taken port, a duplicate id or a
different count is an error in every process, within the timeout. Then
process 0 lets the port go and JAX's service takes it over.

The exchange is one JSON line each way: `{"process_id", "num_processes",
"token"}` in, `{"ok": true}` or `{"ok": false, "error": ...}` out.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import time

from ..core.errors import KerasmeshError
from ..core import kinds

# Seconds process 0 keeps answering latecomers after it found a problem.
LINGER_S = 2.0
# Seconds process 0 still listens after every id checked in, to catch a
# second process with an id already taken (started a little later).
SETTLE_S = 1.5
_MAGIC = "kerasmesh-handshake-1"
# How many of the processes that did not come a timeout error names.
SHOWN_MISSING = 10


class HandshakeTimeout(Exception):
    """Not every process checked in before the deadline.

    Attributes:
        missing: the first `SHOWN_MISSING` ids process 0 still waited for
            (empty for the others).
        missing_count: how many it waited for.
    """

    def __init__(self, missing: list[int] = (), missing_count: int = 0):
        super().__init__("handshake timeout")
        self.missing = list(missing)
        self.missing_count = max(missing_count, len(self.missing))


def _listener(host: str | None, port: int) -> socket.socket:
    """A listening socket on host:port ([::] when host is None)."""
    if host is None:
        family, addr = (socket.AF_INET6, ("::", port)) if socket.has_ipv6 \
            else (socket.AF_INET, ("0.0.0.0", port))
    else:
        bare = host.strip("[]")
        family = socket.AF_INET6 if ":" in bare else socket.AF_INET
        addr = (bare, port)
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if family == socket.AF_INET6 and host is None:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(64)
    except OSError:
        sock.close()
        raise
    return sock


def port_in_use_error(port: int, host: str | None, error: OSError
                      ) -> KerasmeshError:
    where = f"{host}:{port}" if host else f"port {port}"
    return KerasmeshError(
        kinds.DISTRIBUTED_CONNECT,
        f"Can't start the coordinator: port {port} is in use.",
        x=f"Binding {where} failed: {error.strerror or error}.",
        i="Choose a free port in `coordinator_address` (or the "
          "launcher's `JAX_COORDINATOR_PORT`).")


def _send(conn: socket.socket, message: dict) -> None:
    try:
        conn.sendall((json.dumps(message) + "\n").encode())
    except OSError:
        pass


def _read_line(conn: socket.socket, deadline: float) -> str | None:
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        conn.settimeout(min(left, 1.0))
        try:
            chunk = conn.recv(4096)
        except TimeoutError:
            continue
        except OSError:
            return None
        if not chunk or len(data) > 65536:
            return None
        data += chunk
    return data.split(b"\n", 1)[0].decode(errors="replace")


def serve(host: str | None, port: int, num_processes: int,
          deadline: float) -> None:
    """Process 0: wait for processes 1, ..., n - 1 to check in.

    Raises:
        KerasmeshError: `distributed_connect` (port in use, a duplicate id,
            a different count).
        HandshakeTimeout: not every process came in time.
    """
    try:
        server = _listener(host, port)
    except OSError as e:
        raise port_in_use_error(port, host, e) from e
    waiting: dict[int, socket.socket] = {}
    problem: KerasmeshError | None = None
    try:
        server.settimeout(0.2)
        while len(waiting) < num_processes - 1:
            if time.monotonic() >= deadline:
                # The first few ids only: the count may be large.
                missing = itertools.islice(
                    (i for i in range(1, num_processes) if i not in waiting),
                    SHOWN_MISSING)
                raise HandshakeTimeout(list(missing),
                                       num_processes - 1 - len(waiting))
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            hello = _parse(_read_line(conn, min(deadline,
                                                time.monotonic() + 5)))
            problem = _check(hello, waiting, num_processes)
            if problem is not None:
                _send(conn, {"ok": False, "error": problem.message,
                             "bullets": problem.bullets})
                conn.close()
                break
            waiting[hello["process_id"]] = conn
            if len(waiting) == num_processes - 1:
                problem = _settle(server, waiting, num_processes,
                                  min(deadline, time.monotonic() + SETTLE_S))
        if problem is None:
            for conn in waiting.values():
                _send(conn, {"ok": True})
            _drain(waiting.values(), time.monotonic() + 2)
            return
        for conn in waiting.values():
            _send(conn, {"ok": False, "error": problem.message,
                         "bullets": problem.bullets})
        _answer_latecomers(server, problem, time.monotonic() + LINGER_S)
        raise problem
    finally:
        for conn in waiting.values():
            conn.close()
        server.close()


def _parse(line: str | None) -> dict | None:
    try:
        hello = json.loads(line) if line else None
    except ValueError:
        return None
    if not isinstance(hello, dict) or hello.get("magic") != _MAGIC:
        return None
    return hello


def _check(hello: dict | None, waiting: dict, num_processes: int
           ) -> KerasmeshError | None:
    if hello is None:
        return KerasmeshError(
            kinds.DISTRIBUTED_CONNECT,
            "A process that is not kerasmesh's connected to the coordinator.",
            i="Start every process with `distributed_initialize()`.")
    pid, n = hello.get("process_id"), hello.get("num_processes")
    if n != num_processes:
        return KerasmeshError(
            kinds.DISTRIBUTED_CONNECT,
            "The processes disagree on the number of processes.",
            x=f"Process 0 counts {num_processes}; process {pid} "
              f"counts {n}.",
            i="Start every process with the same `num_processes`.")
    if pid == 0 or pid in waiting:
        return KerasmeshError(
            kinds.DISTRIBUTED_CONNECT,
            f"Two processes claim process id {pid}.",
            x="Process 0 runs the coordinator and another process "
              "says it is process 0." if pid == 0 else
              f"Process id {pid} checked in twice.",
            i="Give each process its own `process_id`, from 0 to "
              f"{num_processes - 1}.")
    return None


def _settle(server, waiting: dict, num_processes: int, until: float
            ) -> KerasmeshError | None:
    """After all came: a problem with anyone who still comes, or None."""
    while time.monotonic() < until:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        hello = _parse(_read_line(conn, time.monotonic() + 2))
        problem = _check(hello, waiting, num_processes)
        problem = problem or _check(None, waiting, num_processes)
        _send(conn, {"ok": False, "error": problem.message,
                     "bullets": problem.bullets})
        conn.close()
        return problem
    return None


def _answer_latecomers(server, problem, until: float) -> None:
    while time.monotonic() < until:
        try:
            conn, _ = server.accept()
        except (TimeoutError, OSError):
            continue
        _read_line(conn, time.monotonic() + 0.5)
        _send(conn, {"ok": False, "error": problem.message,
                     "bullets": problem.bullets})
        conn.close()


def _drain(conns, until: float) -> None:
    """Let the peers close first, so that the port is free for JAX."""
    for conn in conns:
        _read_line(conn, until)


def check_in(host: str, port: int, process_id: int, num_processes: int,
             deadline: float) -> None:
    """Processes 1, ...: check in with process 0 and wait for its answer.

    Raises:
        KerasmeshError: process 0's verdict (`distributed_connect`).
        HandshakeTimeout: process 0 could not be reached in time.
    """
    hello = {"magic": _MAGIC, "process_id": process_id,
             "num_processes": num_processes, "token": os.getpid()}
    bare = host.strip("[]")
    unanswered = 0
    while True:
        if time.monotonic() >= deadline:
            if unanswered:
                raise _no_handshake(host, port, process_id)
            raise HandshakeTimeout()
        try:
            conn = socket.create_connection(
                (bare, port), timeout=max(0.1, min(
                    2.0, deadline - time.monotonic())))
        except OSError:
            time.sleep(0.1)
            continue
        try:
            _send(conn, hello)
            answer = _read_line(conn, deadline)
        finally:
            conn.close()
        if answer is None:
            unanswered += 1
            if time.monotonic() >= deadline:
                raise _no_handshake(host, port, process_id)
            time.sleep(0.1)
            continue
        try:
            verdict = json.loads(answer)
        except ValueError:
            verdict = None
        if not isinstance(verdict, dict):
            raise KerasmeshError(
                kinds.DISTRIBUTED_CONNECT,
                f"The coordinator at {host}:{port} does not answer as "
                "kerasmesh's.",
                i="Is another program using the port, or a run "
                  "already started there?")
        if verdict.get("ok"):
            return
        raise KerasmeshError(kinds.DISTRIBUTED_CONNECT,
                             str(verdict.get("error")),
                             [tuple(b) for b in verdict.get("bullets", [])])


def _no_handshake(host: str, port: int, process_id: int) -> KerasmeshError:
    return KerasmeshError(
        kinds.DISTRIBUTED_CONNECT,
        f"The coordinator at {host}:{port} answers, but not as kerasmesh's.",
        x="A run may have started there without this process (is "
          f"another process using process id {process_id}?), or "
          "another program holds the port.",
        i="Give each process its own `process_id`, and start them "
          "all within the timeout.")
