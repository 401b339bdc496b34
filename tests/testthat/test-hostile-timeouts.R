# layout_cost(timeout =) is wall time from the call (issue 21): whatever
# the builder or its layers do, the call returns a classed timeout error
# within a few seconds of the timeout, and the session stays usable. Each
# case runs in a fresh R session killed after a hard limit.

# Runs `builder` (an expression making a builder in the fresh session)
# through layout_cost(timeout = 3), then a plain layout_cost() there too.
timed_cost <- function(make_builder) {
  in_fresh_r_with(function(make_builder) {
    keras <- reticulate::import("keras")
    plain <- function() {
      keras$Sequential(list(keras$Input(shape = list(4L)),
                            keras$layers$Dense(2L)))
    }
    builder <- make_builder(keras, plain)
    started <- proc.time()[["elapsed"]]
    err <- tryCatch(layout_cost(builder, data_parallel(), batch_size = 8,
                                timeout = 3),
                    error = function(e) e)
    seconds <- proc.time()[["elapsed"]] - started
    after <- layout_cost(plain, data_parallel(), batch_size = 8)
    list(class = class(err), message = conditionMessage(err),
         seconds = seconds, after = class(after))
  }, args = list(make_builder = make_builder), timeout = 90)
}

in_fresh_r_with <- function(fn, args = list(), timeout = 30) {
  testthat::skip_if_not_installed("callr")
  callr::r(function(fn, args) {
    library(kerasmesh)
    simulate_devices(8)
    do.call(fn, args)
  }, args = list(fn = fn, args = args), timeout = timeout)
}

expect_timed_out <- function(out, phase) {
  expect_true("kerasmesh_error_timeout" %in% out$class)
  expect_match(out$message, "took longer than 3 s", fixed = TRUE)
  expect_match(out$message, phase, fixed = TRUE)
  expect_lt(out$seconds, 6)
  expect_true("kerasmesh_layout_cost" %in% out$after)
}

test_that("a builder that never returns (an R loop) times out", {
  skip_if_no_keras()
  out <- timed_cost(function(keras, plain) function() repeat NULL)
  expect_timed_out(out, "building the model")
})

test_that("a builder stuck in Python times out", {
  skip_if_no_keras()
  out <- timed_cost(function(keras, plain) {
    time <- reticulate::import("time")
    function() {
      time$sleep(60)
      plain()
    }
  })
  expect_timed_out(out, "building the model")
})

test_that("a layer that traces slowly times out", {
  skip_if_no_keras()
  out <- timed_cost(function(keras, plain) {
    main <- reticulate::py_run_string(paste(
      "import time, keras",
      "class Slow(keras.layers.Layer):",
      "    def call(self, x):",
      "        time.sleep(60)",
      "        return x",
      sep = "\n"
    ))
    function() {
      keras$Sequential(list(keras$Input(shape = list(4L)),
                            keras$layers$Dense(2L), main$Slow()))
    }
  })
  expect_timed_out(out, "building the model")
})

test_that("a layer that traces slowly only when costed times out", {
  skip_if_no_keras()
  out <- timed_cost(function(keras, plain) {
    main <- reticulate::py_run_string(paste(
      "import time, keras",
      "class SlowLater(keras.layers.Layer):",
      "    calls = 0",
      "    def call(self, x):",
      "        SlowLater.calls += 1",
      "        if SlowLater.calls > 1:",
      "            time.sleep(60)",
      "        return x",
      sep = "\n"
    ))
    function() {
      keras$Sequential(list(keras$Input(shape = list(4L)),
                            keras$layers$Dense(2L), main$SlowLater()))
    }
  })
  expect_timed_out(out, "tracing the step")
})

test_that("a builder in a busy R loop times out", {
  skip_if_no_keras()
  out <- timed_cost(function(keras, plain) {
    function() {
      x <- 0
      while (TRUE) x <- x + 1
    }
  })
  expect_timed_out(out, "building the model")
})

test_that("a timeout leaves no time limit of its own behind", {
  skip_if_no_keras()
  out <- in_fresh_r_with(function() {
    err <- tryCatch(layout_cost(function() repeat NULL, data_parallel(),
                                batch_size = 8, timeout = 1),
                    error = function(e) e)
    started <- proc.time()[["elapsed"]]
    # Longer than the timeout, in R: no "reached elapsed time limit".
    while (proc.time()[["elapsed"]] - started < 2) NULL
    class(err)
  }, timeout = 60)
  expect_true("kerasmesh_error_timeout" %in% out)
})

test_that("an interrupt while the builder waits in Python is an interrupt", {
  skip_if_no_keras()
  rs <- keras_session()
  rs$call(function() {
    keras <- reticulate::import("keras")
    time <- reticulate::import("time")
    builder <- function() {
      time$sleep(60)
      keras$Sequential(list(keras$Input(shape = list(4L))))
    }
    tryCatch(layout_cost(builder, data_parallel(), batch_size = 8),
             interrupt = function(i) "interrupted",
             error = function(e) conditionMessage(e))
  })
  Sys.sleep(3)
  rs$interrupt()
  expect_identical(rs$poll_process(30000), "ready")
  expect_identical(rs$read()$result, "interrupted")
  # The session goes on: the next cost compiles.
  after <- rs$run(function() {
    keras <- reticulate::import("keras")
    cost <- layout_cost(function() {
      keras$Sequential(list(keras$Input(shape = list(4L)),
                            keras$layers$Dense(2L)))
    }, data_parallel(), batch_size = 8)
    class(cost)[1]
  })
  expect_identical(after, "kerasmesh_layout_cost")
})
