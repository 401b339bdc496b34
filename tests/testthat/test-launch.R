# launch_local() with plain R workers: no Python, so these run everywhere.

# pids, ports and timings vary between runs.
scrub_launch <- function(lines) {
  lines <- gsub("127\\.0\\.0\\.1:[0-9]+", "127.0.0.1:<port>", lines)
  lines <- gsub("pid [0-9]+", "pid <pid>", lines)
  gsub("\\([0-9.]+ s\\)", "(<time> s)", lines)
}

test_that("launch_local() gives each worker its process id and devices", {
  skip_if_not_installed("processx")
  res <- launch_local(function(extra) {
    c(
      Sys.getenv(c(
        "KERAS_DISTRIBUTION_JOB_ADDRESSES", "KERAS_DISTRIBUTION_NUM_PROCESSES",
        "KERAS_DISTRIBUTION_PROCESS_ID", "JAX_PLATFORMS", "KERAS_BACKEND",
        "XLA_FLAGS", "EXTRA"
      )),
      extra = extra
    )
  }, processes = 3, devices_per_process = 2, timeout = 60,
  args = list(extra = "arg"), env = c(EXTRA = "env"))

  expect_s3_class(res, "kerasmesh_launch")
  expect_identical(res$status, rep("ok", 3))
  expect_identical(res$exit_status, rep(0L, 3))
  expect_identical(res$process_id, 0:2)
  expect_match(res$coordinator_address, "^127\\.0\\.0\\.1:[0-9]+$")
  for (i in 1:3) {
    v <- res$value[[i]]
    expect_identical(v[["KERAS_DISTRIBUTION_JOB_ADDRESSES"]],
                     res$coordinator_address)
    expect_identical(v[["KERAS_DISTRIBUTION_NUM_PROCESSES"]], "3")
    expect_identical(v[["KERAS_DISTRIBUTION_PROCESS_ID"]], as.character(i - 1))
    expect_identical(v[["JAX_PLATFORMS"]], "cpu")
    expect_identical(v[["KERAS_BACKEND"]], "jax")
    expect_match(v[["XLA_FLAGS"]], "--xla_force_host_platform_device_count=2",
                 fixed = TRUE)
    expect_identical(unname(v[c("EXTRA", "extra")]), c("env", "arg"))
  }
  expect_false(any(alive(res$pid)))
})

test_that("launch_local() stops the other workers when one fails", {
  skip_if_not_installed("processx")
  started <- Sys.time()
  res <- launch_local(function() {
    if (Sys.getenv("KERAS_DISTRIBUTION_PROCESS_ID") == "1") {
      stop("worker 1 gives up")
    }
    Sys.sleep(60)
  }, processes = 3, timeout = 60)
  elapsed <- as.numeric(difftime(Sys.time(), started, units = "secs"))

  expect_lt(elapsed, 30)
  expect_identical(res$status, c("stopped", "error", "stopped"))
  expect_match(conditionMessage(res$error[[2]]), "worker 1 gives up")
  expect_match(conditionMessage(res$error[[1]]), "after process 1 failed")
  expect_null(res$value[[1]])
  expect_false(any(alive(res$pid)))
  expect_snapshot(print(res, n = 0), transform = scrub_launch)
})

test_that("launch_local() stops every worker when the timeout passes", {
  skip_if_not_installed("processx")
  started <- Sys.time()
  res <- launch_local(function() Sys.sleep(60), processes = 2, timeout = 2)
  elapsed <- as.numeric(difftime(Sys.time(), started, units = "secs"))

  expect_lt(elapsed, 20)
  expect_identical(res$status, c("timeout", "timeout"))
  expect_s3_class(res$error[[1]], "kerasmesh_error_launch_worker")
  expect_false(any(alive(res$pid)))
})

