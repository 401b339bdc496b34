# Red-team cases for multi-process runs: each must end, within a hard
# timeout, in a classed error or a clean result, leaving nothing behind.

test_that("absurd process and device counts are refused", {
  withr::local_options(kerasmesh.max_processes = 64)
  expect_snapshot(error = TRUE, {
    launch_local(identity, processes = 1e9)
    launch_local(identity, processes = 3e9)
    launch_local(identity, devices_per_process = 3e9)
  })
  withr::local_options(kerasmesh.max_processes = 3)
  expect_error(launch_local(identity, processes = 4),
               "at most 3", class = "kerasmesh_error_argument")
  own <- c(KERAS_DISTRIBUTION_PROCESS_ID = "5")
  expect_error(launch_local(identity, env = own),
               "KERAS_DISTRIBUTION_PROCESS_ID",
               class = "kerasmesh_error_argument")
  err <- expect_error(launch_local(identity, env = c(SLURM_PROCID = "1")),
                      "can't set a launcher's variables",
                      class = "kerasmesh_error_argument")
  expect_match(conditionMessage(err), "SLURM_PROCID")
  expect_no_match(conditionMessage(err), "XLA_FLAGS")
  expect_error(launch_local(identity, env = c(FOO = "1", FOO = "2")),
               "Named more than once: `FOO`",
               class = "kerasmesh_error_argument")
  expect_error(launch_local(identity, env = c("A B" = "1")),
               "Not a variable's name: \"A B\"", fixed = TRUE,
               class = "kerasmesh_error_argument")
  expect_error(launch_local(tempdir()), "is a directory",
               class = "kerasmesh_error_argument")
  expect_error(launch_local(identity, env = c(JAX_NUM_CPU_DEVICES = "2")),
               "JAX_NUM_CPU_DEVICES", class = "kerasmesh_error_argument")
  expect_error(launch_local(identity, env = c(LONG = strrep("a", 2e5))),
               "`LONG` has 200,005 bytes", class = "kerasmesh_error_argument")
  script <- withr::local_tempfile(fileext = ".R", lines = "1")
  expect_error(launch_local(script, args = list(1)), "a script takes none",
               class = "kerasmesh_error_argument")
  withr::local_options(kerasmesh.max_processes = -1)
  expect_error(launch_local(identity, processes = 1),
               "Received a number (-1)", fixed = TRUE,
               class = "kerasmesh_error_argument")
})

test_that("launch_local() leaves the random number stream as it was", {
  skip_if_not_installed("processx")
  set.seed(1)
  expected <- runif(3)
  set.seed(1)
  launch_local(function() 1, processes = 2, timeout = 30)
  expect_identical(runif(3), expected)
})

test_that("a worker's own child process does not outlive launch_local()", {
  skip_if_not_installed("processx")
  skip_on_os("windows")
  res <- launch_local(function() {
    pid_file <- tempfile()
    system(paste("sh -c 'sleep 300 & echo $! >", pid_file, "'"))
    as.integer(readLines(pid_file))
  }, processes = 2, timeout = 30)
  expect_identical(res$status, c("ok", "ok"))
  children <- unlist(res$value)
  expect_length(children, 2)
  Sys.sleep(0.2)
  expect_false(any(alive(children)))
  expect_false(any(alive(res$pid)))
})

test_that("an interrupt stops launch_local() promptly, workers and all", {
  skip_if_not_installed("callr")
  skip_if_not_installed("processx")
  skip_on_os("windows")
  dir <- withr::local_tempdir()
  parent <- callr::r_bg(function(dir) {
    kerasmesh::launch_local(function(dir) {
      writeLines(as.character(Sys.getpid()),
                 file.path(dir, paste0("worker-", Sys.getpid())))
      Sys.sleep(300)
    }, processes = 2, timeout = 120, args = list(dir = dir))
  }, args = list(dir = dir), libpath = .libPaths())
  withr::defer(parent$kill_tree())
  deadline <- Sys.time() + 30
  while (length(list.files(dir)) < 2 && Sys.time() < deadline) {
    Sys.sleep(0.1)
  }
  workers <- as.integer(unlist(lapply(list.files(dir, full.names = TRUE),
                                      readLines)))
  expect_length(workers, 2)
  expect_true(all(alive(workers)))

  parent$interrupt()
  interrupted <- Sys.time()
  parent$wait(10000)
  expect_false(parent$is_alive())
  expect_lt(as.numeric(difftime(Sys.time(), interrupted, units = "secs")), 10)
  Sys.sleep(0.2)
  expect_false(any(alive(workers)))
})

test_that("a coordinator port in use is a classed error, not a crash", {
  skip_if_no_workers()
  res <- launch_local(function() {
    socket <- reticulate::import("socket")
    taken <- socket$socket()
    taken$bind(reticulate::tuple("127.0.0.1", 0L))
    taken$listen()
    port <- taken$getsockname()[[2]]
    e <- tryCatch(
      kerasmesh::distributed_initialize(
        paste0("127.0.0.1:", port), num_processes = 2, process_id = 0,
        timeout = 10, bind_address = "127.0.0.1"
      ),
      error = function(e) e
    )
    list(class = class(e), message = conditionMessage(e), port = port)
  }, processes = 1, timeout = 50)

  expect_identical(res$status, "ok")
  v <- res$value[[1]]
  expect_true("kerasmesh_error_distributed_connect" %in% v$class)
  expect_match(v$message, paste("port", v$port, "is in use"))
})

# Each worker joins with the id and count `join(id)` gives, catching the
# error; returns the classes and messages.
join_run <- function(join, processes) {
  launch_local(function(join) {
    id <- as.integer(Sys.getenv("KERAS_DISTRIBUTION_PROCESS_ID"))
    how <- join(id)
    started <- Sys.time()
    e <- tryCatch(
      kerasmesh::distributed_initialize(
        Sys.getenv("KERAS_DISTRIBUTION_JOB_ADDRESSES"),
        num_processes = how[["n"]], process_id = how[["id"]], timeout = 20
      ),
      error = function(e) e
    )
    list(class = class(e), message = conditionMessage(e),
         elapsed = as.numeric(difftime(Sys.time(), started, units = "secs")))
  }, processes = processes, timeout = 55, args = list(join = join))
}

# Every worker of `res` ran to its end and caught, within 20 s, a
# connection error whose message matches `pattern`.
expect_every_process_fails <- function(res, pattern) {
  expect_identical(res$status, rep("ok", length(res)),
                   info = paste(unlist(res$output), collapse = "\n"))
  for (v in res$value) {
    expect_true("kerasmesh_error_distributed_connect" %in% v$class)
    expect_match(v$message, pattern)
    expect_lt(v$elapsed, 20)
  }
}

test_that("two processes with the same process id fail in every process", {
  skip_if_no_workers()
  res <- join_run(function(id) c(id = min(id, 1), n = 2), processes = 3)
  expect_every_process_fails(res, "process id 1")
})

test_that("processes that disagree on num_processes fail in every process", {
  skip_if_no_workers()
  res <- join_run(function(id) c(id = id, n = if (id == 0) 2 else 3),
                  processes = 3)
  expect_every_process_fails(res, "disagree on the number of processes")
})
