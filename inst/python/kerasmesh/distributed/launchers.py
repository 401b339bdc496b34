"""Where a process stands when a cluster launcher started it.

`detect()` reads the variables that `srun` (Slurm), `mpirun` (Open MPI)
and a Kubernetes indexed Job set, and returns the coordinator address, the
number of processes and this process's id, as JAX's own cluster detection
(`jax._src.clusters`) would find them:

* Slurm: `SLURM_JOB_ID`, `SLURM_STEP_NODELIST`, `SLURM_NTASKS`,
  `SLURM_PROCID`, `SLURM_LOCALID`; the coordinator is the step's first
  node, port `SLURM_JOB_ID % 4096 + 61440`.
* Open MPI 4: `OMPI_MCA_orte_hnp_uri`, `OMPI_COMM_WORLD_SIZE`,
  `OMPI_COMM_WORLD_RANK`; the coordinator is the launcher's first address,
  port derived from the Open MPI job id.
* Open MPI 5 (PRRTE and PMIx, no `OMPI_MCA_orte_hnp_uri`; JAX 0.10 does
  not detect it): `PMIX_NAMESPACE`, `PMIX_SERVER_URI2`,
  `OMPI_COMM_WORLD_SIZE`, `OMPI_COMM_WORLD_RANK`. The coordinator is the
  launcher's host, as for Open MPI 4: the address of the PMIx server when
  that server is `mpirun` itself (its rank in the URI is 0), else the host
  named in the job's namespace (`prterun-<host>-<pid>@<job>`); the port is
  derived from the namespace, the same in every process of the job.
* Kubernetes: `JOB_COMPLETION_INDEX` (an indexed Job) for the process id,
  with `JAX_COORDINATOR_ADDRESS` and `KERASMESH_NUM_PROCESSES`, which the
  Job's template sets (the Job API holds them, not the pod's environment).

As in JAX, `JAX_COORDINATOR_ADDRESS` replaces any launcher's coordinator
and `JAX_COORDINATOR_PORT` its port. Unlike JAX, a launcher whose
variables are incomplete, or two launchers at once, is an error that names
the variables, not a silent fallback.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping

from ..core.errors import KerasmeshError
from ..core import kinds

SLURM_REQUIRED = ("SLURM_JOB_ID", "SLURM_STEP_NODELIST", "SLURM_NTASKS",
                  "SLURM_PROCID", "SLURM_LOCALID")
# Set by `srun` for a step; a batch script alone has some of the others.
SLURM_MARKERS = ("SLURM_STEP_NODELIST", "SLURM_PROCID", "SLURM_LOCALID",
                 "SLURM_STEP_NUM_NODES")
OMPI_REQUIRED = ("OMPI_MCA_orte_hnp_uri", "OMPI_COMM_WORLD_SIZE",
                 "OMPI_COMM_WORLD_RANK")
OMPI_MARKERS = OMPI_REQUIRED + ("OMPI_COMM_WORLD_LOCAL_RANK",)
# Open MPI 5 in place of OMPI_MCA_orte_hnp_uri. Not markers: `srun
# --mpi=pmix` sets them too.
OMPI5_REQUIRED = ("PMIX_NAMESPACE", "PMIX_SERVER_URI2")
K8S_REQUIRED = ("JOB_COMPLETION_INDEX", "JAX_COORDINATOR_ADDRESS",
                "KERASMESH_NUM_PROCESSES")
K8S_MARKERS = ("JOB_COMPLETION_INDEX",)

LAUNCHERS = {
    "Slurm": (SLURM_MARKERS, SLURM_REQUIRED),
    "Open MPI": (OMPI_MARKERS, OMPI_REQUIRED),
    "Kubernetes": (K8S_MARKERS, K8S_REQUIRED),
}

# Every variable detect() reads; R passes these from its environment.
VARIABLES = tuple(sorted(set(
    SLURM_REQUIRED + SLURM_MARKERS + OMPI_MARKERS + OMPI5_REQUIRED +
    K8S_REQUIRED + ("JAX_COORDINATOR_PORT",))))

# The launcher's first address: "tcp://HOST" (up to ",", ":" or ";") or
# "tcp6://[ADDR]" (up to "," or "]"), which keeps its brackets: an IPv6
# host is written "[::1]:PORT". Character classes, not lazy repeats, so
# that a long value is scanned once.
_ORTE_ADDRESS = re.compile(
    r"tcp://([^,:;\[\]]+)[,:]|tcp6://\[([^,\]\[;]+)[,\]]")
# A PMIx server URI: "<namespace>.<rank>;tcp4://<address>:<port>" or
# "...;tcp6://[<address>]:<port>".
_PMIX_URI = re.compile(
    r"^[^;]+\.([0-9]{1,20});(?:tcp4?://([^,:\[\]]+)|tcp6://\[([^,\]]+)[,\]])")
# The namespace mpirun (prterun) or a prte DVM gives a job.
_PRTE_NAMESPACE = re.compile(r"^(?:prterun|prte)-(.+)-[0-9]+@[0-9]+$")
_WHOLE = re.compile(r"^[0-9]+$")

# The most processes a run may have: 2^20 = 1,048,576, ten times the
# largest clusters' device counts (one process per device), and well
# within JAX's 32-bit process ids. Counts and ids are checked against it
# before anything is built from them.
MAX_PROCESSES = 2**20
# The longest value of a launcher's variable kerasmesh reads (a Slurm node
# list or Open MPI's URI of a large job stays far below), and the most
# digits of a number in one (a job id, a count or an id).
MAX_VARIABLE_CHARS = 65536
MAX_DIGITS = 20


def present(environ: Mapping[str, str]) -> list[str]:
    """The launchers whose marker variables are set."""
    return [name for name, (markers, _) in LAUNCHERS.items()
            if any(environ.get(v) for v in markers)]


def _launcher_values(name: str, environ: Mapping[str, str]
                     ) -> tuple[str, str, str]:
    """The launcher's coordinator address, and the names of its variables
    for the process count and the process id."""
    if name == "Slurm":
        address = f"{_first_node(environ['SLURM_STEP_NODELIST'])}:" + \
            _port(environ, _count(environ, "SLURM_JOB_ID", 0,
                                 10**MAX_DIGITS - 1) % 2**12)
        return address, "SLURM_NTASKS", "SLURM_PROCID"
    if name == "Open MPI":
        return (_ompi_coordinator(environ), "OMPI_COMM_WORLD_SIZE",
                "OMPI_COMM_WORLD_RANK")
    return (environ["JAX_COORDINATOR_ADDRESS"], "KERASMESH_NUM_PROCESSES",
            "JOB_COMPLETION_INDEX")


def detect(environ: Mapping[str, str]) -> dict | None:
    """The launcher's coordinator, process count and id, or None.

    Returns:
        None when no launcher's variables are set; otherwise a dict with
        `launcher`, `coordinator_address`, `num_processes`, `process_id`
        and `variables` (the names it read).

    Raises:
        KerasmeshError: kind `distributed_argument` when two launchers'
            variables are set, a launcher's are incomplete or malformed, or
            the process id is not below the count.
    """
    environ = {k: v for k, v in environ.items() if v not in ("", None)}
    check_lengths(environ, VARIABLES)
    found = present(environ)
    if not found:
        return None
    if len(found) > 1:
        names = [f"`{v}`" for name in found
                 for v in LAUNCHERS[name][0] if v in environ]
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT,
            f"Variables of {len(found)} launchers are set: "
            f"{' and '.join(found)}.",
            x="Found " + ", ".join(names) + ".",
            i="Start each process with one launcher, or unset the "
              "other's variables.")
    name = found[0]
    required = _required(name, environ)
    missing = [v for v in required if v not in environ]
    if missing:
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT,
            f"The {name} variables are incomplete.",
            x="Missing: " + ", ".join(f"`{v}`" for v in missing) + ".",
            i=_hint(name))
    address, n_var, pid_var = _launcher_values(name, environ)
    n = _count(environ, n_var)
    pid = _count(environ, pid_var, minimum=0)
    if "JAX_COORDINATOR_ADDRESS" in environ:
        address = environ["JAX_COORDINATOR_ADDRESS"]
    if pid >= n:
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT,
            f"`{pid_var}` must be below `{n_var}` ({name}).",
            x=f"`{pid_var}` is {pid} and `{n_var}` is {n}.",
            i=f"Process ids run from 0 to {n - 1}.")
    return {"launcher": name, "coordinator_address": address,
            "num_processes": n, "process_id": pid,
            "variables": list(required),
            "read": {"num_processes": n_var, "process_id": pid_var}}


def check_agrees(environ: Mapping[str, str], given: dict) -> None:
    """Refuse `KERAS_DISTRIBUTION_*` values that contradict a launcher's
    own (a Kubernetes index 0 beside `KERAS_DISTRIBUTION_PROCESS_ID=1`):
    which process this is would depend on which one wins.

    Args:
        environ: the environment, as for `detect()`.
        given: {"num_processes" or "process_id": (variable, int value)}
            for the values taken from `KERAS_DISTRIBUTION_*` variables.

    Raises:
        KerasmeshError: kind `distributed_argument`, naming both
            variables and their values.
    """
    if not given:
        return
    try:
        found = detect(environ)
    except KerasmeshError:
        return  # an incomplete launcher, not used: nothing to contradict
    if found is None:
        return
    for arg, (var, value) in given.items():
        theirs = found[arg]
        if value != theirs:
            other = found["read"][arg]
            raise KerasmeshError(
                kinds.DISTRIBUTED_ARGUMENT,
                f"`{var}` and `{other}` ({found['launcher']}) disagree.",
                x=f"`{var}` is {value}; `{other}` is {theirs}.",
                i=f"Unset `{var}` under {found['launcher']}, which sets "
                  "its own, or start the process without the launcher.")


def _required(name: str, environ: Mapping[str, str]) -> tuple[str, ...]:
    """The variables a launcher must set: Open MPI 5's when PMIx's are
    there and Open MPI 4's `OMPI_MCA_orte_hnp_uri` is not."""
    if name == "Open MPI" and "OMPI_MCA_orte_hnp_uri" not in environ and \
            any(v in environ for v in OMPI5_REQUIRED):
        return OMPI5_REQUIRED + OMPI_REQUIRED[1:]
    return LAUNCHERS[name][1]


