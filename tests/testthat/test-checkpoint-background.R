# Background saves, checkpoint_wait(), the lock's timeout, weights-only
# restores and the renamed callback.

# A Python process that holds `dir`'s lock as kerasmesh's writers do
# (flock(), its pid and host written in the file) until it is killed.
hold_lock <- function(dir) {
  code <- paste(
    "import fcntl, json, os, socket, sys, time",
    "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)",
    "fcntl.flock(fd, fcntl.LOCK_EX)",
    paste0("os.write(fd, json.dumps({'pid': os.getpid(), ",
           "'host': socket.gethostname()}).encode())"),
    "print('held', flush=True)",
    "time.sleep(120)",
    sep = "\n"
  )
  p <- processx::process$new(reticulate::py_exe(),
                             c("-c", code, file.path(dir, ".kerasmesh.lock")),
                             stdout = "|")
  lines <- character()
  for (i in 1:200) {
    p$poll_io(100)
    lines <- c(lines, p$read_output_lines())
    if ("held" %in% lines) {
      return(p)
    }
  }
  p$kill()
  stop("The lock holder did not start.")
}

test_that("a background save returns at once and checkpoint_wait() ends it", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  data <- mlp_data()
  model <- train_mlp(build_mlp(), data, epochs = 1L)
  at_save <- variable_values(model)
  saved <- save_checkpoint(model, dir, step = 4, background = TRUE)
  expect_true(saved$pending)
  train_mlp(model, data, epochs = 2L) # training goes on
  done <- checkpoint_wait()
  expect_false(done$pending)
  expect_identical(done$step, 4L)
  expect_null(checkpoint_wait()) # nothing pending: at once
  fresh <- build_mlp()
  expect_identical(restore_checkpoint(fresh, dir)$step, 4L)
  expect_identical(max_abs_diff(at_save, variable_values(fresh)), 0)
})

# In `rs` (a keras_session()): a small model saved as `step` of `dir` in
# the background; the call returns as soon as the arrays are copied.
start_background_save <- function(rs, dir, step) {
  rs$run(function(dir, step) {
    keras <- reticulate::import("keras")
    model <- keras$Sequential(list(
      keras$Input(shape = list(4L)), keras$layers$Dense(2L, name = "dense")
    ), name = "small")
    invisible(save_checkpoint(model, dir, step = step, background = TRUE))
  }, list(dir = dir, step = step))
}

# Whether `dir`'s step `step` is sealed and the directory's lock free,
# while the session that saved it still runs what it was given: this
# process saves step `step + 1` into `dir` with a `timeout` of 30 s,
# which waits for the lock.
sealed_while_busy <- function(rs, dir, step) {
  model <- build_mlp()
  saved <- tryCatch(save_checkpoint(model, dir, step = step + 1,
                                    timeout = 30),
                    error = identity)
  info <- tryCatch(checkpoint_info(dir)$steps, error = function(e) list())
  list(busy = identical(rs$get_state(), "busy"),
       saved = !inherits(saved, "error"),
       steps = info$step, complete = info$complete)
}

# What sealed_while_busy() finds when the save went on meanwhile.
sealed <- list(busy = TRUE, saved = TRUE, steps = 5:6,
               complete = c(TRUE, TRUE))

# A fresh session saves step 5 of a new directory in the background, then
# runs `busy(...)` (R code only); `end(rs)` ends it. Returns what
# sealed_while_busy() found meanwhile, and what `busy` returned.
saved_while <- function(busy, args, end) {
  dir <- withr::local_tempdir("checkpoint")
  rs <- keras_session()
  start_background_save(rs, dir, 5)
  rs$call(busy, args)
  found <- sealed_while_busy(rs, dir, 5)
  end(rs)
  rs$poll_process(60000)
  list(found = found, result = rs$read()$result)
}

test_that("a background save ends while R runs R code, and frees the lock", {
  skip_if_no_keras()
  skip_on_os("windows")
  stop_file <- file.path(withr::local_tempdir(), "stop")
  # R code alone, until `stop` exists: no call into Python meanwhile.
  out <- saved_while(function(stop) {
    started <- Sys.time()
    x <- 0
    while (!file.exists(stop) &&
           difftime(Sys.time(), started, units = "secs") < 120) {
      x <- x + 1
    }
    file.exists(stop)
  }, list(stop = stop_file), function(rs) file.create(stop_file))
  expect_true(out$result)
  expect_identical(out$found, sealed)
})

