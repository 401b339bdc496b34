# Sharded checkpoints: save on one mesh, restore onto another; steps cut
# short; a run of 2 processes killed and resumed from its last checkpoint.

mlp_distribution <- function(shape) {
  kerasmesh::model_parallel(book_layout(kerasmesh::device_mesh(shape)),
                            batch_dim_name = "data")
}

optimizer_values <- function(model) {
  variable_values(model$optimizer)
}

scrub_dir <- function(lines) {
  lines <- gsub("[0-9a-f]{32}", "<hash>", lines)
  gsub("/[^ ]*/(checkpoint|nothing)[^ ]*", "<dir>", lines)
}

test_that("a checkpoint saved on a 2 x 4 mesh restores exactly onto 8 x 1", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  data <- mlp_data()
  model <- with_distribution(mlp_distribution(c(data = 2, model = 4)), {
    train_mlp(build_mlp(), data, epochs = 2L)
  })
  saved <- save_checkpoint(model, dir)
  expect_identical(saved$step, 8L)

  fresh <- with_distribution(mlp_distribution(c(data = 8, model = 1)), {
    build_mlp()
  })
  expect_gt(max_abs_diff(variable_values(model), variable_values(fresh)), 0)
  restored <- restore_checkpoint(fresh, dir)

  expect_identical(restored$step, 8L)
  expect_identical(
    max_abs_diff(variable_values(model), variable_values(fresh)), 0
  )
  expect_identical(names(optimizer_values(fresh)),
                   names(optimizer_values(model)))
  expect_identical(
    max_abs_diff(optimizer_values(model), optimizer_values(fresh)), 0
  )
  # Each variable lives where the 8 x 1 layout puts it.
  placed <- variable_sharding(fresh)
  expect_identical(mesh_shape(attr(placed, "mesh")), c(data = 8L, model = 1L))
  kernel <- placed[placed$path == "sequential/dense/kernel", ]
  expect_identical(kernel$axes[[1]], c(NA, "model"))

  info <- checkpoint_info(dir)
  expect_s3_class(info, "kerasmesh_checkpoint_info")
  expect_identical(info$steps$step, 8L)
  expect_true(info$last_complete)
  v <- info$variables
  row <- v[v$key == "trainable_variables/sequential/dense/kernel", ]
  expect_identical(row$shape[[1]], c(32L, 64L))
  expect_identical(row$axes[[1]], c(NA, "model"))
  expect_identical(row$mesh, "data=2, model=4")
  expect_true(any(v$group == "optimizer_variables"))
})

test_that("a step cut short is incomplete and the step before restores", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  data <- mlp_data()
  with_distribution(mlp_distribution(c(data = 2, model = 4)), {
    model <- train_mlp(build_mlp(), data, epochs = 1L)
    save_checkpoint(model, dir)
    at_step_4 <- variable_values(model)
    train_mlp(model, data, epochs = 1L)
    save_checkpoint(model, dir)
  })
  # A crash while writing step 8's arrays: part of the step is gone.
  unlink(file.path(dir, "8", "pytree", "d"), recursive = TRUE)
  # And one killed before Orbax renamed its temporary directory.
  dir.create(file.path(dir, "12.orbax-checkpoint-tmp-1700000000"))

  info <- checkpoint_info(dir)
  expect_identical(info$steps$step, c(4L, 8L, 12L))
  expect_identical(info$steps$complete, c(TRUE, FALSE, FALSE))
  expect_match(info$steps$problem[2], "missing")
  expect_match(info$steps$problem[3], "did not finish")
  expect_false(info$last_complete)
  expect_identical(info$step, 4L)
  expect_snapshot(print(info), transform = scrub_dir)

  fresh <- with_distribution(mlp_distribution(c(data = 8, model = 1)), {
    build_mlp()
  })
  # Restoring the newest complete step says which newer ones it passed.
  w <- expect_warning(restored <- restore_checkpoint(fresh, dir),
                      class = "kerasmesh_warning_checkpoint_fallback")
  expect_match(conditionMessage(w), "Step 8 is not usable", fixed = TRUE)
  expect_identical(restored$step, 4L)
  expect_identical(max_abs_diff(at_step_4, variable_values(fresh)), 0)
  expect_error(restore_checkpoint(fresh, dir, step = 8),
               class = "kerasmesh_error_checkpoint_incomplete")
})