def _hint(name: str) -> str:
    return {
        "Slurm": "Start the processes with `srun` (a step of the job), not "
                 "in the batch script itself.",
        "Open MPI": "Start the processes with `mpirun` (or `mpiexec`).",
        "Kubernetes": "Set `JAX_COORDINATOR_ADDRESS` (the first pod's "
                      "\"host:port\") and `KERASMESH_NUM_PROCESSES` (the "
                      "Job's `parallelism`) in the Job's template.",
    }[name]


def check_lengths(environ: Mapping[str, str], names) -> None:
    """Refuse an over-long value of any of the variables `names`.

    Raises:
        KerasmeshError: kind `distributed_argument`, naming the variable.
    """
    for var in names:
        value = environ.get(var)
        if isinstance(value, str) and len(value) > MAX_VARIABLE_CHARS:
            raise KerasmeshError(
                kinds.DISTRIBUTED_ARGUMENT,
                f"`{var}` must be at most {MAX_VARIABLE_CHARS:,} "
                "characters long.",
                x=f"It has {len(value):,} characters, starting "
                  f"\"{value[:20]}\".")


def _count(environ: Mapping[str, str], var: str, minimum: int = 1,
           maximum: int | None = None) -> int:
    """A whole number from `minimum` to `maximum` in a variable (a count
    or an id: at most `MAX_PROCESSES` and `MAX_PROCESSES - 1`)."""
    if maximum is None:
        maximum = MAX_PROCESSES if minimum == 1 else MAX_PROCESSES - 1
    value = environ[var].strip()
    if len(value) > MAX_DIGITS or not _WHOLE.match(value) or \
            not minimum <= int(value) <= maximum:
        rule = "a positive whole number" if minimum == 1 else \
            "a whole number (0 or more)"
        shown = environ[var] if len(environ[var]) <= 40 else \
            f"{environ[var][:20]}...\" ({len(environ[var]):,} characters"
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT,
            f"`{var}` must be {rule} of at most {maximum:,}.",
            x=f"It is \"{shown}\"" + (")." if len(environ[var]) > 40
                                       else "."))
    return int(value)