test_that("a background save ends while R sleeps, and Ctrl-C still works", {
  skip_if_no_keras()
  skip_on_os("windows")
  out <- saved_while(function() {
    tryCatch(Sys.sleep(120), interrupt = function(e) "interrupted")
  }, list(), function(rs) rs$interrupt())
  expect_identical(out$result, "interrupted")
  expect_identical(out$found, sealed)
})

test_that("a background save ends while R's console waits for input", {
  skip_if_no_keras()
  skip_if_no_workers()
  skip_on_os("windows")
  dir <- withr::local_tempdir("checkpoint")
  # An interactive R whose console reads from a pipe: after the save it
  # waits at its prompt, as a user's R does.
  r <- processx::process$new(
    file.path(R.home("bin"), "R"), c("--interactive", "--vanilla", "-q"),
    stdin = "|", stdout = "|", stderr = "2>&1",
    env = c("current", R_LIBS = paste(.libPaths(), collapse = ":"))
  )
  withr::defer(r$kill())
  r$write_input(paste0(
    "library(kerasmesh); simulate_devices(8); ",
    "keras <- reticulate::import('keras'); ",
    "m <- keras$Sequential(list(keras$Input(shape = list(4L)), ",
    "keras$layers$Dense(2L, name = 'dense')), name = 'small'); ",
    "invisible(save_checkpoint(m, ", deparse(dir), ", step = 5, ",
    "background = TRUE)); cat('saved', '\\n')\n"
  ))
  out <- character()
  for (i in 1:600) {
    r$poll_io(100)
    out <- c(out, r$read_output_lines())
    if (any(grepl("^saved", out)) || !r$is_alive()) break
  }
  expect_true(any(grepl("^saved", out)))
  found <- sealed_while_busy(list(get_state = function() {
    if (r$is_alive()) "busy" else "finished"
  }), dir, 5)
  r$write_input("q('no')\n")
  r$wait(30000)
  expect_identical(found, sealed)
})

test_that("Ctrl-C interrupts R and checkpoint_wait() while a save is pending", {
  skip_if_no_keras()
  skip_on_os("windows")
  dir <- withr::local_tempdir("checkpoint")
  rs <- keras_session()
  # A save held pending (its write waits for a gate), so that R's event
  # loop lends Python's lock all along (reticulate before 1.39).
  rs$run(function(dir, held) {
    keras <- reticulate::import("keras")
    model <- keras$Sequential(list(
      keras$Input(shape = list(4L)), keras$layers$Dense(2L, name = "dense")
    ), name = "small")
    save_checkpoint(model, dir, step = 1)
    reticulate::py_run_string(held)
    invisible(save_checkpoint(model, dir, step = 2, background = TRUE))
  }, list(dir = dir, held = held_write_code(600)))
  # `fn` (a function callr runs with no environment of its own) is
  # interrupted while it runs.
  interrupted <- function(fn) {
    rs$call(fn)
    Sys.sleep(stats::runif(1, 0.2, 0.6))
    rs$interrupt()
    rs$poll_process(60000)
    out <- rs$read()
    if (is.null(out$error)) out$result else conditionMessage(out$error)
  }
  results <- character()
  for (i in 1:4) {
    results <- c(
      results,
      interrupted(function() {
        tryCatch({
          x <- 0
          repeat x <- x + 1
        }, interrupt = function(e) "interrupted")
      }),
      interrupted(function() {
        tryCatch(Sys.sleep(60), interrupt = function(e) "interrupted")
      }),
      # reticulate 1.28's SIGINT handler calls R: R could take the
      # interrupt there, and the wait came back as a Python error.
      interrupted(function() {
        tryCatch(checkpoint_wait(), interrupt = function(e) "interrupted",
                 error = function(e) class(e)[[1]])
      })
    )
  }
  expect_identical(unique(results), "interrupted")
  rs$run(function() {
    reticulate::py_run_string("_gate.set(); store.finish_write = _real")
  })
  expect_identical(rs$run(function() checkpoint_wait()$step), 2L)
})

