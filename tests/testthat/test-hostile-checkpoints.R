# Checkpoint directories from issue #28's third hostile corpus: files that
# are not what their names say, in a step folder or as the lock. Each step
# is judged on its own (one bad file marks one step incomplete), nothing
# blocks, and what can't be written is a classed error. Whatever could
# hang runs in a fresh R session under a hard time limit.

# Two sealed steps of the tiny MLP in `dir` (1 and 2), from this session.
two_steps <- function(dir) {
  model <- build_mlp()
  save_checkpoint(model, dir, step = 1)
  save_checkpoint(model, dir, step = 2)
  variable_values(model)
}

# `fn` in a fresh R session (in_fresh_r()), seeing `dir` and `mlp()`, a
# stand-alone build_mlp() (the same paths and optimizer).
in_fresh_r_at <- function(fn, dir, timeout = 120) {
  mlp <- function() {
    keras <- reticulate::import("keras")
    keras$utils$set_random_seed(7L)
    model <- keras$Sequential(list(
      keras$Input(shape = list(32L)),
      keras$layers$Dense(64L, activation = "relu", name = "dense"),
      keras$layers$Dense(16L, name = "dense_1")
    ), name = "sequential")
    model$compile(optimizer = keras$optimizers$Adam(0.01, name = "adam"),
                  loss = "mse")
    model
  }
  environment(mlp) <- globalenv()
  environment(fn) <- list2env(list(dir = dir, mlp = mlp),
                              parent = globalenv())
  in_fresh_r(fn, timeout = timeout)
}

for (name in c("kerasmesh_files.json", "_CHECKPOINT_METADATA")) {
  test_that(paste("a FIFO named", name, "blocks no read or save"), {
    skip_if_no_keras()
    skip_on_os("windows")
    dir <- withr::local_tempdir("checkpoint")
    two_steps(dir)
    file <- file.path(dir, "2", name)
    unlink(file)
    expect_identical(system2("mkfifo", file), 0L)
    # Opening the FIFO to read it would wait for a writer forever.
    out <- in_fresh_r_at(function() {
      info <- checkpoint_info(dir)
      fallback <- NULL
      restored <- withCallingHandlers(
        restore_checkpoint(mlp(), dir),
        kerasmesh_warning_checkpoint_fallback = function(w) {
          fallback <<- conditionMessage(w)
          invokeRestart("muffleWarning")
        }
      )
      saved <- save_checkpoint(mlp(), dir, step = 3)
      list(complete = info$steps$complete, problem = info$steps$problem[2],
           restored = restored$step, fallback = fallback, saved = saved$step,
           after = checkpoint_info(dir)$steps$complete)
    }, dir)
    expect_identical(out$complete, c(TRUE, FALSE))
    expect_match(out$problem, "not a regular file", fixed = TRUE)
    expect_identical(out$restored, 1L)
    expect_match(out$fallback, "Step 2 is not usable", fixed = TRUE)
    expect_identical(out$saved, 3L)
    expect_identical(out$after, c(TRUE, FALSE, TRUE))
  })
}

test_that("deeply nested JSON marks one step incomplete, not the directory", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  at_step_1 <- two_steps(dir)
  # Python's JSON reader raises RecursionError on 100,000 open brackets.
  writeLines(paste0(strrep("[", 1e5), strrep("]", 1e5)),
             file.path(dir, "2", "kerasmesh_files.json"))
  info <- within_seconds(checkpoint_info(dir), 60)
  expect_identical(info$steps$step, 1:2)
  expect_identical(info$steps$complete, c(TRUE, FALSE))
  expect_identical(info$step, 1L)
  model <- build_mlp()
  expect_warning(restored <- restore_checkpoint(model, dir),
                 class = "kerasmesh_warning_checkpoint_fallback")
  expect_identical(restored$step, 1L)
  expect_identical(max_abs_diff(at_step_1, variable_values(model)), 0)
  expect_error(restore_checkpoint(model, dir, step = 2),
               class = "kerasmesh_error_checkpoint_incomplete")
  # The other marker, Orbax's, nested as deep.
  writeLines(paste0(strrep("{\"a\":", 1e5), "1", strrep("}", 1e5)),
             file.path(dir, "1", "_CHECKPOINT_METADATA"))
  expect_identical(checkpoint_info(dir)$steps$complete, c(FALSE, FALSE))
  expect_identical(save_checkpoint(model, dir, step = 3)$step, 3L)
})

test_that("a lock path that is a directory is named, not a full disk", {
  skip_if_no_keras()
  dir <- withr::local_tempdir("checkpoint")
  dir.create(file.path(dir, ".kerasmesh.lock"))
  e <- expect_error(save_checkpoint(build_mlp(), dir, timeout = 5),
                    class = "kerasmesh_error_checkpoint_directory")
  expect_match(conditionMessage(e), "is a directory", fixed = TRUE)
  expect_no_match(conditionMessage(e), "space")
  expect_identical(list.files(dir), character())
})

test_that("a file-size limit during a save is a checkpoint write error", {
  skip_if_no_keras()
  skip_on_os("windows")
  dir <- withr::local_tempdir("checkpoint")
  out <- in_fresh_r_at(function() {
    model <- mlp()
    # As `ulimit -f 4` would: a write past 4 KiB fails with EFBIG (and
    # SIGXFSZ, ignored here as Python ignores it).
    signal <- reticulate::import("signal")
    signal$signal(signal$SIGXFSZ, signal$SIG_IGN)
    resource <- reticulate::import("resource")
    resource$setrlimit(resource$RLIMIT_FSIZE, reticulate::tuple(4096L, 4096L))
    e <- tryCatch(save_checkpoint(model, dir, step = 1), error = identity)
    list(class = class(e), message = conditionMessage(e),
         left = list.files(dir, all.files = TRUE, no.. = TRUE))
  }, dir)
  expect_true("kerasmesh_error_checkpoint_write" %in% out$class)
  expect_false("kerasmesh_error_python" %in% out$class)
  expect_match(out$message, "File too large", fixed = TRUE)
  # No staging folder left behind (the lock file may stay).
  expect_false(any(startsWith(out$left, ".kerasmesh-staging")))
  expect_false(any(out$left == "1"))
})
