#' Run several processes of one distributed run on this machine
#'
#' Starts `processes` R worker processes that join one distributed run, as
#' processes on several hosts would: each simulates `devices_per_process`
#' CPU devices and finds the coordinator address (a free port on
#' 127.0.0.1), the number of processes and its own process id in the
#' environment variables that [distributed_initialize()] reads. The worker
#' code calls `kerasmesh::distributed_initialize()` itself, so the same
#' code runs unchanged on several hosts.
#'
#' `launch_local()` waits for every worker and returns what each one gave.
#' When a worker fails (an error, a non-zero exit status or a crash), the
#' others are stopped at once: they could only wait for it. When `timeout`
#' passes first, all are stopped. Each worker runs in a process group of
#' its own, and the whole group (the worker and any process it started) is
#' ended when `launch_local()` returns, fails or is interrupted: nothing it
#' started outlives the call.
#'
#' The coordinator and the CPU collectives listen on 127.0.0.1 only. The
#' port is picked without R's random number generator, so `.Random.seed`
#' is left as it was. Expected log lines of JAX's coordination service and
#' gloo are left out of the workers' output unless `verbose` is `TRUE`.
#'
#' A machine can run only so many workers: `processes` may be at most
#' `getOption("kerasmesh.max_processes")`, by default 4 per CPU core (at
#' least 8), and `devices_per_process` at most 1024.
#'
#' @param fun_or_script An R function, run in each worker (a fresh R
#'   session, so the function must not rely on variables around it: pass
#'   them in `args`); or the path of an R script, run in each worker with
#'   `Rscript`. A script's value is what it saves with
#'   `saveRDS(value, Sys.getenv("KERASMESH_LAUNCH_RESULT"))`, otherwise
#'   `NULL`.
#' @param processes Number of worker processes.
#' @param devices_per_process Number of CPU devices each worker simulates.
#' @param timeout Seconds to wait for all workers, after which the ones
#'   still running are stopped. The default, 600, is twice
#'   [distributed_initialize()]'s 300: the workers start R and Python,
#'   connect, and then run your function.
#' @param args A list of arguments for `fun_or_script` when it is a
#'   function, the same for every worker.
#' @param env A named character vector of further environment variables for
#'   the workers; not those `launch_local()` sets itself (such as
#'   `KERAS_DISTRIBUTION_PROCESS_ID` or `XLA_FLAGS`) or a launcher's
#'   (`SLURM_*`, `OMPI_*`).
#' @param verbose Whether the workers show, and `output` keeps, the log
#'   lines of JAX's coordination service and gloo. Errors are always kept.
#' @param ... Must be empty.
#' @return A `kerasmesh_launch` object: a list with one element per worker
#'   (`length()` is the number of workers, `res[[i]]` is worker `i`, a
#'   list), which `as.data.frame()` turns into one row per worker. `res$name`
#'   gives one field for every worker (`res$status` a character vector,
#'   `res$value` a list). What it reports can't be set; a field of your
#'   own can (`res$note <- "first try"`). Each worker has:
#'   * `process_id`: 0, 1, ..., the process id the worker joins the run
#'     with: what [process_index()] gives in the worker once
#'     [distributed_initialize()] has run (before, every worker is 0).
#'   * `pid`: the operating system's process id.
#'   * `status`: `"ok"`; `"error"` (the worker signalled an error or exited
#'     with a non-zero status); `"killed"` (it died from a signal it was not
#'     sent by `launch_local()`); `"stopped"` (stopped after another worker
#'     failed); `"timeout"` (stopped when `timeout` passed).
#'   * `exit_status`: the exit status, negative for a signal (`-9` for
#'     `SIGKILL`), `NA` if unknown.
#'   * `value`: the worker's value, `NULL` unless `status` is `"ok"`.
#'   * `error`: the worker's error condition, or `NULL`.
#'   * `output`: the lines the worker printed (standard output and error).
#'
#'   `res$coordinator_address`, `res$timeout` and `res$elapsed` (seconds)
#'   describe the whole launch.
#' @seealso [distributed_initialize()];
#'   `vignette("multi-process", package = "kerasmesh")`.
#' @export
#' @examplesIf interactive() && requireNamespace("callr", quietly = TRUE)
#' # Each worker finds its place in the environment.
#' res <- launch_local(function() {
#'   Sys.getenv(c("KERAS_DISTRIBUTION_PROCESS_ID", "XLA_FLAGS"))
#' }, timeout = 60)
#' res
#' res[[2]]$value
#' as.data.frame(res)
#' @examplesIf interactive() && keras_available()
#' # Two processes of 4 CPU devices each, one run of 8 devices.
#' res <- launch_local(function() {
#'   info <- kerasmesh::distributed_initialize()
#'   c(process = info$process_index, devices = info$device_count)
#' })
#' res$value
launch_local <- function(fun_or_script, processes = 2, devices_per_process = 4,
                         timeout = 600, args = list(), env = character(),
                         verbose = kerasmesh_verbose(), ...) {
  check_call()
  processes <- check_whole(processes)
  check_process_limit(processes)
  devices_per_process <- check_whole(devices_per_process, max = 1024)
  check_timeout(timeout)
  check_launch_code(fun_or_script)
  check_launch_env(env)
  verbose <- check_flag(verbose)
  if (!is.list(args)) {
    stop_input_type(args, "a list", show_value = FALSE)
  }
  if (length(args) && !is.function(fun_or_script)) {
    kerasmesh_abort(
      c("{.arg args} are for a function; a script takes none.",
        i = "Pass values to a script in {.arg env}, read there with
             {.fn Sys.getenv}."),
      kind = kinds$argument
    )
  }
  rlang::check_installed("processx", "to launch worker processes")
  # processx draws from R's random numbers: the caller's stream stays.
  restore_seed <- preserve_seed()
  on.exit(restore_seed(), add = TRUE)

  address <- paste0("127.0.0.1:", free_port())
  dir <- tempfile("kerasmesh-launch-")
  dir.create(dir)
  workers <- vector("list", processes)
  on.exit(
    {
      stop_workers(workers)
      unlink(dir, recursive = TRUE)
    },
    add = TRUE
  )
  job <- NULL
  if (is.function(fun_or_script)) {
    job <- file.path(dir, "job.rds")
    fun <- fun_or_script
    environment(fun) <- globalenv()
    saveRDS(list(fun = fun, args = args), job)
  }
  started <- Sys.time()
  for (i in seq_len(processes)) {
    workers[[i]] <- start_worker(
      fun_or_script, job, i - 1L, processes, devices_per_process, address,
      env, dir, verbose
    )
  }
  workers <- wait_workers(workers, timeout, started)
  stop_workers(workers)
  new_launch(workers, address, timeout,
             as.numeric(difftime(Sys.time(), started, units = "secs")),
             verbose)
}

check_process_limit <- function(processes, call = rlang::caller_env()) {
  limit <- max_processes()
  if (processes > limit) {
    kerasmesh_abort(
      c("{.arg processes} must be at most {limit} on this machine.",
        x = "Received {format(processes, big.mark = ',')}.",
        i = "Each worker is an R session with Python and JAX; set
             {.code options(kerasmesh.max_processes = )} to allow more."),
      kind = kinds$argument, call = call
    )
  }
  invisible(processes)
}

# A function that puts back .Random.seed as it is now (or removes it).
preserve_seed <- function() {
  env <- globalenv()
  seed <- get0(".Random.seed", envir = env, inherits = FALSE)
  function() {
    if (is.null(seed)) {
      if (exists(".Random.seed", envir = env, inherits = FALSE)) {
        rm(".Random.seed", envir = env)
      }
    } else {
      assign(".Random.seed", seed, envir = env)
    }
  }
}

# The most workers launch_local() starts: 4 per core, at least 8.
max_processes <- function() {
  cores <- tryCatch(parallel::detectCores(), error = function(e) NA)
  default <- max(8L, 4L * (if (is.na(cores)) 2L else as.integer(cores)))
  limit <- option_number("kerasmesh.max_processes", default)
  min(limit, .Machine$integer.max)
}

# Checks --------------------------------------------------------------------

check_launch_code <- function(x, call = rlang::caller_env()) {
  if (is.function(x)) {
    return(invisible(x))
  }
  if (!is.character(x) || length(x) != 1 || is.na(x)) {
    stop_input_type(x, "a function or the path of an R script",
                    show_value = FALSE, arg = "fun_or_script", call = call)
  }
  if (!file.exists(x) || dir.exists(x)) {
    kerasmesh_abort(
      c("{.arg fun_or_script} must be a function or the path of an R script.",
        x = if (dir.exists(x)) "{.path {x}} is a directory."
            else "No file at {.path {x}}."),
      kind = kinds$argument, call = call
    )
  }
  invisible(x)
}

check_launch_env <- function(x, call = rlang::caller_env()) {
  ok <- is.character(x) && !anyNA(x) &&
    (length(x) == 0 || (!is.null(names(x)) && all(nzchar(names(x)))))
  if (!ok) {
    stop_input_type(x, "a named character vector", show_value = FALSE,
                    arg = "env", call = call)
  }
  # A POSIX name: what a shell can export, and one value each.
  bad <- names(x)[!grepl("^[A-Za-z_][A-Za-z0-9_]*$", names(x))]
  twice <- unique(names(x)[duplicated(names(x))])
  if (length(bad) || length(twice)) {
    kerasmesh_abort(
      c("{.arg env} must name each variable once, with letters, digits and
         underscores.",
        x = if (length(bad)) "Not a variable's name: {.val {bad}}."
            else "Named more than once: {.envvar {twice}}."),
      kind = kinds$argument, call = call
    )
  }
  # Linux takes one variable of at most 128 KiB ("NAME=value") and all
  # of a process's variables and arguments within about 2 MiB.
  sizes <- nchar(paste0(names(x), "=", x), type = "bytes")
  if (any(sizes >= 131072) || sum(sizes) > 1048576) {
    long <- names(x)[which.max(sizes)] # nolint: object_usage_linter. cli.
    kerasmesh_abort(
      c("{.arg env} must fit a process's environment: at most 128 KiB a
         variable, 1 MiB in all.",
        x = "{.envvar {long}} has {format_whole(max(sizes))} bytes
             ({format_whole(sum(sizes))} in all)."),
      kind = kinds$argument, call = call
    )
  }
  # What launch_local() sets for each worker, and launchers' variables,
  # which would make a worker join another run.
  own <- c(names(worker_env(0, 1, 1, "127.0.0.1:1")), "KERASMESH_VERBOSE",
           "KERASMESH_LAUNCH_RESULT", "TMPDIR", "JAX_NUM_CPU_DEVICES")
  launcher <- names(x)[grepl(launcher_env_pattern, names(x)) &
                         !names(x) %in% own]
  if (length(launcher)) {
    kerasmesh_abort(
      c("{.arg env} can't set a launcher's variables.",
        x = "Received {.envvar {launcher}}.",
        i = "{.fn launch_local} is the launcher of its workers: each joins
             its run, not another launcher's."),
      kind = kinds$argument, call = call
    )
  }
  taken <- names(x)[names(x) %in% own]
  if (length(taken)) {
    kerasmesh_abort(
      c("{.arg env} can't set what {.fn launch_local} sets for each worker.",
        x = "Received {.envvar {taken}}.",
        i = if ("XLA_FLAGS" %in% taken) {
          "XLA flags of this session's {.envvar XLA_FLAGS} reach the
           workers, with their device count."
        }),
      kind = kinds$argument, call = call
    )
  }
  invisible(x)
}
