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
#' passes first, all are stopped. No worker outlives the call, even when
#' it is interrupted.
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
#'   still running are stopped.
#' @param args A list of arguments for `fun_or_script` when it is a
#'   function, the same for every worker.
#' @param env A named character vector of further environment variables for
#'   the workers.
#' @return A `kerasmesh_launch` object, a list with one element per worker
#'   in each of:
#'   * `process_id`: 0, 1, ... as [process_index()] gives it in the worker.
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
#'   and `coordinator_address`, `timeout` and `elapsed` (seconds).
#' @seealso [distributed_initialize()];
#'   `vignette("multi-process", package = "kerasmesh")`.
#' @export
#' @examplesIf interactive() && requireNamespace("callr", quietly = TRUE)
#' # Each worker finds its place in the environment.
#' res <- launch_local(function() {
#'   Sys.getenv(c("KERAS_DISTRIBUTION_PROCESS_ID", "XLA_FLAGS"))
#' }, timeout = 60)
#' res
#' res$value[[2]]
#' @examplesIf interactive() && keras_available()
#' # Two processes of 4 CPU devices each, one run of 8 devices.
#' res <- launch_local(function() {
#'   info <- kerasmesh::distributed_initialize()
#'   c(process = info$process_index, devices = info$device_count)
#' })
#' res$value
launch_local <- function(fun_or_script, processes = 2, devices_per_process = 4,
                         timeout = 600, args = list(), env = character()) {
  processes <- check_count(processes)
  devices_per_process <- check_count(devices_per_process)
  check_seconds(timeout)
  check_launch_code(fun_or_script)
  check_launch_env(env)
  if (!is.list(args)) {
    kerasmesh_abort(
      c("{.arg args} must be a list.",
        x = "Received {.obj_type_friendly {args}}."),
      kind = "argument"
    )
  }
  rlang::check_installed("callr", "to launch worker processes")

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
  started <- Sys.time()
  for (i in seq_len(processes)) {
    workers[[i]] <- start_worker(
      fun_or_script, args, i - 1L, processes, devices_per_process, address,
      env, dir
    )
  }
  workers <- wait_workers(workers, timeout, started)
  new_launch(workers, address, timeout,
             as.numeric(difftime(Sys.time(), started, units = "secs")))
}

#' @export
format.kerasmesh_launch <- function(x, ..., lines = 5) {
  n <- length(x$process_id)
  counts <- table(factor(x$status, unique(x$status)))
  header <- c(
    sprintf("<kerasmesh_launch> %d process%s at %s (%.1f s)",
            n, if (n == 1) "" else "es", x$coordinator_address, x$elapsed),
    paste("Status:", paste(counts, names(counts), collapse = ", "))
  )
  out <- header
  for (i in seq_len(n)) {
    exit <- if (is.na(x$exit_status[i])) "?" else x$exit_status[i]
    out <- c(out, sprintf(
      "process %d (pid %d): %s, exit status %s", x$process_id[i], x$pid[i],
      x$status[i], exit
    ))
    if (identical(x$status[i], "ok")) {
      out <- c(out, paste0("  value: ", summarise_value(x$value[[i]])))
      next
    }
    if (!is.null(x$error[[i]])) {
      out <- c(out, paste0("  error: ", first_line(x$error[[i]])))
    }
    tail_lines <- utils::tail(x$output[[i]], lines)
    if (length(tail_lines)) {
      out <- c(out, "  last output:", paste0("  | ", truncate_right(tail_lines)))
    }
  }
  out
}

#' @export
print.kerasmesh_launch <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# Workers ------------------------------------------------------------------

start_worker <- function(code, args, id, processes, devices, address, env,
                         dir) {
  output <- file.path(dir, sprintf("output-%d.txt", id))
  result <- file.path(dir, sprintf("result-%d.rds", id))
  # A temporary directory per worker, inside `dir`: what a killed worker
  # leaves behind goes when launch_local() ends.
  tmp <- file.path(dir, sprintf("tmp-%d", id))
  dir.create(tmp)
  vars <- c(
    worker_env(id, processes, devices, address),
    KERASMESH_LAUNCH_RESULT = result,
    TMPDIR = tmp,
    env
  )
  if (is.function(code)) {
    process <- callr::r_bg(
      code, args = args, libpath = .libPaths(),
      env = c(callr::rcmd_safe_env(), vars),
      stdout = output, stderr = "2>&1", supervise = TRUE,
      cleanup_tree = TRUE
    )
  } else {
    options <- callr::rscript_process_options(
      script = normalizePath(code), libpath = .libPaths(),
      env = c(callr::rcmd_safe_env(), vars),
      stdout = output, stderr = "2>&1",
      extra = list(supervise = TRUE, cleanup_tree = TRUE)
    )
    process <- callr::rscript_process$new(options)
  }
  list(
    process = process, id = id, pid = process$get_pid(), output = output,
    result = result, script = !is.function(code), status = NA_character_
  )
}

