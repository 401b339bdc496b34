"""Several processes, one global mesh: JAX's distributed runtime.

`initialize()` does what `keras.distribution.initialize()` does on JAX
(`jax.distributed.initialize()`, then one random seed for all processes),
with these differences:

* arguments, the `KERAS_DISTRIBUTION_*` variables Keras falls back to, and
  the variables of a cluster launcher (`launchers.py`) are checked first,
  with errors that name them;
* the processes check in with process 0 before JAX connects, so that a
  taken port, a duplicate id or a different count is an error in every
  process (`handshake.py`);
* the coordinator (and gloo) can listen on one interface only;
* a peer that never arrives ends in a `distributed_timeout` error instead
  of JAX terminating the process (`connect.py`).
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any
from collections.abc import Mapping

from . import launchers
from .launchers import MAX_PROCESSES
from ..core.backend import jax_backend_started, require_backend
from ..core.checks import is_positive, is_whole
from ..core.errors import KerasmeshError
from .addresses import (ENV_ADDRESSES, ENV_NUM_PROCESSES, ENV_PROCESS_ID,
                        parse_address)
from .connect import connect
from ..core import kinds


_INTEGER = re.compile(r"^\s*[+-]?[0-9]+\s*$")
ENV_BIND_ADDRESS = "JAX_COORDINATOR_BIND_ADDRESS"
_HOST = re.compile(
    r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.\-_]*[A-Za-z0-9])?)$")


# Arguments ----------------------------------------------------------------

def _source(arg: str, from_env: str | None) -> str:
    """How an error names a value: "`process_id`" or "`KERAS_...` (...)"."""
    if from_env is None:
        return f"`{arg}`"
    return f"`{from_env}` (the fallback for `{arg}`)"


def coordinator_from(addresses: Any, num_processes: int | None,
                     source: str) -> str:
    """The coordinator among Keras's comma-separated job addresses.

    Keras accepts either the coordinator's address or every process's, the
    coordinator's first; with a list, its length must be `num_processes`.
    """
    if not isinstance(addresses, str):
        parse_address(addresses, source)
    parts = [a.strip() for a in addresses.split(",")]
    for part in parts:
        parse_address(part, source)
    if len(parts) > 1 and num_processes is not None and \
            len(parts) != num_processes:
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT,
            f"{source} must list one address per process.",
            x=f"It lists {len(parts)} addresses for {num_processes} "
              "processes.",
            i="Give only the coordinator's address (process 0's).")
    return parts[0]


def _whole(value: Any, arg: str, from_env: str | None, minimum: int) -> int:
    """A whole number from `minimum` to the most processes (ids: one less)
    from an argument or an environment string."""
    source = _source(arg, from_env)
    maximum = MAX_PROCESSES if minimum == 1 else MAX_PROCESSES - 1
    if from_env is not None and isinstance(value, str) and \
            len(value) <= 40 and _INTEGER.match(value):
        value = int(value)
    rule = "a positive whole number" if minimum == 1 else \
        "a whole number (0 or more)"
    if not is_whole(value, minimum):
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT, f"{source} must be {rule}.",
            received=value)
    if value > maximum:
        shown = f"{int(value):,}" if value < 1e24 else f"{value:.3g}"
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT, f"{source} must be at most {maximum:,}.",
            x=f"Received {shown}.",
            i=f"kerasmesh runs at most {MAX_PROCESSES:,} processes.")
    return int(value)


def _checked_counts(n: Any, pid: Any, n_env: str | None,
                    pid_env: str | None) -> tuple[int | None, int | None]:
    """`num_processes` and `process_id` as ints (None stays None), the
    process id below the number of processes; `*_env` name the variable a
    value came from, if one did."""
    if n is not None:
        n = _whole(n, "num_processes", n_env, 1)
    if pid is not None:
        pid = _whole(pid, "process_id", pid_env, 0)
        if n is not None and pid >= n:
            raise KerasmeshError(
                kinds.DISTRIBUTED_ARGUMENT,
                f"{_source('process_id', pid_env)} must be "
                f"from 0 to {n - 1}, one less than the number of processes.",
                x=f"Received {pid} with {n} processes.",
                i="Process ids are 0, 1, ..., num_processes - 1; "
                  "process 0 runs the coordinator.")
    return n, pid


def resolve_arguments(coordinator_address: Any = None,
                      num_processes: Any = None, process_id: Any = None,
                      environ: Mapping[str, str] | None = None) -> dict:
    """Arguments for `jax.distributed.initialize()`, checked.

    Each argument that is None falls back to its `KERAS_DISTRIBUTION_*`
    variable in `environ` (empty values count as unset), as Keras does.
    When all three stay None, a launcher's variables give them (Slurm,
    Open MPI, Kubernetes: see `launchers.detect()`); without one, JAX
    looks for a cluster itself (Cloud TPU).

    Returns:
        A dict with `coordinator_address`, `num_processes`, `process_id`
        (None where nothing gives them), `launcher` (the launcher's name,
        "the KERAS_DISTRIBUTION_* variables" or None) and `sources`,
        naming where each value came from.

    Raises:
        KerasmeshError: kind `distributed_argument`.
    """
    environ = {k: v for k, v in (environ or {}).items() if v not in ("", None)}
    sources = {}

    def pick(value, arg, env):
        if value is None and env in environ:
            sources[arg] = env
            return environ[env]
        sources[arg] = None if value is None else "argument"
        return value

    address = pick(coordinator_address, "coordinator_address", ENV_ADDRESSES)
    n = pick(num_processes, "num_processes", ENV_NUM_PROCESSES)
    pid = pick(process_id, "process_id", ENV_PROCESS_ID)

    def env_of(arg):
        return sources[arg] if sources[arg] not in (None, "argument") else None

    n, pid = _checked_counts(n, pid, env_of("num_processes"),
                             env_of("process_id"))
    launchers.check_agrees(environ, {a: (env_of(a), v) for a, v in (
        ("num_processes", n), ("process_id", pid)) if env_of(a)})
    if address is not None:
        address = coordinator_from(
            address, n, _source("coordinator_address",
                                env_of("coordinator_address")))
    given = _given_together(address, n, pid)
    launcher = None
    if not given:
        found = launchers.detect(environ)
        if found is not None:
            launcher = found["launcher"]
            address, n, pid = (found["coordinator_address"],
                               found["num_processes"], found["process_id"])
            parse_address(address, f"The {launcher} coordinator address")
            sources = {a: launcher for a in sources}
    elif any(sources[a] not in (None, "argument") for a in sources):
        launcher = "the KERAS_DISTRIBUTION_* variables"
    return {"coordinator_address": address, "num_processes": n,
            "process_id": pid, "launcher": launcher, "sources": sources}


def _given_together(address: Any, n: Any, pid: Any) -> list[str]:
    """The names of the arguments given: all three or none.

    Raises:
        KerasmeshError: kind `distributed_argument` for one or two.
    """
    given = [a for a, v in (("coordinator_address", address),
                            ("num_processes", n), ("process_id", pid))
             if v is not None]
    if given and len(given) < 3:
        missing = [a for a in ("coordinator_address", "num_processes",
                               "process_id") if a not in given]
        envs = {"coordinator_address": ENV_ADDRESSES,
                "num_processes": ENV_NUM_PROCESSES,
                "process_id": ENV_PROCESS_ID}
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT,
            "`coordinator_address`, `num_processes` and `process_id` must "
            "be given together.",
            x="Missing: " + ", ".join(
           f"`{m}` (or `{envs[m]}`)" for m in missing) + ".",
            i="Leave all three unset only under a launcher (srun, "
              "mpirun, a Kubernetes indexed Job).")
    return given


def resolve_bind(bind_address: Any, environ: Mapping[str, str] | None,
                 coordinator_port: int | None) -> tuple | None:
    """Where the coordinator listens: (host, port), or None for JAX's own.

    `bind_address` is a host ("127.0.0.1") or "host:port"; None falls back
    to `JAX_COORDINATOR_BIND_ADDRESS`, then to every interface ([::]) on
    the coordinator's port.

    Raises:
        KerasmeshError: kind `distributed_argument`.
    """
    source = "`bind_address`"
    if bind_address is None:
        bind_address = (environ or {}).get(ENV_BIND_ADDRESS) or None
        source = f"`{ENV_BIND_ADDRESS}` (the fallback for `bind_address`)"
    if bind_address is None:
        return None
    if isinstance(bind_address, str) and _HOST.match(bind_address.strip()):
        if coordinator_port is None:
            return None
        return bind_address.strip(), coordinator_port
    host, port = parse_address(bind_address, source)
    return host, port


def check_timeout(timeout: Any) -> int:
    """Seconds to wait for every process, a positive number (rounded up)."""
    if not is_positive(timeout):
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT, "`timeout` must be a positive number of "
            "seconds.", received=timeout)
    return max(1, math.ceil(timeout))


def is_initialized() -> bool:
    """Whether this process has joined a distributed run."""
    module = sys.modules.get("jax._src.distributed")
    return module is not None and module.global_state.client is not None


def describe() -> dict:
    """This process's place in the run, as plain values."""
    import jax
    import jax._src.distributed as jax_distributed

    state = jax_distributed.global_state
    return {
        "process_index": int(jax.process_index()),
        "process_count": int(jax.process_count()),
        "coordinator_address": state.coordinator_address,
        "local_device_count": int(jax.local_device_count()),
        "device_count": int(jax.device_count()),
        "cpu_collectives": jax.config.jax_cpu_collectives_implementation,
    }