test_that("a failed background save is a classed error at checkpoint_wait()", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  model <- build_mlp()
  save_checkpoint(model, dir, step = 1)
  reticulate::py_run_string(paste(
    "import errno, sys",
    "store = sys.modules['kerasmesh.checkpoint.store']",
    "_real = store.finish_write",
    "def _full(response):",
    "    _real(response)",
    "    raise OSError(errno.ENOSPC, 'No space left on device')",
    "store.finish_write = _full",
    sep = "\n"
  ))
  withr::defer(reticulate::py_run_string("store.finish_write = _real"))
  save_checkpoint(model, dir, step = 2, background = TRUE)
  e <- expect_error(checkpoint_wait(),
                    class = "kerasmesh_error_checkpoint_write")
  expect_match(conditionMessage(e), "No space left on device", fixed = TRUE)
  expect_null(checkpoint_wait())
  expect_identical(checkpoint_info(dir)$steps$step, 1L)
})

test_that("a directory moved during a background save fails it, classed", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  moved <- paste0(dir, "-moved")
  withr::defer(unlink(moved, recursive = TRUE))
  model <- build_mlp()
  save_checkpoint(model, dir, step = 1)
  reticulate::py_run_string(held_write_code(60))
  withr::defer(reticulate::py_run_string("store.finish_write = _real"))
  save_checkpoint(model, dir, step = 2, background = TRUE)
  file.rename(dir, moved)
  reticulate::py_run_string("_gate.set()")
  e <- expect_error(checkpoint_wait(),
                    class = "kerasmesh_error_checkpoint_directory")
  expect_match(conditionMessage(e), "removed, moved or replaced", fixed = TRUE)
  expect_false(file.exists(file.path(dir, "2")))
  # Not recreated, empty, by the save's writers.
  expect_false(dir.exists(dir))
  expect_identical(checkpoint_info(moved)$steps$step, 1L)
  # Orbax's writers ended with the save, rather than waiting minutes for
  # folders that could not be created and failing in a later test.
  expect_identical(live_threads(), "")
})

test_that("a directory removed while Orbax writes fails quietly, classed", {
  skip_if_no_keras()
  skip_if_not_installed("callr")
  dir <- withr::local_tempdir("checkpoint")
  err <- withr::local_tempfile()
  # In a fresh R, whose console is this file: the directory goes while
  # Orbax's threads write, and each of them fails and logs a traceback.
  result <- callr::r(function(dir) {
    library(kerasmesh)
    simulate_devices(8)
    keras <- reticulate::import("keras")
    model <- keras$Sequential(list(
      keras$Input(shape = list(512L)), keras$layers$Dense(1024L, name = "d")
    ), name = "m")
    save_checkpoint(model, dir, step = 1)
    reticulate::py_run_string(paste(
      "import shutil, sys",
      "store = sys.modules['kerasmesh.checkpoint.store']",
      "_real = store.begin_write",
      "def _removed(staging, tree, meta):",
      "    response = _real(staging, tree, meta)",
      sprintf("    shutil.rmtree(%s, ignore_errors=True)", deparse(dir)),
      "    return response",
      "store.begin_write = _removed",
      sep = "\n"
    ))
    save_checkpoint(model, dir, step = 2, background = TRUE)
    tryCatch(checkpoint_wait(), error = function(e) class(e)[[1]])
  }, args = list(dir = dir), stderr = err, timeout = 120)
  expect_identical(result, "kerasmesh_error_checkpoint_directory")
  console <- readLines(err, warn = FALSE)
  expect_false(any(grepl("Traceback|raised an exception", console)))
})

test_that("the callback saves in the background and fit() waits at its end", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  model <- build_mlp()
  cb <- callback_checkpoint(dir, every = 2, unit = "step", keep = 2)
  data <- mlp_data()
  model$fit(data$x, data$y, epochs = 2L, batch_size = 16L, shuffle = FALSE,
            verbose = 0L, callbacks = list(cb))
  expect_null(checkpoint_wait()) # fit() waited for the last save
  info <- checkpoint_info(dir)
  expect_identical(info$steps$step, c(6L, 8L))
  expect_true(all(info$steps$complete))
  fresh <- build_mlp()
  restore_checkpoint(fresh, dir)
  expect_identical(max_abs_diff(variable_values(model),
                                variable_values(fresh)), 0)
})