# What a worker needs to join the run as process `id`.
worker_env <- function(id, processes, devices, address) {
  flags <- gsub(
    "--xla_force_host_platform_device_count=[0-9]+", "",
    Sys.getenv("XLA_FLAGS")
  )
  flags <- trimws(paste(
    flags, paste0("--xla_force_host_platform_device_count=", devices)
  ))
  c(
    XLA_FLAGS = flags,
    JAX_PLATFORMS = "cpu",
    KERAS_BACKEND = "jax",
    KERASMESH_VENV = kerasmesh_venv(),
    PYTHONUNBUFFERED = "1",
    KERAS_DISTRIBUTION_JOB_ADDRESSES = address,
    KERAS_DISTRIBUTION_NUM_PROCESSES = as.character(processes),
    KERAS_DISTRIBUTION_PROCESS_ID = as.character(id)
  )
}

# Waits until every worker has ended, one has failed, or time is up; stops
# the rest in the last two cases. Returns the workers with their status.
wait_workers <- function(workers, timeout, started) {
  deadline <- started + timeout
  repeat {
    for (i in seq_along(workers)) {
      w <- workers[[i]]
      if (is.na(w$status) && !w$process$is_alive()) {
        workers[[i]] <- finish_worker(w)
      }
    }
    status <- vapply(workers, `[[`, "", "status")
    failed <- !is.na(status) & status != "ok"
    if (all(!is.na(status))) {
      return(workers)
    }
    if (any(failed)) {
      first <- workers[[which(failed)[1]]]$id
      return(stop_remaining(workers, "stopped", sprintf(
        "Stopped by launch_local() after process %d failed.", first
      )))
    }
    if (Sys.time() >= deadline) {
      return(stop_remaining(workers, "timeout", sprintf(
        "Stopped by launch_local() when the timeout of %s s passed.", timeout
      )))
    }
    Sys.sleep(0.05)
  }
}

stop_remaining <- function(workers, status, message) {
  for (i in seq_along(workers)) {
    w <- workers[[i]]
    if (!is.na(w$status)) {
      next
    }
    if (w$process$is_alive()) {
      kill_worker(w$process)
      w <- finish_worker(w)
      w$status <- status
      w$value <- NULL
      w$error <- launch_condition(message)
    } else {
      # It ended on its own just now.
      w <- finish_worker(w)
    }
    workers[[i]] <- w
  }
  workers
}

# Reads a finished worker's exit status, value or error.
finish_worker <- function(w) {
  w$process$wait(2000)
  exit <- w$process$get_exit_status()
  w$exit_status <- if (is.null(exit)) NA_integer_ else as.integer(exit)
  w$value <- NULL
  w$error <- NULL
  if (!is.na(w$exit_status) && w$exit_status < 0) {
    w$status <- "killed"
    w$error <- launch_condition(sprintf(
      "Process %d died from signal %s.", w$id, signal_name(-w$exit_status)
    ))
  } else if (w$script) {
    if (identical(w$exit_status, 0L)) {
      w$status <- "ok"
      if (file.exists(w$result)) {
        w$value <- readRDS(w$result)
      }
    } else {
      w$status <- "error"
      w$error <- launch_condition(sprintf(
        "Process %d exited with status %s.", w$id, w$exit_status
      ))
    }
  } else {
    result <- tryCatch(
      list(value = w$process$get_result()),
      error = function(e) list(error = e$parent %||% e)
    )
    if (is.null(result$error)) {
      w$status <- "ok"
      w$value <- result$value
    } else {
      w$status <- "error"
      w$error <- result$error
    }
  }
  w$output_lines <- read_output(w$output)
  w
}

