"""Connecting to JAX's distributed runtime without hangs or crashes.

`connect()` runs kerasmesh's handshake (see `handshake.py`), then
`jax.distributed.initialize()` with the coordinator bound where asked,
gloo listening on the same interface, JAX's C++ logging quiet unless
asked, and errors instead of process-ending aborts (`_CatchingRuntime`).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from . import handshake
from ..core.errors import KerasmeshError
from .addresses import (ENV_ADDRESSES, ENV_NUM_PROCESSES, ENV_PROCESS_ID,
                        parse_address)
from ..core import kinds

# Seconds the coordination client waits beyond `initialization_timeout`
# before it gives up (measured on jaxlib 0.10.2: timeout + 5 s). JAX gets
# the timeout less this margin, so that a missing peer is reported after
# about `timeout` seconds in all.
JAX_CONNECT_MARGIN_S = 5
# absl's levels: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL.
ABSL_QUIET, ABSL_VERBOSE = 2, 0


def jax_timeout(timeout: float) -> int:
    """`initialization_timeout` for JAX so that it gives up after `timeout`."""
    return max(1, int(timeout) - JAX_CONNECT_MARGIN_S)


def set_cpp_logging(verbose: bool) -> None:
    """Show JAX/XLA's C++ warnings (coordination service, barriers) or not.

    Errors and fatal messages are always shown.
    """
    try:
        from jax._src.lib import utils
        utils.absl_set_min_log_level(ABSL_VERBOSE if verbose else ABSL_QUIET)
    except (ImportError, AttributeError):  # pragma: no cover - other jaxlib
        pass


class _CatchingRuntime:
    """Stands in for jaxlib's `_jax` module inside `jax.distributed`.

    jaxlib's coordination client terminates the whole process (LOG(FATAL))
    when it reports an error, such as a peer that does not connect before
    the timeout, unless it is given a `missed_heartbeat_callback`. This
    proxy adds one to the client JAX creates, so the failed connection
    raises in `client.connect()` instead. (jaxlib 0.10.2 cannot pass the
    status to Python: `connect()` then raises `RuntimeError: std::bad_cast`,
    and after a successful connection a later error still ends the process,
    as JAX intends: peers must not wait forever on a dead process.)
    """

    def __init__(self, runtime: Any, state: dict):
        self._runtime = runtime
        self._state = state

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    def get_distributed_runtime_client(self, *args, **kwargs):
        state = self._state

        def on_error(status=None, *_):
            if state.get("connected"):
                sys.stderr.write(
                    "kerasmesh: the JAX distributed runtime reported a fatal "
                    f"error: {status}\n")
                sys.stderr.flush()
                os.abort()
            state["errors"].append(str(status))

        kwargs["missed_heartbeat_callback"] = on_error
        return self._runtime.get_distributed_runtime_client(*args, **kwargs)


def _reset_runtime(global_state: Any) -> None:
    """Forget a half-made connection so that `initialize()` can run again."""
    for name in ("preemption_sync_manager", "client", "service"):
        part = getattr(global_state, name, None)
        if part is not None:
            try:
                part.shutdown()
            except Exception:  # noqa: BLE001 - already failed; just let go
                pass
            setattr(global_state, name, None)
    global_state.process_id = 0
    global_state.num_processes = 1
    global_state.coordinator_address = None


class _GlooOnHost:
    """Stands in for jaxlib's `_jax` in `xla_bridge`: gloo on one host.

    JAX creates gloo's TCP device without a host, so gloo listens on the
    address the machine's name resolves to. With a bind host, it listens
    there instead (127.0.0.1 for `launch_local()`).
    """

    def __init__(self, runtime, host: str):
        self._runtime = runtime
        self._host = host

    def __getattr__(self, name: str):
        return getattr(self._runtime, name)

    def make_gloo_tcp_collectives(self, distributed_client, hostname=None,
                                  interface=None):
        return self._runtime.make_gloo_tcp_collectives(
            distributed_client=distributed_client,
            hostname=hostname or self._host, interface=interface)


def _start_backend_with_gloo_on(host: str) -> None:
    """Create JAX's CPU backend now, its gloo listening on `host`."""
    import jax
    import jax._src.xla_bridge as xla_bridge

    runtime = xla_bridge._jax
    xla_bridge._jax = _GlooOnHost(runtime, host)
    try:
        jax.devices()
    finally:
        xla_bridge._jax = runtime


def connect(args: dict, timeout: int, bind: tuple | None,
            verbose: bool) -> None:
    """Join the run described by `args` (from `resolve_arguments()`).

    Args:
        args: `coordinator_address`, `num_processes`, `process_id`,
            `launcher` (None: JAX detects them).
        timeout: seconds for every process to check in and connect.
        bind: (host, port) the coordinator listens on; host None is every
            interface, as JAX's default.
        verbose: show JAX's C++ warnings.

    Raises:
        KerasmeshError: `distributed_connect`, `distributed_timeout`,
            `distributed_argument`.
    """
    import jax

    set_cpp_logging(verbose)
    started = time.monotonic()
    deadline = started + timeout
    address, n, pid = (args["coordinator_address"], args["num_processes"],
                       args["process_id"])
    bind_address = None
    if address is not None:
        host, port = parse_address(address)
        bind = bind or (None, port)
        bind_address = f"{bind[0] or '[::]'}:{bind[1]}"
        try:
            if pid == 0:
                handshake.serve(bind[0], bind[1], n, deadline)
            else:
                handshake.check_in(host, port, pid, n, deadline)
        except handshake.HandshakeTimeout as e:
            raise _timeout_error(args, timeout, time.monotonic() - started,
                                 e.missing, e.missing_count) from None
    if jax.config.jax_cpu_collectives_implementation is None:
        # CPU devices of different processes talk through gloo.
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    left = max(deadline - time.monotonic(), 10)
    _initialize_jax(address, n, pid, bind_address, left, args, timeout)
    if bind is not None and bind[0] is not None and \
            jax.config.jax_cpu_collectives_implementation == "gloo":
        _start_backend_with_gloo_on(bind[0].strip("[]"))