def initialize(coordinator_address: Any = None, num_processes: Any = None,
               process_id: Any = None, timeout: Any = 300,
               environ: Mapping[str, str] | None = None,
               bind_address: Any = None, verbose: bool = False) -> dict:
    """Join this process to a distributed run, as Keras does on JAX.

    Args:
        coordinator_address: "host:port" of process 0, or Keras's
            comma-separated job addresses (the first is the coordinator).
        num_processes: the number of processes.
        process_id: this process's id, from 0 to `num_processes - 1`.
        timeout: seconds to wait for every process to connect.
        environ: the `KERAS_DISTRIBUTION_*` variables to fall back to,
            and the launchers' (R passes its own environment; Python's
            copy may be older).
        bind_address: where process 0's coordinator listens, a host or
            "host:port" (None: `JAX_COORDINATOR_BIND_ADDRESS`, else every
            interface); gloo then listens on the same host.
        verbose: show JAX's C++ warnings (coordination service chatter).

    Returns:
        `describe()` after connecting.

    Raises:
        KerasmeshError: kinds `distributed_argument`, `distributed_started`
            (JAX already started, or initialized with other arguments),
            `distributed_timeout` (a process did not connect in time) and
            `distributed_connect`.
    """
    args = resolve_arguments(coordinator_address, num_processes, process_id,
                             environ)
    timeout = check_timeout(timeout)
    if bind_address is not None:
        resolve_bind(bind_address, None, 1)
    require_backend(("jax",), "Distributed initialization")
    if _already_joined(args):
        return describe()
    port = None
    if args["coordinator_address"] is not None:
        port = parse_address(args["coordinator_address"])[1]
    bind = resolve_bind(bind_address, environ, port)
    connect(args, timeout, bind, bool(verbose))
    # What keras.distribution.initialize() does next: one seed everywhere.
    from keras.src.backend.jax.distribution_lib import initialize_rng

    initialize_rng()
    return describe()