test_that("bad checkpoints are classed errors that name the variable", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  with_distribution(mlp_distribution(c(data = 2, model = 4)), {
    save_checkpoint(build_mlp(), dir)
  })
  keras <- keras()
  # Another shape for dense/kernel.
  other <- with_distribution(mlp_distribution(c(data = 8, model = 1)), {
    keras$utils$set_random_seed(3L)
    m <- keras$Sequential(list(
      keras$Input(shape = list(32L)),
      keras$layers$Dense(48L, name = "dense"),
      keras$layers$Dense(16L, name = "dense_1")
    ), name = "sequential")
    m$compile(optimizer = "adam", loss = "mse")
    m
  })
  before <- variable_values(other)
  expect_snapshot(error = TRUE, restore_checkpoint(other, dir))
  e <- tryCatch(restore_checkpoint(other, dir), error = identity)
  expect_s3_class(e, "kerasmesh_error_checkpoint_shape")
  expect_s3_class(e, "kerasmesh_error")
  expect_identical(max_abs_diff(before, variable_values(other)), 0)

  # Other names.
  renamed <- keras$Sequential(list(
    keras$Input(shape = list(32L)),
    keras$layers$Dense(64L, name = "hidden"),
    keras$layers$Dense(16L, name = "dense_1")
  ), name = "sequential")
  e <- tryCatch(restore_checkpoint(renamed, dir), error = identity)
  expect_s3_class(e, "kerasmesh_error_checkpoint_variables")
  expect_match(conditionMessage(e), "sequential/hidden/kernel", fixed = TRUE)

  # A mesh that can't hold a saved shape (64 columns over 3 devices): the
  # target model can't be built on it, an error naming the variable, before
  # any restore. (restore_checkpoint() checks again; see test_checkpoint.py.)
  mesh23 <- device_mesh(c(data = 2, model = 3), devices = 6)
  e <- tryCatch(
    with_distribution(model_parallel(book_layout(mesh23)), build_mlp()),
    error = identity
  )
  expect_s3_class(e, "kerasmesh_error_layout_divisibility")
  expect_match(conditionMessage(e), "sequential/dense/kernel", fixed = TRUE)
  expect_identical(checkpoint_info(dir)$steps$complete, TRUE)

  # Not a checkpoint.
  empty <- withr::local_tempdir("nothing")
  expect_snapshot(error = TRUE, checkpoint_info(empty),
                  transform = scrub_dir)
  expect_error(restore_checkpoint(other, empty),
               class = "kerasmesh_error_checkpoint_directory")
  expect_error(save_checkpoint(build_mlp(), dir),
               class = "kerasmesh_error_checkpoint_exists")
})

test_that("checkpoint functions check their arguments", {
  expect_snapshot(error = TRUE, {
    save_checkpoint("model", "dir")
    restore_checkpoint(list(), "dir")
    checkpoint_info(c("a", "b"))
    checkpoint_info("dir", step = -1)
    callback_checkpoint("dir", every = 0)
    callback_checkpoint("dir", unit = "batch")
    callback_checkpoint("dir", keep = 1.5)
  })
})

test_that("steps out of range are classed errors naming step and value", {
  for (bad in list(1e10, Inf, -1, NA, 2.5, NaN, -Inf)) {
    e <- expect_error(
      expect_warning(checkpoint_info("dir", step = bad), NA),
      class = "kerasmesh_error_argument"
    )
    expect_match(conditionMessage(e), "`step`", fixed = TRUE)
  }
  expect_snapshot(error = TRUE, {
    checkpoint_info("dir", step = 1e10)
    checkpoint_info("dir", step = Inf)
    checkpoint_info("dir", step = 2.5)
  })
})

test_that("save_checkpoint() refuses a step out of range", {
  skip_if_no_keras()
  e <- expect_error(save_checkpoint(keras(), "dir", step = 1e10),
                    class = "kerasmesh_error_argument")
  expect_match(conditionMessage(e), "`step` must be at most", fixed = TRUE)
})

