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
#' @param num_processes The number of processes. `NULL`: the environment
#'   variable `KERAS_DISTRIBUTION_NUM_PROCESSES`.
#' @param process_id This process's id, from 0 (the coordinator) to
#'   `num_processes - 1`. `NULL`: the environment variable
#'   `KERAS_DISTRIBUTION_PROCESS_ID`.
#'
#'   When none of the three is given or set, JAX detects them where it can
#'   (Cloud TPU, Slurm, Open MPI).
#' @param timeout Seconds to wait for every process to connect. When one
#'   does not, every process that did wait fails after about `timeout`
#'   seconds (at least 6) with an error of class
#'   `kerasmesh_error_distributed_timeout`.
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
#' Once processes are connected, JAX watches them: when one dies, the
#' others end too rather than wait forever.
#' @seealso [process_index()], [launch_local()].
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
                                   timeout = 300) {
  if (!is.null(coordinator_address) &&
      (!is.character(coordinator_address) ||
       length(coordinator_address) != 1 || is.na(coordinator_address))) {
    kerasmesh_abort(
      c("{.arg coordinator_address} must be a single string {.val host:port}.",
        x = "Received {.obj_type_friendly {coordinator_address}}."),
      kind = "distributed_argument"
    )
  }
  info <- shim_call(
    "distributed.initialize",
    coordinator_address,
    as_whole_number(num_processes),
    as_whole_number(process_id),
    as_whole_number(timeout, null_ok = FALSE),
    as.list(Sys.getenv(distribution_env_vars(), unset = ""))
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
process_index <- function() {
  as.integer(shim_call("distributed.process_index"))
}

#' @rdname process_index
#' @export
process_count <- function() {
  as.integer(shim_call("distributed.process_count"))
}

# The variables Keras reads when an argument is not given.
distribution_env_vars <- function() {
  c(
    "KERAS_DISTRIBUTION_JOB_ADDRESSES",
    "KERAS_DISTRIBUTION_NUM_PROCESSES",
    "KERAS_DISTRIBUTION_PROCESS_ID"
  )
}

# A single number for the shim, which checks its range: whole numbers as
# integers (Python ints), anything else as it is.
as_whole_number <- function(x, null_ok = TRUE, arg = rlang::caller_arg(x),
                            call = rlang::caller_env()) {
  if (is.null(x) && null_ok) {
    return(NULL)
  }
  if (!is.numeric(x) || length(x) != 1 || is.na(x)) {
    kerasmesh_abort(
      c("{.arg {arg}} must be a single number.",
        x = "Received {.obj_type_friendly {x}}{received_value(x)}."),
      kind = "distributed_argument", call = call
    )
  }
  if (is.finite(x) && x == round(x) && abs(x) <= .Machine$integer.max) {
    as.integer(x)
  } else {
    as.numeric(x)
  }
}
