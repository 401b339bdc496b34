#' Join processes into one distributed run
#'
#' Runs that outgrow one machine run one process per host and join them
#' into one run: process 0 starts a coordinator at `coordinator_address`,
#' every process connects to it and contributes its local devices. After
#' `distributed_initialize()`, [list_devices()] lists the devices of every
#' process and a [device_mesh()] can span them all. This is what
#' `keras.distribution.initialize()` does on the JAX backend, with checked
#' arguments, a timeout, and errors instead of a hang or a crash.
#'
#' Call `distributed_initialize()` in every process, first thing: before
#' anything that starts JAX (listing devices, building a mesh or a model).
#' Each process then runs the same script and feeds its own share of every
#' global batch; see `vignette("multi-process", package = "kerasmesh")`.
#'
#' CPU devices of different processes exchange data through gloo, which
#' `distributed_initialize()` selects unless another implementation of CPU
#' collectives (such as MPI) is configured. Use [launch_local()] to try a
#' run of several processes on one machine.
#'
#' @param coordinator_address `"host:port"` of process 0, reachable from
#'   every process (a free port on process 0's host). Keras's list of every
#'   process's address, comma-separated, coordinator first, works too.
#'   `NULL`: the environment variable `KERAS_DISTRIBUTION_JOB_ADDRESSES`.
#' @param num_processes The number of processes, at most 1,048,576
#'   (2^20: ten times the largest clusters' device counts, checked before
#'   anything is built from it). `NULL`: the environment variable
#'   `KERAS_DISTRIBUTION_NUM_PROCESSES`.
#' @param process_id This process's id, from 0 (the coordinator) to
#'   `num_processes - 1`. `NULL`: the environment variable
#'   `KERAS_DISTRIBUTION_PROCESS_ID`.
#'
#'   When none of the three is given or set, they come from the launcher
#'   that started the process (see "Launchers" below), or else from JAX's
#'   own detection (Cloud TPU).
#' @param timeout Seconds to wait for every process to connect. When one
#'   does not, every process that did wait fails after about `timeout`
#'   seconds (at least 6) with an error of class
#'   `kerasmesh_error_distributed_timeout`. The default, 300, is JAX's own
#'   time to connect: one connection, as long as a large compile.
#' @param bind_address Where process 0's coordinator listens: a host
#'   (`"127.0.0.1"`, `"10.0.0.1"`), on the port of `coordinator_address`,
#'   or `"host:port"`. `NULL`: the environment variable
#'   `JAX_COORDINATOR_BIND_ADDRESS`, else every interface (`[::]`, as JAX
#'   does), so that other hosts can connect. With a host, the CPU
#'   collectives (gloo) listen on that host too. [launch_local()] binds
#'   both to `127.0.0.1`.
#' @param verbose Whether to show the C++ log lines of JAX's coordination
#'   service (warnings about barriers, heartbeats and shutdown). By
#'   default they are hidden (`options(kerasmesh.verbose = TRUE)` shows
#'   them); errors are always shown.
#' @param ... Must be empty.
#' @return Invisibly, a list: `process_index`, `process_count`,
#'   `coordinator_address`, `local_device_count`, `device_count` and
#'   `cpu_collectives`.
#' @section Errors:
#' * `kerasmesh_error_distributed_argument`: an argument, or the environment
#'   variable it falls back to, is invalid (the message names it).
#' * `kerasmesh_error_distributed_timeout`: not every process connected
#'   within `timeout`; the condition names the coordinator and the timeout.
#' * `kerasmesh_error_distributed_connect`: the connection failed otherwise.
#' * `kerasmesh_error_distributed_started`: JAX already started in this
#'   process, or the process already joined another run.
#'
#' Before JAX connects, every process checks in with process 0: a port that
#' is already in use, two processes with the same `process_id` and
#' processes that disagree on `num_processes` are errors of class
#' `kerasmesh_error_distributed_connect` in every process, within
#' `timeout`. (So every process of a run must call
#' `distributed_initialize()`.) Once processes are connected, JAX watches
#' them: when one dies, the others end too rather than wait forever.
#'
#' @section Launchers:
#' With no arguments and no `KERAS_DISTRIBUTION_*` variables,
#' `distributed_initialize()` reads the variables a cluster launcher sets,
#' and finds the coordinator, count and id that JAX's own detection finds:
#' * Slurm (`srun`): `SLURM_JOB_ID`, `SLURM_STEP_NODELIST`, `SLURM_NTASKS`,
#'   `SLURM_PROCID`, `SLURM_LOCALID`. The coordinator is the step's first
#'   node, on port `61440 + SLURM_JOB_ID %% 4096`.
#' * Open MPI 4 (`mpirun`): `OMPI_MCA_orte_hnp_uri`,
#'   `OMPI_COMM_WORLD_SIZE`, `OMPI_COMM_WORLD_RANK`. The coordinator is
#'   `mpirun`'s host.
#' * Open MPI 5 (`mpirun`, which no longer sets `OMPI_MCA_orte_hnp_uri`):
#'   `PMIX_NAMESPACE`, `PMIX_SERVER_URI2`, `OMPI_COMM_WORLD_SIZE`,
#'   `OMPI_COMM_WORLD_RANK`. The coordinator is `mpirun`'s host too: the
#'   address of its PMIx server for processes on its node, the host named in
#'   the job's namespace (`prterun-<host>-<pid>@<job>`) on other nodes, on a
#'   port derived from the namespace, the same in every process. (JAX 0.10
#'   itself detects only Open MPI 4.)
#' * Kubernetes (an indexed Job): `JOB_COMPLETION_INDEX` is the process id;
#'   the Job's template sets `JAX_COORDINATOR_ADDRESS` (the first pod's
#'   `"host:port"`, such as `"train-0.train:1234"`) and
#'   `KERASMESH_NUM_PROCESSES` (the Job's `parallelism`).
#'
#' `JAX_COORDINATOR_ADDRESS` replaces any launcher's coordinator and
#' `JAX_COORDINATOR_PORT` its port, as in JAX. An IPv6 address keeps its
#' brackets, as in `"[::1]:1234"`. Incomplete launcher variables, two
#' launchers' variables at once, a count or id beyond the bound above, a
#' variable longer than 65,536 characters, a process id that is not below
#' the count, or a `KERAS_DISTRIBUTION_*` count or id that contradicts the
#' launcher's own are errors of class
#' `kerasmesh_error_distributed_argument` that name the variables. A
#' failure to reach the coordinator names the launcher and the address.
#' The vignette has recipes for each.
#' @seealso [process_index()], [launch_local()], [distributed_shutdown()].
#' @export
#' @examples
#' \dontrun{
#' # On host 10.0.0.1 (process 0) and host 10.0.0.2 (process 1):
#' library(kerasmesh)
#' distributed_initialize("10.0.0.1:1234", num_processes = 2,
#'                        process_id = 0) # 1 on the second host
#' list_devices() # the devices of both hosts
#' }
#' @examplesIf interactive() && keras_available()
#' # Try it on one machine: two processes with 4 CPU devices each.
#' res <- launch_local(function() {
#'   kerasmesh::distributed_initialize()
#'   kerasmesh::list_devices()
#' })
#' res$value[[1]]
distributed_initialize <- function(coordinator_address = NULL,
                                   num_processes = NULL, process_id = NULL,
                                   timeout = 300, bind_address = NULL,
                                   verbose = kerasmesh_verbose(), ...) {
  check_dots_none()
  check_address(coordinator_address, "a single string {.val host:port}")
  check_address(bind_address, "a single string, a host or {.val host:port}")
  kind <- kinds$distributed_argument
  check_flag(verbose, kind = kind)
  num_processes <- shim_number(check_number(
    num_processes, "a single number", allow_null = TRUE, kind = kind
  ))
  process_id <- shim_number(check_number(
    process_id, "a single number", allow_null = TRUE, kind = kind
  ))
  timeout <- shim_number(check_number(timeout, "a single number",
                                      kind = kind))
  info <- shim_call(
    "distributed.initialize", coordinator_address = coordinator_address,
    num_processes = num_processes, process_id = process_id,
    timeout = timeout, environ = as.list(distribution_env()),
    bind_address = bind_address, verbose = verbose
  )
  invisible(info)
}