test_that("a checkpoint dir that is a file or lies under one is named", {
  skip_if_no_keras()
  file <- withr::local_tempfile(lines = "not a directory")
  model <- build_mlp()
  for (dir in c(file, file.path(file, "sub", "ckpt"))) {
    e <- expect_error(save_checkpoint(model, dir),
                      class = "kerasmesh_error_checkpoint_directory")
    expect_match(conditionMessage(e), file, fixed = TRUE)
    e <- expect_error(checkpoint_info(dir),
                      class = "kerasmesh_error_checkpoint_directory")
    expect_match(conditionMessage(e), file, fixed = TRUE)
  }
  e <- expect_error(restore_checkpoint(model, file),
                    class = "kerasmesh_error_checkpoint_directory")
  expect_match(conditionMessage(e), "is a file", fixed = TRUE)
})

test_that("keep and overwrite never touch a folder kerasmesh did not save", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  for (name in c("5", "123")) {
    dir.create(file.path(dir, name))
    writeLines("mine", file.path(dir, name, "data.csv"))
  }
  model <- build_mlp()
  save_checkpoint(model, dir, step = 1, keep = 1)
  save_checkpoint(model, dir, step = 2, keep = 1)
  expect_identical(sort(list.files(dir)), c("123", "2", "5"))
  expect_identical(readLines(file.path(dir, "5", "data.csv")), "mine")
  info <- checkpoint_info(dir)
  expect_identical(info$steps$step, c(2L, 5L, 123L))
  expect_identical(info$steps$writer, c("kerasmesh", "unknown", "unknown"))
  expect_identical(info$step, 2L)
  e <- expect_error(save_checkpoint(model, dir, step = 5, overwrite = TRUE),
                    class = "kerasmesh_error_checkpoint_exists")
  expect_match(conditionMessage(e), file.path(dir, "5"), fixed = TRUE)
  expect_identical(readLines(file.path(dir, "5", "data.csv")), "mine")
})

test_that("a save below newer steps is refused, or replaces them if asked", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  old <- build_mlp()
  for (step in c(2, 8, 10)) save_checkpoint(old, dir, step = step)
  # A run resumed from step 2 reaches step 5: steps 8 and 10 are the
  # abandoned run's. Saved beside them with `keep = 1`, step 5 was the
  # one pruned (and a restore read step 10).
  resumed <- train_mlp(build_mlp(), mlp_data(), epochs = 1L)
  expect_snapshot(
    error = TRUE, save_checkpoint(resumed, dir, step = 5, keep = 1),
    transform = function(lines) gsub(dir, "<dir>", lines, fixed = TRUE)
  )
  expect_identical(checkpoint_info(dir)$steps$step, c(2L, 8L, 10L))
  save_checkpoint(resumed, dir, step = 5, keep = 1, overwrite = TRUE)
  expect_identical(checkpoint_info(dir)$steps$step, 5L)
  restored <- build_mlp()
  expect_identical(restore_checkpoint(restored, dir)$step, 5L)
  expect_identical(max_abs_diff(variable_values(resumed),
                                variable_values(restored)), 0)
})

test_that("a damaged step is passed over with a warning, or named on request", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  model <- build_mlp()
  save_checkpoint(model, dir, step = 1)
  save_checkpoint(model, dir, step = 2)
  # Flip bytes of one shard of step 2, keeping its size.
  shard <- list.files(file.path(dir, "2", "pytree", "d"), full.names = TRUE)[1]
  bytes <- readBin(shard, "raw", file.size(shard))
  bytes[1:8] <- as.raw(255L - as.integer(bytes[1:8]))
  writeBin(bytes, shard)

  info <- checkpoint_info(dir)
  expect_identical(info$steps$complete, c(TRUE, FALSE))
  expect_match(info$steps$problem[2], "damaged (its checksum differs)",
               fixed = TRUE)
  expect_identical(info$step, 1L)
  w <- expect_warning(restored <- restore_checkpoint(build_mlp(), dir),
                      class = "kerasmesh_warning_checkpoint_fallback")
  expect_match(conditionMessage(w), "Step 2 is not usable", fixed = TRUE)
  expect_identical(restored$step, 1L)
  e <- expect_error(restore_checkpoint(build_mlp(), dir, step = 2),
                    class = "kerasmesh_error_checkpoint_incomplete")
  expect_match(conditionMessage(e), "Step 2", fixed = TRUE)
  expect_match(conditionMessage(e), basename(shard), fixed = TRUE)
})