test_that("launch_local() reports a worker killed by a signal", {
  skip_if_not_installed("processx")
  skip_on_os("windows")
  res <- launch_local(function() {
    if (Sys.getenv("KERAS_DISTRIBUTION_PROCESS_ID") == "0") {
      tools::pskill(Sys.getpid(), tools::SIGKILL)
    }
    Sys.sleep(60)
  }, processes = 2, timeout = 60)

  expect_identical(res$status, c("killed", "stopped"))
  expect_identical(res$exit_status[1], -9L)
  expect_match(conditionMessage(res$error[[1]]), "SIGKILL")
  expect_false(any(alive(res$pid)))
})

test_that("launch_local() runs a script and returns what it saved", {
  skip_if_not_installed("processx")
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    'id <- as.integer(Sys.getenv("KERAS_DISTRIBUTION_PROCESS_ID"))',
    'cat("process", id, "\\n")',
    'if (id == 1) saveRDS(id * 10, Sys.getenv("KERASMESH_LAUNCH_RESULT"))'
  ), script)
  res <- launch_local(script, timeout = 60)

  expect_identical(res$status, c("ok", "ok"))
  expect_null(res$value[[1]])
  expect_identical(res$value[[2]], 10)
  expect_identical(res$output[[2]], "process 1 ")
})

test_that("launch_local() reports a script's non-zero exit status", {
  skip_if_not_installed("processx")
  script <- withr::local_tempfile(fileext = ".R")
  writeLines("quit(status = 3)", script)
  res <- launch_local(script, processes = 1, timeout = 60)

  expect_identical(res$status, "error")
  expect_identical(res$exit_status, 3L)
  expect_match(conditionMessage(res$error[[1]]), "exited with status 3")
})

test_that("launch_local() checks its arguments", {
  expect_snapshot(error = TRUE, {
    launch_local("no/such/script.R")
    launch_local(42)
    launch_local(identity, processes = 0)
    launch_local(identity, devices_per_process = 1.5)
    launch_local(identity, timeout = -1)
    launch_local(identity, args = "x")
    launch_local(identity, env = "UNNAMED")
  })
  expect_error(launch_local(identity, processes = NA),
               class = "kerasmesh_error_argument")
})

test_that("launch_local()'s result has one element per worker", {
  skip_if_not_installed("processx")
  res <- launch_local(function() {
    as.integer(Sys.getenv("KERAS_DISTRIBUTION_PROCESS_ID")) * 10L
  }, processes = 3, timeout = 60)

  expect_length(res, 3)
  expect_identical(res[[2]]$process_id, 1L)
  expect_identical(res[[2]]$value, 10L)
  expect_identical(res[[2]]$status, "ok")
  expect_identical(res[["status"]], rep("ok", 3))
  expect_identical(res$value, list(0L, 10L, 20L))
  expect_s3_class(res[2:3], "kerasmesh_launch")
  expect_length(res[2:3], 2)
  expect_identical(res[2:3]$process_id, 1:2)
  expect_identical(res[2:3]$coordinator_address, res$coordinator_address)

  df <- as.data.frame(res)
  expect_identical(nrow(df), 3L)
  expect_identical(df$process_id, 0:2)
  expect_identical(df$status, rep("ok", 3))
  expect_identical(df$value, list(0L, 10L, 20L))
  expect_identical(lengths(lapply(seq_len(3), function(i) df$output[[i]])),
                   c(0L, 0L, 0L))
  expect_snapshot(print(res), transform = scrub_launch)
})

test_that("launch_local() leaves out log chatter unless verbose", {
  skip_if_not_installed("processx")
  chatty <- function() {
    cat("[Gloo] Rank 0 is connected to 7 peer ranks. Expected number of",
        "connected peer ranks is : 7\n")
    cat("W1130 16:04:02.123456   1234 coordination_service.cc:12] barrier\n")
    cat("E1130 16:04:02.123456   1234 coordination_service.cc:12] real\n")
    cat("my own line\n")
  }
  quiet <- launch_local(chatty, processes = 1, timeout = 60, verbose = FALSE)
  expect_identical(quiet$output[[1]], c(
    "E1130 16:04:02.123456   1234 coordination_service.cc:12] real",
    "my own line"
  ))
  loud <- launch_local(chatty, processes = 1, timeout = 60, verbose = TRUE)
  expect_length(loud$output[[1]], 4)
})
