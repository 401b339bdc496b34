# distributed_initialize() in the test process: arguments and refusals only.
# JAX is started first in every test, so that no call can connect anywhere
# (joining a run must come before JAX starts); multi-process runs are in
# test-multiprocess.R.

start_jax <- function() {
  skip_if_no_keras()
  invisible(list_devices())
}

test_that("a process on its own is process 0 of 1", {
  start_jax()
  expect_identical(process_index(), 0L)
  expect_identical(process_count(), 1L)
})

test_that("distributed_initialize() checks its arguments before connecting", {
  start_jax()
  withr::local_envvar(
    KERAS_DISTRIBUTION_JOB_ADDRESSES = NA,
    KERAS_DISTRIBUTION_NUM_PROCESSES = NA,
    KERAS_DISTRIBUTION_PROCESS_ID = NA
  )
  expect_snapshot(error = TRUE, {
    distributed_initialize("127.0.0.1:1234", num_processes = 2, process_id = 2)
    distributed_initialize("127.0.0.1", num_processes = 2, process_id = 0)
    distributed_initialize("127.0.0.1:99999", num_processes = 2,
                           process_id = 0)
    distributed_initialize("127.0.0.1:1234", num_processes = 0, process_id = 0)
    distributed_initialize("127.0.0.1:1234", num_processes = 2)
    distributed_initialize("127.0.0.1:1234", 2, 0, timeout = 0)
    distributed_initialize(c("a:1", "b:2"), 2, 0)
    distributed_initialize("127.0.0.1:1234", "2", 0)
  })
  expect_error(
    distributed_initialize("127.0.0.1:1234", 2, 1.5),
    class = "kerasmesh_error_distributed_argument"
  )
})

test_that("distributed_initialize() checks R types before Python starts", {
  for (args in list(list(num_processes = "2"), list(process_id = TRUE),
                    list(timeout = "a"), list(timeout = NULL))) {
    expect_error(do.call(distributed_initialize, args),
                 class = "kerasmesh_error_distributed_argument")
  }
})

test_that("distributed_initialize() falls back to Keras's variables", {
  start_jax()
  withr::local_envvar(
    KERAS_DISTRIBUTION_JOB_ADDRESSES = "127.0.0.1:1234",
    KERAS_DISTRIBUTION_NUM_PROCESSES = "2",
    KERAS_DISTRIBUTION_PROCESS_ID = "two"
  )
  expect_snapshot(distributed_initialize(), error = TRUE)
  withr::local_envvar(
    KERAS_DISTRIBUTION_PROCESS_ID = "0",
    KERAS_DISTRIBUTION_JOB_ADDRESSES = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"
  )
  expect_error(distributed_initialize(),
               "KERAS_DISTRIBUTION_JOB_ADDRESSES",
               class = "kerasmesh_error_distributed_argument")
  # Arguments win over variables; these are valid, so the next check runs.
  expect_error(distributed_initialize("127.0.0.1:1234", process_id = 1),
               class = "kerasmesh_error_distributed_started")
})

test_that("a launcher's local process id must be a whole number", {
  start_jax()
  withr::local_envvar(
    SLURM_JOB_ID = "1234", SLURM_STEP_NODELIST = "localhost",
    SLURM_NTASKS = "2", SLURM_PROCID = "1", SLURM_LOCALID = "one"
  )
  expect_snapshot(distributed_initialize(), error = TRUE)
  withr::local_envvar(SLURM_LOCALID = "1")
  # Valid: the next check runs.
  expect_error(distributed_initialize(),
               class = "kerasmesh_error_distributed_started")
})

