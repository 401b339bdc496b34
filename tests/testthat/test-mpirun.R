# mpirun (Open MPI 4 on Debian 12, Open MPI 5 on Debian 13) starts two
# Rscript workers on loopback; each calls distributed_initialize() with no
# arguments and trains the MLP on its share of the data. `make setup`
# installs Debian's openmpi-bin.

skip_if_no_mpirun <- function() {
  if (!nzchar(Sys.which("mpirun"))) {
    if (identical(Sys.getenv("KERASMESH_REQUIRE_PYTHON"), "true")) {
      stop("mpirun is required (run `make setup`, which installs openmpi-bin).")
    }
    skip("mpirun (Open MPI) is not installed.")
  }
}

# The major version of Open MPI's mpirun.
mpirun_major <- function() {
  version <- system2("mpirun", "--version", stdout = TRUE, stderr = TRUE)
  major <- regmatches(version, regexpr("(?<=Open MPI\\) )[0-9]+", version,
                                       perl = TRUE))
  as.integer(major[1])
}

# mpirun's flags that keep it on loopback. Open MPI 4's out-of-band
# channel takes `lo`, and its address is the coordinator's; Open MPI 5's
# refuses loopback for it, and the coordinator's address is that of its
# PMIx server, which does take `lo`.
mpirun_loopback_flags <- function(major) {
  if (major >= 5) {
    c("--pmixmca", "ptl_base_if_include", "lo")
  } else {
    c("--mca", "oob_tcp_if_include", "lo", "--mca", "btl_tcp_if_include", "lo")
  }
}

source(test_path("workers", "train-mlp.R"), local = TRUE)

test_that("2 processes under mpirun train like 1 process with 8 devices", {
  skip_if_no_workers()
  skip_if_no_mpirun()
  major <- mpirun_major()
  dir <- withr::local_tempdir()
  result <- file.path(dir, "result-%d.rds")
  env <- c(worker_base_env(result),
           TRAIN_MLP = normalizePath(test_path("workers", "train-mlp.R")),
           JAX_COORDINATOR_BIND_ADDRESS = "127.0.0.1")
  exported <- as.vector(rbind("-x", names(env)))
  args <- c(
    "--allow-run-as-root", "--oversubscribe", mpirun_loopback_flags(major),
    "-np", "2", exported,
    file.path(R.home("bin"), "Rscript"),
    normalizePath(test_path("workers", "launcher-worker.R"))
  )
  output <- file.path(dir, "mpirun.txt")
  mpirun <- kerasmesh:::start_group(
    Sys.which("mpirun"), args, kerasmesh:::child_env(env), output
  )
  pgid <- mpirun$get_pid()
  withr::defer(kerasmesh:::kill_group(pgid))
  mpirun$wait(55000)
  timed_out <- mpirun$is_alive()
  kerasmesh:::kill_group(pgid)
  mpirun$wait(2000)
  lines <- readLines(output, warn = FALSE)

  expect_false(timed_out)
  expect_identical(mpirun$get_exit_status(), 0L,
                   info = paste(utils::tail(lines, 30), collapse = "\n"))
  values <- lapply(sprintf(result, 0:1), readRDS)
  for (i in 1:2) {
    v <- values[[i]]
    expect_identical(v$info$process_index, i - 1L)
    expect_identical(v$info$process_count, 2L)
    expect_identical(v$info$device_count, 8L)
    expect_match(v$info$coordinator_address, "^127\\.0\\.0\\.1:")
    expect_identical(v$info$coordinator_address,
                     values[[1]]$info$coordinator_address)
    if (major >= 5) {
      # JAX 0.10 does not detect Open MPI 5; kerasmesh reads PMIx's
      # variables and derives the port from the job's namespace.
      expect_null(v$detected)
      expect_gte(as.integer(sub(".*:", "", v$info$coordinator_address)),
                 61440L)
    } else {
      # The coordinator, count and id of JAX's own Open MPI detection.
      expect_identical(v$info$coordinator_address,
                       v$detected$coordinator_address)
      expect_identical(v$detected$num_processes, 2L)
      expect_identical(v$detected$process_id, i - 1L)
    }
  }
  expect_identical(values[[1]]$loss, values[[2]]$loss)
  reference <- train_shared_mlp(shared_data()$x, shared_data()$y)
  expect_equal(values[[1]]$loss, reference$loss, tolerance = 1e-5)
  expect_lte(max_abs_diff(values[[1]]$weights, reference$weights), 1e-5)
  # Nothing of the run is left.
  expect_length(group_members(pgid), 0)
  expect_length(processes_running(args[length(args)]), 0)
  # Quiet: no C++ warnings of the coordination service.
  expect_false(any(grepl("^[IW][0-9]{4} ", lines)))
})
