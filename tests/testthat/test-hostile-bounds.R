# Hostile sizes from issue 21's red team: counts, ids and rows are checked
# against their bounds before anything proportional to them is built, and
# each case answers with a classed error within a hard time limit (see
# helper-timeout.R).

# -- process counts and ids ---------------------------------------------------

test_that("distributed_initialize() refuses 1e12 processes at once", {
  skip_if_no_keras()
  out <- in_fresh_r(function() {
    started <- Sys.time()
    err <- tryCatch(distributed_initialize("127.0.0.1:29871", 1e12, 0,
                                           timeout = 6),
                    error = function(e) e)
    list(class = class(err), message = conditionMessage(err),
         seconds = as.numeric(Sys.time() - started, units = "secs"))
  }, timeout = 60)
  expect_true("kerasmesh_error_distributed_argument" %in% out$class)
  expect_match(out$message, "`num_processes` must be at most 1,048,576",
               fixed = TRUE)
  expect_lt(out$seconds, 5)
})

test_that("process ids beyond the bound are refused", {
  skip_if_no_keras()
  within_seconds({
    expect_error(distributed_initialize("127.0.0.1:29871", 2, 1e15),
                 "at most 1,048,575",
                 class = "kerasmesh_error_distributed_argument")
  })
})

# The shim's view of the launcher's variables in `env`, as
# distributed_initialize() resolves them, without connecting.
resolved_from_env <- function(env) {
  names <- c("KERAS_DISTRIBUTION_JOB_ADDRESSES",
             "KERAS_DISTRIBUTION_NUM_PROCESSES",
             "KERAS_DISTRIBUTION_PROCESS_ID", "SLURM_JOB_ID",
             "SLURM_STEP_NODELIST", "SLURM_NTASKS", "SLURM_PROCID",
             "SLURM_LOCALID", "SLURM_STEP_NUM_NODES", "OMPI_MCA_orte_hnp_uri",
             "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
             "OMPI_COMM_WORLD_LOCAL_RANK", "JOB_COMPLETION_INDEX",
             "JAX_COORDINATOR_ADDRESS", "KERASMESH_NUM_PROCESSES",
             "JAX_COORDINATOR_PORT")
  unset <- stats::setNames(rep(NA_character_, length(names)), names)
  withr::local_envvar(unset)
  withr::local_envvar(env)
  local_shim_export("distributed.resolve_arguments", "distributed.initialize")
  kerasmesh:::shim_call("distributed.resolve_arguments",
                        environ = as.list(kerasmesh:::distribution_env()))
}

ompi <- c(OMPI_MCA_orte_hnp_uri = "3411542016.0;tcp://127.0.0.1:39123",
          OMPI_COMM_WORLD_SIZE = "2", OMPI_COMM_WORLD_RANK = "1")
slurm <- c(SLURM_JOB_ID = "1234", SLURM_STEP_NODELIST = "localhost",
           SLURM_NTASKS = "2", SLURM_PROCID = "1", SLURM_LOCALID = "1")
k8s <- c(JOB_COMPLETION_INDEX = "1",
         JAX_COORDINATOR_ADDRESS = "train-0.train:1234",
         KERASMESH_NUM_PROCESSES = "2")

test_that("every launcher's process count is bounded", {
  skip_if_no_keras()
  within_seconds({
    cases <- list(
      list(env = ompi, var = "OMPI_COMM_WORLD_SIZE"),
      list(env = slurm, var = "SLURM_NTASKS"),
      list(env = k8s, var = "KERASMESH_NUM_PROCESSES"),
      list(env = c(KERAS_DISTRIBUTION_JOB_ADDRESSES = "127.0.0.1:1234",
                   KERAS_DISTRIBUTION_PROCESS_ID = "0"),
           var = "KERAS_DISTRIBUTION_NUM_PROCESSES")
    )
    for (case in cases) {
      env <- case$env
      env[[case$var]] <- "1000000000000"
      expect_error(resolved_from_env(env), case$var, fixed = TRUE,
                   class = "kerasmesh_error_distributed_argument")
    }
  })
})

