# Worker processes: R sessions that load the installed kerasmesh (under
# R CMD check the one being checked; with testthat::test_local() run
# `R CMD INSTALL .` first).

skip_if_no_workers <- function() {
  skip_if_not_installed("processx")
  skip_if_no_keras()
  installed <- find.package("kerasmesh", lib.loc = .libPaths(), quiet = TRUE)
  if (length(installed) == 0) {
    if (identical(Sys.getenv("KERASMESH_REQUIRE_PYTHON"), "true")) {
      stop("kerasmesh must be installed for worker processes.")
    }
    skip("kerasmesh is not installed for worker processes.")
  }
}

# Whether processes run: a killed process whose parent has not collected
# it yet (a zombie, state Z in /proc) does not count.
alive <- function(pids) {
  vapply(pids, function(pid) {
    if (!isTRUE(tools::pskill(pid, 0L))) {
      return(FALSE)
    }
    stat <- file.path("/proc", pid, "stat")
    if (!file.exists(stat)) {
      return(TRUE)
    }
    line <- suppressWarnings(
      tryCatch(readLines(stat, warn = FALSE)[1], error = function(e) "")
    )
    !identical(strsplit(sub(".*\\) ", "", line), " ")[[1]][1], "Z")
  }, logical(1))
}

# Running processes (not zombies) whose process group is `pgid` (Linux:
# from /proc).
group_members <- function(pgid) {
  stats <- Sys.glob("/proc/[0-9]*/stat")
  groups <- vapply(stats, function(f) {
    line <- suppressWarnings(
      tryCatch(readLines(f, warn = FALSE), error = function(e) "")
    )
    fields <- strsplit(sub(".*\\) ", "", line[1]), " ")[[1]]
    if (identical(fields[1], "Z")) NA_integer_ else as.integer(fields[3])
  }, integer(1))
  as.integer(sub("/proc/([0-9]+)/stat", "\\1", stats[groups %in% pgid]))
}

# The listening TCP sockets of this process, as "address:port" in hex as
# /proc/net/tcp{,6} shows them, with the family. Run it in a worker.
own_listeners <- function() {
  links <- suppressWarnings(Sys.readlink(list.files("/proc/self/fd",
                                                    full.names = TRUE)))
  inodes <- sub("^socket:\\[([0-9]+)\\]$", "\\1",
                links[grepl("^socket:", links)])
  rows <- list()
  for (f in c("/proc/net/tcp", "/proc/net/tcp6")) {
    lines <- readLines(f, warn = FALSE)[-1]
    fields <- strsplit(trimws(lines), " +")
    for (x in fields) {
      if (x[4] == "0A" && x[10] %in% inodes) {
        rows[[length(rows) + 1]] <- c(file = basename(f), local = x[2])
      }
    }
  }
  do.call(rbind, rows)
}
environment(own_listeners) <- globalenv()

# Whether an "address:port" of /proc/net/tcp{,6} is on loopback:
# 127.x.x.x (little-endian hex "..7F" in tcp) or ::1 / ::ffff:127.x in tcp6.
is_loopback <- function(file, local) {
  address <- sub(":.*", "", local)
  ifelse(
    file == "tcp",
    substr(address, 7, 8) == "7F",
    address == "00000000000000000000000001000000" |
      (substr(address, 1, 24) == "0000000000000000FFFF0000" &
         substr(address, 31, 32) == "7F")
  )
}

# Starts Rscript workers with the environments in `envs` (one per worker),
# each running `script`, in process groups of their own; waits at most
# `timeout` seconds; ends every group. Returns exit statuses and output.
run_workers <- function(script, envs, timeout = 50) {
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- withr::local_tempdir()
  procs <- lapply(seq_along(envs), function(i) {
    kerasmesh:::start_group(
      rscript, script, kerasmesh:::child_env(envs[[i]]),
      file.path(out, paste0("out-", i))
    )
  })
  pids <- vapply(procs, function(p) p$get_pid(), integer(1))
  on.exit(for (pid in pids) kerasmesh:::kill_group(pid), add = TRUE)
  deadline <- Sys.time() + timeout
  while (any(vapply(procs, function(p) p$is_alive(), logical(1))) &&
         Sys.time() < deadline) {
    Sys.sleep(0.1)
  }
  timed_out <- any(vapply(procs, function(p) p$is_alive(), logical(1)))
  for (pid in pids) kerasmesh:::kill_group(pid)
  for (p in procs) p$wait(2000)
  list(
    timed_out = timed_out, pids = pids,
    exit = vapply(procs, function(p) p$get_exit_status() %||% NA_integer_,
                  integer(1)),
    output = lapply(seq_along(envs), function(i) {
      readLines(file.path(out, paste0("out-", i)), warn = FALSE)
    })
  )
}

`%||%` <- function(x, y) if (is.null(x)) y else x

# The environment a worker needs besides a launcher's: Python, 4 CPU
# devices, and the variables that say where to save its result.
worker_base_env <- function(result) {
  env <- c(
    XLA_FLAGS = "--xla_force_host_platform_device_count=4",
    JAX_PLATFORMS = "cpu", KERAS_BACKEND = "jax",
    KERASMESH_VENV = kerasmesh:::kerasmesh_venv(),
    PYTHONUNBUFFERED = "1", RESULT = result
  )
  python <- Sys.getenv("RETICULATE_PYTHON")
  if (nzchar(python)) c(env, RETICULATE_PYTHON = python) else env
}

# A free port among Slurm's (61440 + job id %% 4096), so that the job id
# srun would have set gives it; from /proc/net/tcp{,6}.
free_slurm_port <- function() {
  used <- kerasmesh:::ports_in_use()
  candidates <- setdiff(61440:65535, used)
  candidates[(Sys.getpid() %% length(candidates)) + 1]
}

# Processes whose command line contains `text` (Linux: from /proc).
processes_running <- function(text) {
  files <- Sys.glob("/proc/[0-9]*/cmdline")
  hit <- vapply(files, function(f) {
    # A process may end between listing and reading.
    cmd <- suppressWarnings(
      tryCatch(readBin(f, "raw", 10000), error = function(e) raw())
    )
    cmd[cmd == as.raw(0)] <- as.raw(32)
    grepl(text, rawToChar(cmd), fixed = TRUE)
  }, logical(1))
  as.integer(sub("/proc/([0-9]+)/cmdline", "\\1", files[hit]))
}