kill_worker <- function(process) {
  tryCatch(process$kill_tree(), error = function(e) process$kill())
  process$wait(5000)
  invisible()
}

# on.exit: whatever is still running does not outlive launch_local().
stop_workers <- function(workers) {
  for (w in workers) {
    if (!is.null(w) && w$process$is_alive()) {
      kill_worker(w$process)
    }
  }
}

new_launch <- function(workers, address, timeout, elapsed) {
  column <- function(name) lapply(workers, function(w) w[[name]])
  structure(
    list(
      process_id = vapply(workers, function(w) w$id, integer(1)),
      pid = vapply(workers, function(w) as.integer(w$pid), integer(1)),
      status = vapply(workers, function(w) w$status, character(1)),
      exit_status = vapply(workers, function(w) w$exit_status, integer(1)),
      value = column("value"),
      error = column("error"),
      output = column("output_lines"),
      coordinator_address = address,
      timeout = timeout,
      elapsed = elapsed
    ),
    class = "kerasmesh_launch"
  )
}

launch_condition <- function(message) {
  structure(
    class = c("kerasmesh_error_launch_worker", "kerasmesh_error", "error",
              "condition"),
    list(message = message, call = NULL)
  )
}

signal_name <- function(signal) {
  names <- c("1" = "SIGHUP", "2" = "SIGINT", "6" = "SIGABRT", "9" = "SIGKILL",
             "11" = "SIGSEGV", "15" = "SIGTERM")
  name <- names[as.character(signal)]
  if (is.na(name)) as.character(signal) else sprintf("%d (%s)", signal, name)
}

read_output <- function(path) {
  if (!file.exists(path)) {
    return(character())
  }
  tryCatch(
    readLines(path, warn = FALSE, encoding = "UTF-8"),
    error = function(e) character()
  )
}

# A port on 127.0.0.1 that nothing listens on now (the coordinator binds it
# a moment later; another program could take it in between).
free_port <- function(tries = 50) {
  for (i in seq_len(tries)) {
    port <- sample(20000:32000, 1)
    socket <- tryCatch(serverSocket(port), error = function(e) NULL)
    if (!is.null(socket)) {
      close(socket)
      return(port)
    }
  }
  kerasmesh_abort(
    "Can't find a free port for the coordinator.",
    kind = "launch"
  )
}

# Checks --------------------------------------------------------------------

check_launch_code <- function(x, call = rlang::caller_env()) {
  if (is.function(x)) {
    return(invisible(x))
  }
  if (!is.character(x) || length(x) != 1 || is.na(x)) {
    kerasmesh_abort(
      c("{.arg fun_or_script} must be a function or the path of an R script.",
        x = "Received {.obj_type_friendly {x}}."),
      kind = "argument", call = call
    )
  }
  if (!file.exists(x) || dir.exists(x)) {
    kerasmesh_abort(
      c("{.arg fun_or_script} must be a function or the path of an R script.",
        x = "No file at {.path {x}}."),
      kind = "argument", call = call
    )
  }
  invisible(x)
}

check_launch_env <- function(x, call = rlang::caller_env()) {
  ok <- is.character(x) && !anyNA(x) &&
    (length(x) == 0 || (!is.null(names(x)) && all(nzchar(names(x)))))
  if (!ok) {
    kerasmesh_abort(
      c("{.arg env} must be a named character vector.",
        x = "Received {.obj_type_friendly {x}}."),
      kind = "argument", call = call
    )
  }
  invisible(x)
}

# Short descriptions for print().

summarise_value <- function(x) {
  if (is.list(x) && !is.data.frame(x)) {
    fields <- if (is.null(names(x))) "" else
      paste0(": ", paste(names(x), collapse = ", "))
    return(truncate_right(sprintf("a list of %d%s", length(x), fields)))
  }
  text <- tryCatch(
    paste(utils::capture.output(utils::str(x, give.attr = FALSE,
                                           vec.len = 2)),
          collapse = " "),
    error = function(e) class(x)[1]
  )
  truncate_right(gsub("\\s+", " ", trimws(text)))
}

first_line <- function(e) {
  message <- tryCatch(conditionMessage(e), error = function(err) "")
  lines <- strsplit(cli::ansi_strip(message), "\n", fixed = TRUE)[[1]]
  truncate_right(if (length(lines)) lines[1] else "")
}