test_that("over-long launcher variables are classed errors naming them", {
  skip_if_no_keras()
  within_seconds({
    long <- strrep("9", 100000)
    for (var in c("OMPI_COMM_WORLD_SIZE", "OMPI_MCA_orte_hnp_uri")) {
      env <- ompi
      env[[var]] <- long
      expect_error(resolved_from_env(env), var, fixed = TRUE,
                   class = "kerasmesh_error_distributed_argument")
    }
    for (var in c("SLURM_JOB_ID", "SLURM_STEP_NODELIST", "SLURM_PROCID")) {
      env <- slurm
      env[[var]] <- long
      expect_error(resolved_from_env(env), var, fixed = TRUE,
                   class = "kerasmesh_error_distributed_argument")
    }
    env <- c(KERAS_DISTRIBUTION_JOB_ADDRESSES = "127.0.0.1:1234",
             KERAS_DISTRIBUTION_NUM_PROCESSES = long,
             KERAS_DISTRIBUTION_PROCESS_ID = "0")
    expect_error(resolved_from_env(env), "KERAS_DISTRIBUTION_NUM_PROCESSES",
                 class = "kerasmesh_error_distributed_argument")
  })
})

test_that("an Open MPI IPv6 coordinator keeps its brackets", {
  skip_if_no_keras()
  within_seconds({
    env <- ompi
    env[["OMPI_MCA_orte_hnp_uri"]] <- "3411542016.0;tcp6://[::1,fe80::1]:39123"
    args <- resolved_from_env(env)
    expect_match(args$coordinator_address, "^\\[::1\\]:[0-9]+$")
    expect_identical(args$launcher, "Open MPI")
  })
})

# -- process_rows() and process_data() ---------------------------------------

test_that("process_rows() needs memory about the size of its result", {
  skip_if_not(file.exists("/proc/self/status"), "no /proc (not Linux)")
  out <- callr::r(function() {
    peak <- function() {
      line <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
      as.numeric(gsub("[^0-9]", "", line)) * 1024
    }
    library(kerasmesh)
    invisible(process_rows(64, 16, 0, 2))
    gc()
    before <- peak()
    rows <- process_rows(2^26, 1024, 0, 2)
    c(growth = peak() - before, result = as.numeric(object.size(rows)))
  }, timeout = 120)
  # The result is 128 MB; making it the old way (outer()) took 6 times that.
  expect_lt(out[["growth"]] / out[["result"]], 2)
})

test_that("process_rows() still gives each process its rows", {
  expect_identical(process_rows(20, 8, 0, 2), c(1:4, 9:12, 17:18))
  expect_identical(process_rows(7, 8, 0, 1), 1:7)
  expect_identical(process_rows(8, 8, 1, 2), 5:8)
  expect_type(process_rows(2^20, 1024, 1, 2), "integer")
})

test_that("process_data() refuses rows that are not rows of x", {
  x <- 1:10
  cases <- list(c(1, 11), c(-1, 2), 0, c(NA, 2), 2.5, c(TRUE, FALSE),
                "1", c(1, Inf), NaN)
  for (rows in cases) {
    expect_error(process_data(x, batch_size = 2, rows = rows), "rows",
                 class = "kerasmesh_error_argument")
  }
  m <- matrix(as.numeric(1:20), 10)
  expect_error(process_data(m, m[, 1], batch_size = 2, rows = c(1, 11)),
               "Bad row number: 11", class = "kerasmesh_error_argument")
  expect_snapshot(error = TRUE, {
    process_data(x, batch_size = 2, rows = c(1, 10, 11, 12))
    process_data(x, batch_size = 2, rows = c(-1, NA))
    process_data(x, batch_size = 2, rows = c(TRUE, FALSE))
  })
})

# -- siblings: other sizes from user input -------------------------------------

test_that("process_rows() bounds the process count as distributed runs do", {
  expect_error(process_rows(10, 2^21, 0, 2^21), "at most 1,048,576",
               class = "kerasmesh_error_argument")
  expect_identical(process_rows(2^20, 2^20, 2^20 - 1, 2^20), 1048576L)
})

test_that("layout_cost() refuses input shapes beyond R's integers", {
  dist <- fixture_distribution()
  # Before: as.integer() made them NA, an unknown dimension, silently.
  expect_error(layout_cost(function() stop("not built"), dist, 16,
                           input_shapes = list(ids = 3e9)),
               class = "kerasmesh_error_input_shapes")
})

test_that("bytes_text() words infinite and negative counts without NA", {
  expect_no_warning(out <- bytes_text(c(Inf, -Inf, -5)))
  expect_identical(out, c("Inf B", "-Inf B", "-5 B"))
})
