# launch_local()'s workers: started in process groups of their own, watched,
# and ended with everything they started.

# Launcher variables a worker must not inherit: it joins launch_local()'s
# run, not the one of the launcher that started this R session.
launcher_env_pattern <- paste0(
  "^(SLURM_|OMPI_|PMIX_|PMI_|JOB_COMPLETION_INDEX$|JAX_COORDINATOR_|",
  "KERASMESH_NUM_PROCESSES$|KERAS_DISTRIBUTION_)"
)

start_worker <- function(code, job, id, processes, devices, address, env,
                         dir, verbose) {
  output <- file.path(dir, sprintf("output-%d.txt", id))
  result <- file.path(dir, sprintf("result-%d.rds", id))
  # A temporary directory per worker, inside `dir`: what a killed worker
  # leaves behind goes when launch_local() ends.
  tmp <- file.path(dir, sprintf("tmp-%d", id))
  dir.create(tmp)
  vars <- c(
    worker_env(id, processes, devices, address),
    KERASMESH_VERBOSE = if (verbose) "true" else "false",
    KERASMESH_LAUNCH_RESULT = result,
    TMPDIR = tmp,
    env
  )
  rscript <- file.path(R.home("bin"), "Rscript")
  args <- if (is.null(job)) {
    normalizePath(code)
  } else {
    c(system.file("launch", "worker.R", package = "kerasmesh",
                  mustWork = TRUE), job, result)
  }
  process <- start_group(rscript, args, child_env(vars), output)
  list(
    process = process, id = id, pid = process$get_pid(), output = output,
    result = result, script = is.null(job), status = NA_character_
  )
}

# Starts `command` with its output in a file. processx starts it in a new
# session on Unix: its own process group, whose id is its pid.
#
# launch_local() ends every worker itself (on.exit), so processx must not
# kill on garbage collection: when something else in this process (Python,
# loaded through reticulate) has reaped a finished worker, processx's
# finalizer takes the process id for a running child and kills whatever has
# it now, another launch's worker once process ids wrap around.
start_group <- function(command, args, env, output) {
  processx::process$new(
    command, args, env = env, stdout = output, stderr = "2>&1",
    cleanup = FALSE, cleanup_tree = FALSE
  )
}

# This session's environment for a child, launcher variables removed and
# `vars` added.
child_env <- function(vars) {
  env <- Sys.getenv()
  env <- env[!grepl(launcher_env_pattern, names(env))]
  env <- stats::setNames(as.character(env), names(env))
  safe <- c(R_TESTS = "", R_BROWSER = "false", R_PDFVIEWER = "false",
            R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  env[names(safe)] <- safe
  env[names(vars)] <- vars
  env
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
    # The parent's setting: workers find Python the way it does.
    KERASMESH_VENV = Sys.getenv("KERASMESH_VENV"),
    PYTHONUNBUFFERED = "1",
    KERAS_DISTRIBUTION_JOB_ADDRESSES = address,
    KERAS_DISTRIBUTION_NUM_PROCESSES = as.character(processes),
    KERAS_DISTRIBUTION_PROCESS_ID = as.character(id),
    # The coordinator and gloo listen on loopback only.
    JAX_COORDINATOR_BIND_ADDRESS = sub(":[0-9]+$", "", address)
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
      kill_worker(w)
      w <- finish_worker(w)
      # Stopped only if the signal ended it: a worker that ended on its
      # own meanwhile (its error written, its exit status its own) keeps
      # what it reported.
      if (identical(w$status, "killed")) {
        w$status <- status
        w$value <- NULL
        w$error <- launch_condition(message)
      }
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
  saved <- if (!w$script && file.exists(w$result)) {
    tryCatch(readRDS(w$result), error = function(e) NULL)
  }
  if (!is.na(w$exit_status) && w$exit_status < 0) {
    w$status <- "killed"
    w$error <- launch_condition(sprintf(
      "Process %d died from signal %s.", w$id, signal_name(-w$exit_status)
    ))
  } else if (!is.null(saved$error)) {
    w$status <- "error"
    w$error <- saved$error
  } else if (!identical(w$exit_status, 0L)) {
    w$status <- "error"
    w$error <- launch_condition(sprintf(
      "Process %d exited with status %s.", w$id, w$exit_status
    ))
  } else {
    w$status <- "ok"
    if (w$script && file.exists(w$result)) {
      w$value <- readRDS(w$result)
    } else if (!w$script) {
      w$value <- saved$value
    }
  }
  w$output_lines <- read_output(w$output)
  w
}

# Ends a worker's whole process group (the worker and what it started),
# then the worker's remaining process tree.
kill_worker <- function(w) {
  kill_group(w$pid)
  tryCatch(w$process$kill_tree(), error = function(e) w$process$kill())
  w$process$wait(2000)
  invisible()
}

# (tools::pskill() skips negative ids, so `kill` signals the group.)
kill_group <- function(pid) {
  if (.Platform$OS.type == "unix" && !is.na(pid)) {
    system2("kill", c("-s", "KILL", "--", paste0("-", as.integer(pid))),
            stdout = FALSE, stderr = FALSE)
  }
  invisible()
}

# Whatever is still running, or still in a worker's group, does not
# outlive launch_local().
stop_workers <- function(workers) {
  for (w in workers) {
    if (is.null(w)) {
      next
    }
    if (w$process$is_alive()) {
      kill_worker(w)
    } else {
      kill_group(w$pid)
      tryCatch(w$process$kill_tree(), error = function(e) NULL)
    }
  }
}

launch_condition <- function(message) {
  structure(
    class = c(error_classes(kinds$launch_worker), "error",
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

# A port on 127.0.0.1 that nothing uses now (the coordinator binds it a
# moment later; if another program takes it in between, the workers say
# so). Picked from the process id and the clock, not R's random numbers,
# so that the caller's random stream is untouched.
free_port <- function(tries = 200) {
  used <- ports_in_use()
  start <- (Sys.getpid() * 7919 +
              (as.numeric(Sys.time()) * 1000) %% 100000) %% 12000
  for (i in seq_len(tries)) {
    port <- 20000L + as.integer((start + i * 7907) %% 12000)
    if (port %in% used) {
      next
    }
    if (!is.null(used) || port_is_free(port)) {
      return(port)
    }
  }
  kerasmesh_abort(
    "Can't find a free port for the coordinator.",
    kind = kinds$launch
  )
}

# Local ports of every TCP socket, from /proc/net/tcp{,6}; NULL where there
# is no /proc.
ports_in_use <- function() {
  files <- c("/proc/net/tcp", "/proc/net/tcp6")
  files <- files[file.exists(files)]
  if (length(files) == 0) {
    return(NULL)
  }
  lines <- unlist(lapply(files, function(f) readLines(f, warn = FALSE)[-1]))
  local <- vapply(strsplit(trimws(lines), " +"), `[`, "", 2)
  strtoi(sub(".*:", "", local), 16L)
}

port_is_free <- function(port) {
  socket <- tryCatch(serverSocket(port), error = function(e) NULL)
  if (is.null(socket)) {
    return(FALSE)
  }
  close(socket)
  TRUE
}