#' This process's place in a distributed run
#'
#' `process_index()` is the id of this process, `process_count()` the number
#' of processes in the run. Both work before [distributed_initialize()] and
#' do not start JAX then: a process on its own is process 0 of 1.
#'
#' @return An integer.
#' @seealso [distributed_initialize()].
#' @export
#' @examplesIf keras_available()
#' process_index()
#' process_count()
process_index <- function(...) {
  check_dots_none()
  as.integer(shim_call("distributed.process_index"))
}

#' @param ... Must be empty.
#' @rdname process_index
#' @export
process_count <- function(...) {
  check_dots_none()
  as.integer(shim_call("distributed.process_count"))
}

#' Leave a distributed run
#'
#' Ends this process's part in the run [distributed_initialize()] joined,
#' after any pending background checkpoint save: it waits until every
#' process has called it (JAX's shutdown barrier, up to 5 minutes), then
#' disconnects. Call it as the last step of a script that `mpirun`, `srun`
#' or a Kubernetes job starts: R does not run Python's exit handlers, and
#' a process that ends without leaving the run ends the others (process 0
#' hosts the run's coordination service), so the process that finishes
#' first would otherwise stop the rest. [launch_local()]'s workers call it
#' when their function returns. A process that failed should not call it:
#' it exits, and the others end rather than wait for it.
#'
#' @param ... Must be empty.
#' @return Invisibly, `TRUE` when this process left a run, `FALSE` when it
#'   was in none (nothing is started then).
#' @seealso [distributed_initialize()].
#' @export
#' @examplesIf keras_available()
#' # Outside a run there is nothing to leave.
#' distributed_shutdown()
distributed_shutdown <- function(...) {
  check_dots_none()
  finish_pending_checkpoints()
  invisible(python_started() && isTRUE(shim_call("distributed.disconnect")))
}

