# distributed_initialize() with no arguments under the variables that srun,
# Open MPI 5's mpirun and a Kubernetes indexed Job set: two Rscript workers
# on this machine, coordinator on 127.0.0.1. (mpirun itself runs in
# test-mpirun.R.)

launcher_run <- function(envs) {
  dir <- withr::local_tempdir()
  result <- file.path(dir, "result-%d.rds")
  envs <- lapply(envs, function(env) {
    c(worker_base_env(result), JAX_COORDINATOR_BIND_ADDRESS = "127.0.0.1",
      env)
  })
  run <- run_workers(test_path("workers", "launcher-worker.R"), envs,
                     timeout = 55)
  files <- sprintf(result, seq_along(envs) - 1)
  run$values <- lapply(files, function(f) if (file.exists(f)) readRDS(f))
  run
}

expect_workers_ok <- function(run) {
  expect_false(run$timed_out)
  expect_identical(run$exit, rep(0L, length(run$exit)),
                   info = paste(utils::tail(unlist(run$output), 30),
                                collapse = "\n"))
  expect_false(any(alive(run$pids)))
}

test_that("srun's variables give the coordinator, count and id JAX finds", {
  skip_if_no_workers()
  port <- free_slurm_port()
  job <- as.character(port - 61440L)
  srun <- function(id) {
    c(SLURM_JOB_ID = job, SLURM_JOBID = job, SLURM_STEP_ID = "0",
      SLURM_STEP_NODELIST = "localhost", SLURM_JOB_NODELIST = "localhost",
      SLURM_NODELIST = "localhost", SLURM_NTASKS = "2", SLURM_NPROCS = "2",
      SLURM_STEP_NUM_NODES = "1", SLURM_NNODES = "1", SLURM_NODEID = "0",
      SLURM_STEP_NUM_TASKS = "2", SLURM_TASKS_PER_NODE = "2",
      SLURM_STEP_TASKS_PER_NODE = "2", SLURMD_NODENAME = "localhost",
      SLURM_PROCID = id, SLURM_LOCALID = id)
  }
  run <- launcher_run(list(srun("0"), srun("1")))
  expect_workers_ok(run)
  for (i in 1:2) {
    v <- run$values[[i]]
    expect_identical(v$info$coordinator_address, paste0("localhost:", port))
    expect_identical(v$info$coordinator_address,
                     v$detected$coordinator_address)
    expect_identical(v$info$process_count, 2L)
    expect_identical(v$detected$num_processes, 2L)
    expect_identical(v$info$process_index, i - 1L)
    expect_identical(v$detected$process_id, i - 1L)
    expect_identical(v$info$device_count, 8L)
  }
})

test_that("a Kubernetes indexed Job's variables give coordinator and id", {
  skip_if_no_workers()
  address <- paste0("127.0.0.1:", kerasmesh:::free_port())
  job <- function(index) {
    c(JOB_COMPLETION_INDEX = index, JAX_COORDINATOR_ADDRESS = address,
      KERASMESH_NUM_PROCESSES = "2")
  }
  run <- launcher_run(list(job("0"), job("1")))
  expect_workers_ok(run)
  for (i in 1:2) {
    v <- run$values[[i]]
    expect_identical(v$info$coordinator_address, address)
    expect_identical(v$detected$coordinator_address, address)
    expect_identical(v$info$process_index, i - 1L)
    expect_identical(v$detected$process_id, i - 1L)
    expect_identical(v$info$process_count, 2L)
    expect_identical(v$info$device_count, 8L)
  }
})

test_that("Open MPI 5's PMIx variables give the coordinator, count and id", {
  skip_if_no_workers()
  port <- as.character(kerasmesh:::free_port())
  # What Open MPI 5's mpirun sets (no OMPI_MCA_orte_hnp_uri); JAX 0.10
  # does not detect it. JAX_COORDINATOR_PORT picks a free port.
  mpirun5 <- function(rank) {
    c(OMPI_COMM_WORLD_SIZE = "2", OMPI_COMM_WORLD_RANK = rank,
      OMPI_COMM_WORLD_LOCAL_RANK = rank, OMPI_COMM_WORLD_LOCAL_SIZE = "2",
      PMIX_RANK = rank, PMIX_NAMESPACE = "prterun-localhost-4242@1",
      PMIX_SERVER_URI2 = "prterun-localhost-4242@0.0;tcp4://127.0.0.1:1",
      JAX_COORDINATOR_PORT = port)
  }
  run <- launcher_run(list(mpirun5("0"), mpirun5("1")))
  expect_workers_ok(run)
  for (i in 1:2) {
    v <- run$values[[i]]
    expect_identical(v$info$coordinator_address, paste0("127.0.0.1:", port))
    expect_null(v$detected)
    expect_identical(v$info$process_index, i - 1L)
    expect_identical(v$info$process_count, 2L)
    expect_identical(v$info$device_count, 8L)
  }
})

test_that("incomplete or clashing launcher variables are named", {
  skip_if_no_keras()
  withr::local_envvar(
    KERAS_DISTRIBUTION_JOB_ADDRESSES = NA,
    KERAS_DISTRIBUTION_NUM_PROCESSES = NA,
    KERAS_DISTRIBUTION_PROCESS_ID = NA,
    SLURM_PROCID = "0", SLURM_NTASKS = NA
  )
  expect_snapshot(distributed_initialize(timeout = 5), error = TRUE)
  withr::local_envvar(
    SLURM_NTASKS = "2", SLURM_JOB_ID = "1", SLURM_STEP_NODELIST = "localhost",
    SLURM_LOCALID = "0", OMPI_COMM_WORLD_RANK = "0"
  )
  expect_snapshot(distributed_initialize(timeout = 5), error = TRUE)
  withr::local_envvar(OMPI_COMM_WORLD_RANK = NA, SLURM_PROCID = "2")
  expect_snapshot(distributed_initialize(timeout = 5), error = TRUE)
})

test_that("a coordinator that can't be reached is named with its launcher", {
  skip_if_no_workers()
  dir <- withr::local_tempdir()
  script <- file.path(dir, "alone.R")
  writeLines(c(
    "e <- tryCatch(kerasmesh::distributed_initialize(timeout = 4),",
    "              error = function(e) e)",
    "saveRDS(list(class = class(e), message = conditionMessage(e)),",
    "        Sys.getenv('RESULT'))"
  ), script)
  port <- free_slurm_port()
  job <- as.character(port - 61440L)
  result <- file.path(dir, "result.rds")
  # Process 1 of a Slurm step whose process 0 never starts.
  env <- c(worker_base_env(result),
           SLURM_JOB_ID = job, SLURM_STEP_NODELIST = "localhost",
           SLURM_NTASKS = "2", SLURM_PROCID = "1", SLURM_LOCALID = "1")
  run <- run_workers(script, list(env), timeout = 40)

  expect_false(run$timed_out)
  v <- readRDS(result)
  expect_true("kerasmesh_error_distributed_timeout" %in% v$class)
  expect_match(v$message, paste0("localhost:", port), fixed = TRUE)
  expect_match(v$message, "Slurm", fixed = TRUE)
})
