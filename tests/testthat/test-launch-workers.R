# launch_local()'s worker plumbing that needs no process: environments,
# statuses from fake processes, conditions and output files.

test_that("child_env() drops launcher variables and adds the worker's", {
  withr::local_envvar(
    SLURM_PROCID = "3", OMPI_COMM_WORLD_RANK = "1", PMIX_RANK = "2",
    PMI_RANK = "2", JOB_COMPLETION_INDEX = "4",
    JAX_COORDINATOR_ADDRESS = "10.0.0.1:1234",
    KERASMESH_NUM_PROCESSES = "8", KERAS_DISTRIBUTION_PROCESS_ID = "5",
    KERASMESH_TEST_KEEP = "kept", JOB_COMPLETION_INDEX_OTHER = "kept too"
  )
  env <- kerasmesh:::child_env(c(KERAS_DISTRIBUTION_PROCESS_ID = "0",
                                 MY_VAR = "x"))
  expect_type(env, "character")
  gone <- c("SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
            "JOB_COMPLETION_INDEX", "JAX_COORDINATOR_ADDRESS",
            "KERASMESH_NUM_PROCESSES")
  expect_false(any(gone %in% names(env)))
  expect_identical(env[["KERASMESH_TEST_KEEP"]], "kept")
  expect_identical(env[["JOB_COMPLETION_INDEX_OTHER"]], "kept too")
  expect_identical(env[["KERAS_DISTRIBUTION_PROCESS_ID"]], "0")
  expect_identical(env[["MY_VAR"]], "x")
  expect_identical(env[["R_TESTS"]], "")
  expect_identical(env[["R_LIBS"]],
                   paste(.libPaths(), collapse = .Platform$path.sep))
  expect_identical(anyDuplicated(names(env)), 0L)
})

test_that("worker_env() says which process a worker is and where to join", {
  withr::local_envvar(
    XLA_FLAGS = "--xla_foo=1 --xla_force_host_platform_device_count=8",
    KERASMESH_VENV = "/opt/venv"
  )
  env <- kerasmesh:::worker_env(2, processes = 4, devices = 2,
                                address = "127.0.0.1:23456")
  expect_identical(env[["KERAS_DISTRIBUTION_PROCESS_ID"]], "2")
  expect_identical(env[["KERAS_DISTRIBUTION_NUM_PROCESSES"]], "4")
  expect_identical(env[["KERAS_DISTRIBUTION_JOB_ADDRESSES"]],
                   "127.0.0.1:23456")
  expect_identical(env[["JAX_COORDINATOR_BIND_ADDRESS"]], "127.0.0.1")
  # The session's device count is replaced, its other flags kept.
  expect_identical(strsplit(env[["XLA_FLAGS"]], " +")[[1]],
                   c("--xla_foo=1", "--xla_force_host_platform_device_count=2"))
  expect_identical(env[["JAX_PLATFORMS"]], "cpu")
  expect_identical(env[["KERAS_BACKEND"]], "jax")
  expect_identical(env[["KERASMESH_VENV"]], "/opt/venv")
})

test_that("worker_env() works without XLA flags in the session", {
  withr::local_envvar(XLA_FLAGS = NA)
  env <- kerasmesh:::worker_env(0, 1, 8, "127.0.0.1:1")
  expect_identical(env[["XLA_FLAGS"]],
                   "--xla_force_host_platform_device_count=8")
})

# A finished process as finish_worker() sees it.
fake_process <- function(exit) {
  list(wait = function(timeout) invisible(), get_exit_status = function() exit)
}

fake_worker <- function(exit, dir, script = FALSE, saved = NULL) {
  w <- list(process = fake_process(exit), id = 1L, pid = 99L,
            output = file.path(dir, "output-1.txt"),
            result = file.path(dir, "result-1.rds"), script = script,
            status = NA_character_)
  writeLines(c("hello", "world"), w$output)
  if (!is.null(saved)) {
    saveRDS(saved, w$result)
  }
  w
}

test_that("finish_worker() reads a worker's value, error or signal", {
  dir <- withr::local_tempdir()
  ok <- kerasmesh:::finish_worker(fake_worker(0, dir, saved = list(value = 7)))
  expect_identical(ok$status, "ok")
  expect_identical(ok$exit_status, 0L)
  expect_identical(ok$value, 7)
  expect_null(ok$error)
  expect_identical(ok$output_lines, c("hello", "world"))

  failed <- kerasmesh:::finish_worker(fake_worker(
    1, dir, saved = list(error = simpleError("boom"))
  ))
  expect_identical(failed$status, "error")
  expect_identical(conditionMessage(failed$error), "boom")

  killed <- kerasmesh:::finish_worker(fake_worker(-9, dir))
  expect_identical(killed$status, "killed")
  expect_s3_class(killed$error, "kerasmesh_error_launch_worker")
  expect_match(conditionMessage(killed$error), "signal 9 \\(SIGKILL\\)")

  unlink(file.path(dir, "result-1.rds"))
  exited <- kerasmesh:::finish_worker(fake_worker(3, dir))
  expect_identical(exited$status, "error")
  expect_identical(conditionMessage(exited$error),
                   "Process 1 exited with status 3.")
})

test_that("a worker that ends on its own while stopped keeps its error", {
  dir <- withr::local_tempdir()
  alive_then <- function(w) {
    w$process <- c(w$process, list(is_alive = function() TRUE,
                                   kill_tree = function() invisible(),
                                   kill = function() invisible()))
    w$pid <- NA_integer_ # no process group to signal
    w
  }
  own <- alive_then(fake_worker(1, dir,
                                saved = list(error = simpleError("mine"))))
  out <- kerasmesh:::stop_remaining(list(own), "stopped", "Stopped by us.")
  expect_identical(out[[1]]$status, "error")
  expect_identical(conditionMessage(out[[1]]$error), "mine")
  unlink(file.path(dir, "result-1.rds"))
  signalled <- alive_then(fake_worker(-9, dir))
  out <- kerasmesh:::stop_remaining(list(signalled), "stopped",
                                    "Stopped by us.")
  expect_identical(out[[1]]$status, "stopped")
  expect_identical(conditionMessage(out[[1]]$error), "Stopped by us.")
})

test_that("a script worker's value is what it saved", {
  dir <- withr::local_tempdir()
  w <- kerasmesh:::finish_worker(fake_worker(0, dir, script = TRUE,
                                             saved = "from the script"))
  expect_identical(w$value, "from the script")
})

test_that("worker errors are classed conditions; signals are named", {
  e <- kerasmesh:::launch_condition("Stopped.")
  expect_s3_class(e, c("kerasmesh_error_launch_worker", "kerasmesh_error",
                       "error"))
  expect_identical(conditionMessage(e), "Stopped.")
  expect_null(conditionCall(e))
  expect_identical(kerasmesh:::signal_name(15), "15 (SIGTERM)")
  expect_identical(kerasmesh:::signal_name(42), "42")
})

test_that("a missing output file reads as no lines", {
  expect_identical(kerasmesh:::read_output(tempfile()), character())
})