# The variables the shim reads: Keras's, JAX's coordinator settings and
# the launchers' (Slurm, Open MPI and its PMIx, Kubernetes).
distribution_env <- function() {
  env <- Sys.getenv()
  keep <- grepl(paste0(
    "^(KERAS_DISTRIBUTION_|JAX_COORDINATOR_|SLURM_|OMPI_|PMIX_|",
    "JOB_COMPLETION_INDEX$|KERASMESH_NUM_PROCESSES$)"
  ), names(env))
  env <- env[keep]
  stats::setNames(as.character(env), names(env))
}

# Whether to show JAX's C++ log lines: the option, else the variable
# launch_local() sets for its workers.
kerasmesh_verbose <- function(call = rlang::caller_env()) {
  option_flag(
    "kerasmesh.verbose",
    tolower(Sys.getenv("KERASMESH_VERBOSE")) %in% c("true", "1", "yes"),
    call = call
  )
}

# A single number for the shim, which checks its range: whole numbers as
# integers (Python ints), anything else as it is.
# NULL or one string: the shim checks what is in it.
check_address <- function(x, what, arg = rlang::caller_arg(x),
                          call = rlang::caller_env()) {
  if (!is.null(x) && (!is.character(x) || length(x) != 1 || is.na(x))) {
    stop_input_type(x, what, show_value = FALSE,
                    kind = kinds$distributed_argument, arg = arg, call = call)
  }
  invisible(x)
}

# A number checked by check_number() as the shim takes it: whole numbers
# an integer holds as integers (Python ints), others as they are.
shim_number <- function(x) {
  if (!is.null(x) && is.finite(x) && x == round(x) &&
      abs(x) <= .Machine$integer.max) {
    as.integer(x)
  } else {
    x
  }
}