def _already_joined(args: dict) -> bool:
    """Whether this process already joined the run `args` describes (or
    any run, when `args` name none).

    Raises:
        KerasmeshError: kind `distributed_started` when it joined another
            run, or JAX started its devices first.
    """
    if is_initialized():
        import jax._src.distributed as jax_distributed

        state = jax_distributed.global_state
        current = (state.coordinator_address, state.num_processes,
                   state.process_id)
        wanted = (args["coordinator_address"], args["num_processes"],
                  args["process_id"])
        if all(w is None for w in wanted) or current == wanted:
            return True
        raise KerasmeshError(
            kinds.DISTRIBUTED_STARTED,
            "This process already joined a distributed run.",
            x=f"It is process {current[2]} of {current[1]} with the "
              f"coordinator at {current[0]}.",
            i="Restart R to join another run.")
    if jax_backend_started():
        raise KerasmeshError(
            kinds.DISTRIBUTED_STARTED,
            "Can't initialize the distributed runtime: JAX has already "
            "started.",
            x="JAX created its devices before joining the run (by "
              "listing devices, building a mesh or a model, ...).",
            i="Call `distributed_initialize()` first thing after "
              "`library(kerasmesh)` (and `simulate_devices()`).")
    return False


def process_index() -> int:
    """This process's index; 0 when the process runs alone.

    Does not start JAX when no distributed run was initialized, so that
    asking does not rule out `initialize()` later.
    """
    if not is_initialized() and not jax_backend_started():
        return 0
    import jax

    return int(jax.process_index())


def process_count() -> int:
    """The number of processes; 1 when the process runs alone."""
    if not is_initialized() and not jax_backend_started():
        return 1
    import jax

    return int(jax.process_count())