test_that("a float32 checkpoint into a float16 model names both dtypes", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  save_checkpoint(build_mlp(), dir)
  keras <- keras()
  half <- keras$Sequential(list(
    keras$Input(shape = list(32L)),
    keras$layers$Dense(64L, name = "dense", dtype = "float16"),
    keras$layers$Dense(16L, name = "dense_1", dtype = "float16")
  ), name = "sequential")
  e <- expect_error(restore_checkpoint(half, dir),
                    class = "kerasmesh_error_checkpoint_dtype")
  expect_match(conditionMessage(e), "sequential/dense/kernel", fixed = TRUE)
  expect_match(conditionMessage(e), "Saved as float32; the model's is float16",
               fixed = TRUE)
})

test_that("an overwrite killed between its renames leaves a complete step", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  save_checkpoint(build_mlp(), dir, step = 3)
  old <- variable_values(build_mlp())
  # A save of other weights over step 3, killed (SIGKILL) once the old
  # step is moved away and before the new one is in its place.
  overwrite_killed <- function() {
    keras <- reticulate::import("keras")
    kill_save_at("retired", fixtures)
    keras$utils$set_random_seed(99L)
    model <- keras$Sequential(list(
      keras$Input(shape = list(32L)), keras$layers$Dense(64L, name = "dense"),
      keras$layers$Dense(16L, name = "dense_1")
    ), name = "sequential")
    model$compile(optimizer = "adam", loss = "mse")
    save_checkpoint(model, dir, step = 3, overwrite = TRUE)
  }
  environment(overwrite_killed) <- list2env(
    list(dir = dir, fixtures = fixture_path(), kill_save_at = kill_save_at),
    parent = globalenv()
  )
  killed <- tryCatch(in_fresh_r(overwrite_killed, timeout = 120),
                     error = identity)
  expect_s3_class(killed, "error")
  info <- checkpoint_info(dir)
  expect_identical(info$steps$step, 3L)
  expect_true(info$steps$complete)
  restored <- build_mlp()
  expect_identical(restore_checkpoint(restored, dir)$step, 3L)
  expect_gt(max_abs_diff(old, variable_values(restored)), 0)
  save_checkpoint(build_mlp(), dir, step = 4)
  expect_identical(sort(list.files(dir, all.files = TRUE, no.. = TRUE)),
                   c(".kerasmesh.lock", "3", "4"))
})

test_that("Keras's OrbaxCheckpoint and kerasmesh read each other's steps", {
  skip_if_no_keras()
  keras <- keras()
  data <- mlp_data()
  dir <- withr::local_tempdir("checkpoint")
  model <- build_mlp()
  cb <- keras$callbacks$OrbaxCheckpoint(dir, save_freq = "epoch",
                                        save_on_background = FALSE)
  model$fit(data$x, data$y, epochs = 2L, batch_size = 16L, shuffle = FALSE,
            verbose = 0L, callbacks = list(cb))
  info <- checkpoint_info(dir)
  expect_identical(info$steps$writer, "orbax")
  expect_true(info$steps$complete)
  restored <- build_mlp()
  expect_identical(restore_checkpoint(restored, dir)$step, 1L)
  expect_identical(max_abs_diff(variable_values(model),
                                variable_values(restored)), 0)
  # And Keras's load_weights() reads kerasmesh's.
  ours <- withr::local_tempdir("checkpoint")
  save_checkpoint(model, ours)
  other <- build_mlp()
  other$load_weights(ours)
  expect_identical(max_abs_diff(variable_values(model),
                                variable_values(other)), 0)
})

# Two processes -------------------------------------------------------------

# launch_local()'s result, one element per worker: the one place that knows
# its shape.
worker_values <- function(res, field = "value") {
  res[[field]]
}

alive_pids <- function(pids) {
  pids[vapply(pids, function(p) isTRUE(tools::pskill(p, 0L)), logical(1))]
}