test_that("Keras's variables contradicting a launcher's are an error", {
  start_jax()
  withr::local_envvar(
    JOB_COMPLETION_INDEX = "0", JAX_COORDINATOR_ADDRESS = "127.0.0.1:1234",
    KERASMESH_NUM_PROCESSES = "2",
    KERAS_DISTRIBUTION_JOB_ADDRESSES = "127.0.0.1:1234",
    KERAS_DISTRIBUTION_NUM_PROCESSES = "2",
    KERAS_DISTRIBUTION_PROCESS_ID = "1"
  )
  expect_snapshot(distributed_initialize(), error = TRUE)
  withr::local_envvar(KERAS_DISTRIBUTION_PROCESS_ID = "0",
                      KERAS_DISTRIBUTION_NUM_PROCESSES = "3")
  expect_error(distributed_initialize(), "KERASMESH_NUM_PROCESSES",
               class = "kerasmesh_error_distributed_argument")
  # Where they agree, the next check runs.
  withr::local_envvar(KERAS_DISTRIBUTION_NUM_PROCESSES = "2")
  expect_error(distributed_initialize(),
               class = "kerasmesh_error_distributed_started")
})

test_that("distributed_initialize() after JAX started is an error", {
  start_jax()
  expect_error(
    distributed_initialize("127.0.0.1:1234", num_processes = 2, process_id = 0,
                           timeout = 5),
    class = "kerasmesh_error_distributed_started"
  )
  expect_snapshot(
    distributed_initialize("127.0.0.1:1234", 2, 0),
    error = TRUE
  )
  expect_identical(process_count(), 1L)
})

test_that("distributed_initialize() sends whole numbers and launchers' env", {
  withr::local_envvar(SLURM_PROCID = "1", OMPI_COMM_WORLD_SIZE = "2",
                      PMIX_NAMESPACE = "prterun-vm-1@1",
                      JOB_COMPLETION_INDEX = "0", UNRELATED_VARIABLE = "x")
  sent <- shim_request("distributed_initialize", "10.0.0.1:1234",
                       num_processes = 2, process_id = 1, timeout = 60)
  expect_identical(sent$name, "distributed.initialize")
  expect_identical(sent$args[1:4], list(coordinator_address = "10.0.0.1:1234",
                                       num_processes = 2L, process_id = 1L,
                                       timeout = 60L))
  env <- sent$args[[5]]
  expect_identical(env$SLURM_PROCID, "1")
  expect_identical(env$OMPI_COMM_WORLD_SIZE, "2")
  # Open MPI 5's PMIx variables, through which the shim detects it.
  expect_identical(env$PMIX_NAMESPACE, "prterun-vm-1@1")
  expect_identical(env$JOB_COMPLETION_INDEX, "0")
  expect_null(env$UNRELATED_VARIABLE)
  # Not whole: passed on for the shim to refuse with its range.
  expect_identical(
    shim_request("distributed_initialize", process_id = 1.5)$args[[3]], 1.5
  )
  expect_null(shim_request("distributed_initialize")$args[[2]])
  expect_error(shim_request("distributed_initialize", num_processes = "2"),
               class = "kerasmesh_error_distributed_argument")
})

test_that("verbose follows the option, else KERASMESH_VERBOSE", {
  withr::local_options(kerasmesh.verbose = NULL)
  withr::local_envvar(KERASMESH_VERBOSE = "yes")
  expect_true(kerasmesh:::kerasmesh_verbose())
  withr::local_envvar(KERASMESH_VERBOSE = "0")
  expect_false(kerasmesh:::kerasmesh_verbose())
  withr::local_options(kerasmesh.verbose = TRUE)
  expect_true(kerasmesh:::kerasmesh_verbose())
  withr::local_options(kerasmesh.verbose = "yes")
  expect_error(launch_local(identity), 'getOption("kerasmesh.verbose")',
               fixed = TRUE, class = "kerasmesh_error_argument")
})

test_that("distributed_shutdown() outside a run leaves nothing", {
  skip_if_no_keras()
  expect_false(distributed_shutdown())
  expect_invisible(distributed_shutdown())
  expect_identical(process_count(), 1L)
})