def _initialize_jax(address, n, pid, bind_address, left: float, args: dict,
                    timeout: int) -> None:
    """`jax.distributed.initialize()` that raises instead of aborting."""
    import jax
    import jax._src.distributed as jax_distributed

    state = {"errors": [], "connected": False}
    runtime = jax_distributed._jax
    jax_distributed._jax = _CatchingRuntime(runtime, state)
    started = time.monotonic()
    # With the three values known, JAX must not look for a cluster itself
    # (its Kubernetes detection would ask the cluster's API).
    detection = "deactivate" if address is not None else None
    try:
        jax.distributed.initialize(
            coordinator_address=address, num_processes=n, process_id=pid,
            coordinator_bind_address=bind_address,
            cluster_detection_method=detection,
            initialization_timeout=jax_timeout(left))
        state["connected"] = True
    except Exception as e:  # noqa: BLE001 - translated below
        elapsed = time.monotonic() - started
        _reset_runtime(jax_distributed.global_state)
        raise _connect_error(e, state["errors"], args, timeout, left,
                             elapsed) from e
    finally:
        jax_distributed._jax = runtime


def _where(args: dict) -> str:
    address = args.get("coordinator_address")
    where = f"the coordinator at {address}" if address else "the coordinator"
    launcher = args.get("launcher")
    return f"{where} (found by {launcher})" if launcher else where


def _timeout_error(args: dict, timeout: int, elapsed: float,
                   missing: list[int], count: int = 0) -> KerasmeshError:
    pid, n = args["process_id"], args["num_processes"]
    if pid == 0:
        count = max(count, len(missing))
        ids = ", ".join(map(str, missing))
        if count > len(missing):
            ids += f" (and {count - len(missing):,} more)"
        return KerasmeshError(
            kinds.DISTRIBUTED_TIMEOUT,
            f"Not all {n} processes connected to {_where(args)} within the "
            f"timeout of {timeout} s.",
            x=f"This process waited {elapsed:.0f} s as the coordinator "
              f"(process 0); process{'es' if count > 1 else ''} "
              f"{ids} did not come.",
            i="Start every process with the same coordinator address "
              "and its own process id, or raise `timeout`.")
    return KerasmeshError(
        kinds.DISTRIBUTED_TIMEOUT,
        f"Can't reach {_where(args)} within the timeout of {timeout} s.",
        x=f"Process {pid} of {n} tried for {elapsed:.0f} s.",
        i="Is process 0 running, and its host and port reachable from "
          "here?")


def _connect_error(error: Exception, reported: list[str], args: dict,
                   timeout: int, left: float, elapsed: float
                   ) -> KerasmeshError:
    """The R-facing error for a failed `jax.distributed.initialize()`."""

    text = " ".join([str(error)] + reported)
    # jaxlib 0.10.2 reports any client error as "std::bad_cast" (see
    # `_CatchingRuntime`); one that comes no sooner than JAX's deadline is
    # the timeout.
    timed_out = "DEADLINE_EXCEEDED" in text or (
        "bad_cast" in text and elapsed >= 0.9 * jax_timeout(left))
    if timed_out:
        return _timeout_error(args, timeout, elapsed, [])
    if isinstance(error, ValueError) and ("should be defined" in str(error)
                                          or "must be defined" in str(error)):
        return KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT,
            "`coordinator_address`, `num_processes` and `process_id` must "
            "be given: no launcher's variables were found.",
            x=str(error),
            i=f"Pass them, set `{ENV_ADDRESSES}`, "
              f"`{ENV_NUM_PROCESSES}` and `{ENV_PROCESS_ID}`, or start "
              "the processes with srun, mpirun or a Kubernetes indexed "
              "Job.")
    detail = str(error).splitlines()[0] if str(error) else ""
    if "bad_cast" in detail:
        detail = "the JAX coordination service reported an error (its log " \
                 "says which)"
    return KerasmeshError(
        kinds.DISTRIBUTED_CONNECT,
        f"Can't connect to {_where(args)}.",
        x=f"{type(error).__name__}: {detail}" if detail
          else type(error).__name__,
        i="Is the port free on process 0 and reachable from every "
          "process?")


def disconnect() -> bool:
    """Leave the distributed run cleanly, through JAX's shutdown barrier:
    every process waits for the others, so that none outlives a peer and
    reports it gone ("Polled an error from coordination service"). Returns
    whether this process was connected.
    """
    module = sys.modules.get("jax._src.distributed")
    if module is None or module.global_state.client is None:
        return False
    import jax

    jax.distributed.shutdown()
    return True