# One worker of a 2-process run on a 2 x 4 mesh: 3 epochs of 4 steps,
# a checkpoint every 2 steps, saved in the background. With `resume`, it
# starts from the newest complete checkpoint (mid-epoch too) and then also
# trains the same model without interruption, for comparison. Process 1
# kills itself (SIGKILL) after step `kill_at`.
checkpoint_worker <- function(dir, x, y, resume = FALSE, kill_at = 0L) {
  kerasmesh::distributed_initialize(timeout = 60)
  keras <- reticulate::import("keras")
  mesh <- kerasmesh::device_mesh(c(data = 2, model = 4))
  layouts <- kerasmesh::layout_map(
    mesh, ".*dense.*kernel" = c(NA, "model"), ".*dense.*bias" = "model"
  )
  kerasmesh::local_distribution(kerasmesh::model_parallel(
    layouts, batch_dim_name = "data", auto_shard_dataset = FALSE
  ))
  build <- function() {
    keras$utils$set_random_seed(7L)
    model <- keras$Sequential(list(
      keras$Input(shape = list(ncol(x))),
      keras$layers$Dense(64L, activation = "relu", name = "dense"),
      keras$layers$Dense(ncol(y), name = "dense_1")
    ), name = "sequential")
    model$compile(optimizer = keras$optimizers$Adam(0.01), loss = "mse")
    model
  }
  p <- kerasmesh::process_index()
  share <- 8L # each process's part of a global batch of 16
  steps_per_epoch <- nrow(x) %/% 16L
  # This process's rows of global batches first, first + 1, ...
  rows <- function(first = 0L) {
    starts <- seq(first * 16L, nrow(x) - 1L, by = 16L)
    unlist(lapply(starts, function(s) s + p * share + seq_len(share)))
  }
  fit <- function(model, first_batch, epochs, initial_epoch, callbacks) {
    r <- rows(first_batch)
    model$fit(
      kerasmesh::numpy_array(x[r, , drop = FALSE]),
      kerasmesh::numpy_array(y[r, , drop = FALSE]),
      batch_size = share, epochs = epochs, initial_epoch = initial_epoch,
      shuffle = FALSE, verbose = 0L, callbacks = callbacks
    )
  }
  steps <- 0L
  killer <- keras$callbacks$LambdaCallback(
    on_train_batch_end = function(batch, logs) {
      steps <<- steps + 1L
      if (p == 1 && steps == kill_at) {
        tools::pskill(Sys.getpid(), tools::SIGKILL)
      }
    }
  )
  save_every_2 <- kerasmesh::callback_checkpoint(dir, every = 2, unit = "step",
                                                 keep = 2)
  model <- build()
  start <- 0L
  if (resume) {
    start <- kerasmesh::restore_checkpoint(model, dir)$step
  }
  epoch <- start %/% steps_per_epoch
  done <- start %% steps_per_epoch
  if (done > 0) { # finish the epoch the checkpoint was taken in
    fit(model, done, epoch + 1L, epoch, list(save_every_2, killer))
    epoch <- epoch + 1L
  }
  fit(model, 0L, 3L, epoch, list(save_every_2, killer))
  out <- list(start = start, weights = kerasmesh::variable_values(model))
  if (resume) {
    reference <- build()
    fit(reference, 0L, 3L, 0L, list())
    out$reference <- kerasmesh::variable_values(reference)
  }
  out
}
environment(checkpoint_worker) <- globalenv()

test_that("2 processes killed mid-run resume from the last checkpoint", {
  skip_if_no_keras()
  skip_if_not_installed("callr")
  skip_on_os("windows")
  if (length(find.package("kerasmesh", .libPaths(), quiet = TRUE)) == 0) {
    stop("kerasmesh must be installed for worker processes.")
  }
  dir <- withr::local_tempdir("checkpoint")
  data <- shared_mlp_data()

  # Process 1 dies after step 9; saves began at steps 2, 4, 6 and 8. The
  # save of step 8 waited for step 6's, so 6 is complete; 8 was in the
  # background, and may or may not be.
  killed <- launch_local(
    checkpoint_worker, processes = 2, devices_per_process = 4, timeout = 90,
    args = list(dir = dir, x = data$x, y = data$y, kill_at = 9L)
  )
  status <- worker_values(killed, "status")
  expect_identical(status[2], "killed", info = paste(
    utils::tail(unlist(worker_values(killed, "output")), 20), collapse = "\n"
  ))
  expect_true(status[1] != "ok")
  expect_length(alive_pids(worker_values(killed, "pid")), 0)
  info <- checkpoint_info(dir)
  expect_true(info$step %in% c(6L, 8L))
  expect_identical(info$process_count, 2L)

  # Both restart from that step and finish the 12 steps.
  resumed <- launch_local(
    checkpoint_worker, processes = 2, devices_per_process = 4, timeout = 90,
    args = list(dir = dir, x = data$x, y = data$y, resume = TRUE)
  )
  expect_identical(worker_values(resumed, "status"), c("ok", "ok"),
                   info = paste(utils::tail(
                     unlist(worker_values(resumed, "output")), 20
                   ), collapse = "\n"))
  expect_length(alive_pids(worker_values(resumed, "pid")), 0)
  w <- worker_values(resumed)
  expect_identical(c(w[[1]]$start, w[[2]]$start), rep(info$step, 2))
  expect_lte(max_abs_diff(w[[1]]$weights, w[[1]]$reference), 1e-6)
  expect_identical(w[[1]]$weights, w[[2]]$weights)
  final <- checkpoint_info(dir)
  expect_identical(final$steps$step, c(10L, 12L))
  expect_true(final$last_complete)

  # The 2-process checkpoint restores into this single process, 8 x 1.
  here <- with_distribution(mlp_distribution(c(data = 8, model = 1)), {
    build_mlp()
  })
  expect_identical(restore_checkpoint(here, dir)$step, 12L)
  expect_identical(max_abs_diff(w[[1]]$weights, variable_values(here)), 0)
})