test_that("a background save killed at any point leaves a complete step", {
  skip_if_no_keras()
  skip_on_os("windows")
  dir <- withr::local_tempdir("checkpoint")
  old <- build_mlp()
  save_checkpoint(old, dir, step = 3)
  old <- variable_values(old)
  # Another model's weights, here and in the process that saves them.
  other_model <- function(keras) {
    keras$utils$set_random_seed(99L)
    model <- keras$Sequential(list(
      keras$Input(shape = list(32L)), keras$layers$Dense(64L, name = "dense"),
      keras$layers$Dense(16L, name = "dense_1")
    ), name = "sequential")
    model$compile(optimizer = "adam", loss = "mse")
    model
  }
  environment(other_model) <- globalenv()
  new <- variable_values(other_model(keras()))
  expect_gt(max_abs_diff(old, new), 0)
  # Those weights over step 3, in the background, killed (SIGKILL) at
  # `point` while R goes on.
  killed_save <- function() {
    keras <- reticulate::import("keras")
    kill_save_at(point, fixtures)
    save_checkpoint(other_model(keras), dir, step = 3, overwrite = TRUE,
                    keep = 1, background = TRUE)
    # R goes on (the save runs meanwhile, on every reticulate), and is
    # killed before the sleep ends.
    Sys.sleep(60)
  }
  survivors <- c(copying = "old", copied = "old", written = "old",
                 hashed = "old", sealed = "old", retired = "new",
                 swapped = "new", pruned = "new")
  for (point in names(survivors)) {
    environment(killed_save) <- list2env(
      list(dir = dir, point = point, fixtures = fixture_path(),
           kill_save_at = kill_save_at, other_model = other_model),
      parent = globalenv()
    )
    killed <- tryCatch(in_fresh_r(killed_save, timeout = 120),
                       error = identity)
    expect_s3_class(killed, "error")
    info <- checkpoint_info(dir)
    expect_identical(info$steps$step, 3L, info = point)
    expect_true(info$steps$complete, info = point)
    restored <- build_mlp()
    restore_checkpoint(restored, dir)
    survivor <- if (survivors[[point]] == "old") old else new
    expect_identical(max_abs_diff(survivor, variable_values(restored)), 0,
                     info = point)
  }
  save_checkpoint(build_mlp(), dir, step = 4)
  expect_identical(sort(list.files(dir, all.files = TRUE, no.. = TRUE)),
                   c(".kerasmesh.lock", "3", "4"))
})

test_that("R finishes a pending background save when it exits", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  save_and_quit <- function() {
    keras <- reticulate::import("keras")
    model <- keras$Sequential(list(
      keras$Input(shape = list(4L)), keras$layers$Dense(2L, name = "dense")
    ), name = "small")
    save_checkpoint(model, dir, step = 7, background = TRUE)$pending
  }
  environment(save_and_quit) <- list2env(list(dir = dir),
                                         parent = globalenv())
  expect_true(in_fresh_r(save_and_quit, timeout = 120))
  info <- checkpoint_info(dir)
  expect_identical(info$steps$step, 7L)
  expect_true(info$steps$complete)
})

test_that("Ctrl-C stops a save waiting for the directory's lock", {
  skip_if_no_keras()
  skip_on_os("windows")
  skip_if_not_installed("callr")
  dir <- withr::local_tempdir("checkpoint")
  holder <- hold_lock(dir)
  withr::defer(holder$kill())
  waiter <- callr::r_bg(function(dir) {
    library(kerasmesh)
    keras <- reticulate::import("keras")
    model <- keras$Sequential(list(
      keras$Input(shape = list(4L)), keras$layers$Dense(2L)
    ))
    cat("waiting\n")
    tryCatch(save_checkpoint(model, dir, timeout = 600),
             interrupt = function(e) "interrupted")
  }, args = list(dir = dir), stdout = "|")
  withr::defer(waiter$kill())
  for (i in 1:600) {
    waiter$poll_io(100)
    if (any(grepl("waiting", waiter$read_output_lines()))) break
  }
  Sys.sleep(2)
  waiter$interrupt()
  waiter$wait(30000)
  expect_false(waiter$is_alive())
  expect_identical(waiter$get_result(), "interrupted")
})