def _port(environ: Mapping[str, str], offset: int) -> str:
    """JAX's port: `JAX_COORDINATOR_PORT`, or one of the top 4096."""
    return environ.get("JAX_COORDINATOR_PORT") or \
        str(offset + (65535 - 2**12 + 1))


def _first_node(node_list: str) -> str:
    """The first host of a Slurm node list ("node[001-004],x" -> node001)."""
    ind = next((i for i, ch in enumerate(node_list) if ch in ",["),
               len(node_list))
    if ind == len(node_list) or node_list[ind] == ",":
        return node_list[:ind]
    suffix = node_list[ind + 1:]
    end = next((i for i, ch in enumerate(suffix) if ch in ",-]"),
               len(suffix))
    return node_list[:ind] + suffix[:end]


def _ompi_coordinator(environ: Mapping[str, str]) -> str:
    if "OMPI_MCA_orte_hnp_uri" not in environ:
        return _ompi5_coordinator(environ)
    uri = environ["OMPI_MCA_orte_hnp_uri"]
    match = _ORTE_ADDRESS.search(uri)
    job = uri.split(".", maxsplit=1)[0]
    if match is None or len(job) > MAX_DIGITS or not _WHOLE.match(job):
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT,
            "`OMPI_MCA_orte_hnp_uri` must name the launcher's address.",
            x=f"It is \"{uri}\".")
    host = match.group(1) or f"[{match.group(2)}]"
    return f"{host}:{_port(environ, (int(job) // 2**12) % 2**12)}"


def _ompi5_coordinator(environ: Mapping[str, str]) -> str:
    """Open MPI 5's launcher host, and a port from the job's namespace."""
    uri, namespace = environ["PMIX_SERVER_URI2"], environ["PMIX_NAMESPACE"]
    match = _PMIX_URI.match(uri)
    if match is None:
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT,
            "`PMIX_SERVER_URI2` must name the PMIx server's address.",
            x=f"It is \"{uri}\".")
    if "JAX_COORDINATOR_ADDRESS" in environ:   # it replaces ours
        return environ["JAX_COORDINATOR_ADDRESS"]
    rank, host4, host6 = match.groups()
    if int(rank) == 0:   # the server is mpirun: this is its host
        host = host4 or f"[{host6}]"
    else:
        named = _PRTE_NAMESPACE.match(namespace)
        if named is None:
            raise KerasmeshError(
                kinds.DISTRIBUTED_ARGUMENT,
                "`PMIX_NAMESPACE` must name the launcher's host "
                "(\"prterun-<host>-<pid>@<job>\").",
                x=f"It is \"{namespace}\".",
                i="Set `JAX_COORDINATOR_ADDRESS` to process 0's "
                  "\"host:port\".")
        host = named.group(1)
    return f"{host}:{_port(environ, zlib.crc32(namespace.encode()) % 2**12)}"