test_that("every checkpoint argument check gives a classed argument error", {
  expect_error(save_checkpoint("model", "dir"),
               class = "kerasmesh_error_argument")
  expect_error(save_checkpoint(NULL, "dir"),
               class = "kerasmesh_error_argument")
  expect_error(restore_checkpoint(list(), "dir"),
               class = "kerasmesh_error_argument")
  expect_error(checkpoint_info(c("a", "b")),
               class = "kerasmesh_error_argument")
  expect_error(checkpoint_info(NA_character_),
               class = "kerasmesh_error_argument")
  expect_error(checkpoint_info(""), class = "kerasmesh_error_argument")
  expect_error(checkpoint_info(1), class = "kerasmesh_error_argument")
  expect_error(checkpoint_info("dir", step = -1),
               class = "kerasmesh_error_argument")
  expect_error(checkpoint_info("dir", step = 1.5),
               class = "kerasmesh_error_argument")
  expect_error(checkpoint_info("dir", step = "1"),
               class = "kerasmesh_error_argument")
  expect_error(checkpoint_info("dir", step = c(1, 2)),
               class = "kerasmesh_error_argument")
  expect_error(callback_checkpoint(1), class = "kerasmesh_error_argument")
  expect_error(callback_checkpoint("dir", every = 0),
               class = "kerasmesh_error_argument")
  expect_error(callback_checkpoint("dir", every = NA),
               class = "kerasmesh_error_argument")
  expect_error(callback_checkpoint("dir", keep = 1.5),
               class = "kerasmesh_error_argument")
  expect_error(callback_checkpoint("dir", keep = 0),
               class = "kerasmesh_error_argument")
  expect_error(callback_checkpoint("dir", unit = "batch"),
               class = "rlang_error")
})

test_that("checkpoint functions send the shim expanded paths, by name", {
  sent <- shim_request("checkpoint_info", "~/run/checkpoints", step = 3)
  expect_identical(sent$name, "checkpoint.info")
  expect_identical(sent$args, list(
    directory = path.expand("~/run/checkpoints"), step = 3L
  ))
  sent <- shim_request("callback_checkpoint", "ckpt", every = 2,
                       unit = "step", keep = 3)
  expect_identical(sent$name, "checkpoint.callback")
  expect_identical(sent$args, list(directory = "ckpt", every = 2L,
                                   unit = "step", keep = 3L,
                                   background = TRUE, timeout = 3600))
  expect_identical(shim_request("callback_checkpoint", "ckpt")$args$unit,
                   "epoch")
  sent <- shim_request("restore_checkpoint", model = fake_python_object(),
                       dir = "~/d", weights_only = TRUE, timeout = 5)
  expect_identical(names(sent$args),
                   c("model", "directory", "step", "weights_only", "timeout"))
  sent <- shim_request("save_checkpoint", model = fake_python_object(),
                       dir = "d", background = TRUE)
  expect_identical(names(sent$args),
                   c("model", "directory", "step", "keep", "overwrite",
                     "background", "timeout"))
})