test_that("a lock held by another writer ends in a classed error naming it", {
  skip_if_no_keras()
  skip_on_os("windows")
  dir <- withr::local_tempdir("checkpoint")
  model <- build_mlp()
  holder <- hold_lock(dir)
  withr::defer(holder$kill())
  started <- Sys.time()
  e <- expect_error(save_checkpoint(model, dir, timeout = 1),
                    class = "kerasmesh_error_checkpoint_lock")
  expect_lt(as.numeric(difftime(Sys.time(), started, units = "secs")), 30)
  expect_match(conditionMessage(e), file.path(dir, ".kerasmesh.lock"),
               fixed = TRUE)
  expect_match(conditionMessage(e), paste("process", holder$get_pid()),
               fixed = TRUE)
  expect_snapshot(error = TRUE, save_checkpoint(model, dir, timeout = 0.5),
                  transform = function(lines) {
                    lines <- gsub("/[^ ]*/\\.kerasmesh\\.lock", "<lock>", lines)
                    lines <- gsub("process [0-9]+ on host [^ ,]+",
                                  "process <pid> on host <host>", lines)
                    gsub("held for [0-9]+ s", "held for <n> s", lines)
                  })
  holder$kill()
  expect_identical(save_checkpoint(model, dir, step = 1)$step, 1L)
})

test_that("restore_checkpoint(weights_only = TRUE) leaves the optimizer", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  data <- mlp_data()
  trained <- train_mlp(build_mlp(), data, epochs = 1L)
  save_checkpoint(trained, dir)
  keras <- keras()
  fresh <- build_mlp()
  fresh$compile(optimizer = keras$optimizers$SGD(), loss = "mse")
  e <- expect_error(restore_checkpoint(fresh, dir),
                    class = "kerasmesh_error_checkpoint_variables")
  expect_match(conditionMessage(e), "weights_only = TRUE", fixed = TRUE)
  restored <- restore_checkpoint(fresh, dir, weights_only = TRUE)
  expect_identical(restored$step, 4L)
  expect_identical(max_abs_diff(variable_values(trained),
                                variable_values(fresh)), 0)
  expect_equal(as.vector(r_array(fresh$optimizer$iterations$numpy())), 0)
})

test_that("a quantized model's checkpoint restores into one quantized later", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  saved <- build_mlp()
  saved$quantize("int8")
  train_mlp(saved, mlp_data(), epochs = 1L)
  save_checkpoint(saved, dir)
  # Compiled, its optimizer built for the float kernels, then quantized:
  # its slots are not the saved model's.
  target <- build_mlp()
  target$optimizer$build(target$trainable_variables)
  target$quantize("int8")
  e <- tryCatch(restore_checkpoint(target, dir), error = identity)
  expect_true(any(c("kerasmesh_error_checkpoint_variables",
                    "kerasmesh_error_checkpoint_shape") %in% class(e)))
  expect_match(conditionMessage(e), "Only the optimizer's state differs",
               fixed = TRUE)
  expect_match(conditionMessage(e), "weights_only = TRUE", fixed = TRUE)
  expect_identical(restore_checkpoint(target, dir, weights_only = TRUE)$step,
                   4L)
  expect_identical(max_abs_diff(variable_values(saved),
                                variable_values(target)), 0)
})

test_that("checkpoint_callback() still works, with a deprecation warning", {
  expect_warning(
    expect_error(checkpoint_callback("dir", every = 0),
                 class = "kerasmesh_error_argument"),
    class = "kerasmesh_warning_deprecated"
  )
  expect_snapshot(error = TRUE, checkpoint_callback("dir", keep = 0))
})

test_that("background, weights_only and timeout are checked", {
  expect_snapshot(error = TRUE, {
    save_checkpoint(fake_python_object(), "dir", background = NA)
    save_checkpoint(fake_python_object(), "dir", timeout = 0)
    restore_checkpoint(fake_python_object(), "dir", weights_only = "yes")
    callback_checkpoint("dir", background = c(TRUE, FALSE))
    checkpoint_wait(timeout = -1)
  })
})
