# Several processes, one run: workers started by launch_local() join one
# distributed run over 127.0.0.1, each with 4 simulated CPU devices.
#
# Workers load the installed kerasmesh: under R CMD check the one being
# checked; under testthat::test_local() run `R CMD INSTALL .` first.

source(test_path("workers", "train-mlp.R"), local = TRUE)

test_that("2 processes x 4 devices train like 1 process with 8 devices", {
  skip_if_no_workers()
  data <- shared_data()
  res <- launch_local(function(train, x, y, listeners) {
    info <- kerasmesh::distributed_initialize(timeout = 60)
    jax <- reticulate::import("jax")
    local <- vapply(jax$local_devices(), function(d) {
      paste0(d$platform, ":", d$id)
    }, character(1))
    mesh <- kerasmesh::device_mesh(c(data = 2, model = 4))
    trained <- train(x, y)
    c(
      list(info = info, devices = kerasmesh::list_devices(), local = local,
           mesh = kerasmesh::mesh_devices(mesh), listeners = listeners()),
      trained
    )
  }, processes = 2, devices_per_process = 4, timeout = 55,
  args = list(train = train_shared_mlp, x = data$x, y = data$y,
              listeners = own_listeners))

  expect_identical(res$status, c("ok", "ok"), info = paste(
    utils::tail(unlist(res$output), 20), collapse = "\n"
  ))
  w0 <- res$value[[1]]
  w1 <- res$value[[2]]
  # Each process sees the 8 devices of both; the mesh spans both.
  expect_identical(c(w0$info$process_index, w1$info$process_index), 0:1)
  expect_identical(w0$info$process_count, 2L)
  expect_identical(w0$info$device_count, 8L)
  expect_identical(w0$info$local_device_count, 4L)
  expect_length(w0$devices, 8)
  expect_identical(w0$devices, w1$devices)
  expect_length(intersect(w0$local, w1$local), 0)
  expect_setequal(c(w0$local, w1$local), w0$devices)
  expect_setequal(as.vector(w0$mesh), w0$devices)
  expect_identical(w0$mesh, w1$mesh)
  # Each fed its half of every global batch of 16.
  expect_identical(w0$rows[1:9], c(1:8, 17L))
  expect_identical(w1$rows[1:9], c(9:16, 25L))
  # The coordinator and gloo listened on 127.0.0.1 only.
  for (w in list(w0, w1)) {
    expect_gt(NROW(w$listeners), 0)
    expect_true(all(is_loopback(w$listeners[, "file"],
                                w$listeners[, "local"])))
  }
  expect_gt(NROW(w0$listeners), NROW(w1$listeners)) # the coordinator
  # No log chatter of gloo or the coordination service by default.
  expect_identical(grep("Gloo|coordination", unlist(res$output), value = TRUE),
                   character())
  # Both processes saw the same global batches.
  expect_length(w0$loss, 3)
  expect_identical(w0$loss, w1$loss)
  expect_identical(w0$weights, w1$weights)

  # The same global data in this process, on its 8 simulated devices.
  reference <- train_shared_mlp(data$x, data$y)
  expect_equal(w0$loss, reference$loss, tolerance = 1e-5)
  diffs <- mapply(function(a, b) max(abs(a - b)), w0$weights,
                  reference$weights)
  expect_lte(max(diffs), 1e-5)
  expect_false(any(alive(res$pid)))
})

test_that("processes that finish at different times all end cleanly", {
  skip_if_no_workers()
  # Process 0 hosts the coordination service: had it left first, process 1
  # would be ended by the lost service.
  res <- launch_local(function() {
    info <- kerasmesh::distributed_initialize(timeout = 60)
    Sys.sleep(3 * info$process_index)
    info$process_index
  }, processes = 2, devices_per_process = 4, timeout = 55)
  expect_identical(res$status, c("ok", "ok"), info = paste(
    utils::tail(unlist(res$output), 20), collapse = "\n"
  ))
  expect_identical(unlist(res$value), 0:1)
  expect_identical(unlist(res$output), character())
})

test_that("a process whose peer never starts fails within the timeout", {
  skip_if_no_workers()
  # One worker, told that the run has two processes: process 1 never comes.
  res <- launch_local(function() {
    reticulate::import("keras") # start Python before the clock does
    started <- Sys.time()
    e <- tryCatch(
      kerasmesh::distributed_initialize(num_processes = 2, process_id = 0,
                                        timeout = 8),
      error = function(e) e
    )
    list(
      class = class(e), message = conditionMessage(e),
      elapsed = as.numeric(difftime(Sys.time(), started, units = "secs")),
      # The process carries on, on its own.
      count = kerasmesh::process_count(),
      devices = length(kerasmesh::list_devices())
    )
  }, processes = 1, timeout = 120)

  expect_identical(res$status, "ok")
  v <- res$value[[1]]
  expect_true("kerasmesh_error_distributed_timeout" %in% v$class)
  expect_true("kerasmesh_error" %in% v$class)
  expect_match(v$message, res$coordinator_address, fixed = TRUE)
  expect_match(v$message, "timeout of 8 s", fixed = TRUE)
  expect_gte(v$elapsed, 4)
  expect_lte(v$elapsed, 8 + 4)
  expect_identical(v$count, 1L)
  expect_identical(v$devices, 4L)
})

test_that("launch_local() reports a worker killed mid-run and stops the rest", {
  skip_if_no_workers()
  skip_on_os("windows")
  started <- Sys.time()
  res <- launch_local(function() {
    info <- kerasmesh::distributed_initialize(timeout = 60)
    keras <- reticulate::import("keras")
    kerasmesh::set_distribution(
      kerasmesh::data_parallel(auto_shard_dataset = FALSE)
    )
    model <- keras$Sequential(list(
      keras$Input(shape = list(4L)), keras$layers$Dense(4L)
    ))
    model$compile(optimizer = "sgd", loss = "mse")
    x <- kerasmesh::numpy_array(matrix(1, 16, 4))
    model$fit(x, x, epochs = 1L, batch_size = 8L, verbose = 0L)
    if (info$process_index == 1) {
      tools::pskill(Sys.getpid(), tools::SIGKILL)
    }
    # Process 0 now waits on process 1 in every step.
    model$fit(x, x, epochs = 100000L, batch_size = 8L, verbose = 0L)
  }, processes = 2, timeout = 120)
  elapsed <- as.numeric(difftime(Sys.time(), started, units = "secs"))

  expect_identical(res$status[2], "killed")
  expect_identical(res$exit_status[2], -9L)
  expect_match(conditionMessage(res$error[[2]]), "Process 1 died")
  expect_true(res$status[1] %in% c("stopped", "error", "killed"))
  expect_lt(elapsed, 90)
  expect_false(any(alive(res$pid)))
})
